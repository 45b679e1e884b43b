"""Rows of ``names.yaml``: conda packages whose meaning changes with the installer (strict, sourced)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from envgen.records import Record


class _Row(Record):
    name: str
    source: str


class PypiName(_Row):
    pypi: str


@dataclass(frozen=True)
class CondaNames:
    cuda: frozenset[str]  # carry the CUDA user space: their version is the CUDA the environment targets
    pypi: dict[str, str]  # conda name -> PyPI distribution
    not_python: frozenset[str]
    selectors: frozenset[str]  # select a conda build of the framework: left out


def load_names(path: Path | None = None) -> CondaNames:
    import yaml

    doc = yaml.safe_load((path or Path(__file__).resolve().parent / "names.yaml").read_text(encoding="utf-8"))
    return CondaNames(cuda=frozenset(_Row.model_validate(r).name for r in doc["cuda"]),
                      pypi={(p := PypiName.model_validate(r)).name: p.pypi for r in doc["pypi"]},
                      not_python=frozenset(_Row.model_validate(r).name for r in doc["not_python"]),
                      selectors=frozenset(_Row.model_validate(r).name for r in doc["selectors"]))
