"""The names under which a profile lists a framework in ``packages:`` (framework_distributions.yaml): the pip
distributions lifted into ``frameworks:``, the conda packages refused for the pip wheels, and the framework packages
envgen refuses. ``FrameworkNames`` is what ``envgen.profile.normalise`` reads: handed over from the knowledge base
by ``load_profile``, or read from this one file (``read_framework_names``) for a Profile made in code, whose
validation loads no knowledge base."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

from envgen.kb.models import Row

FILE = "framework_distributions.yaml"
FIELDS = Literal["tensorflow", "pytorch", "torchvision", "torchaudio"]


class _Named(Row):
    FILE: ClassVar[str] = FILE
    name: str  # PEP 503 name, with the extra where the extra makes the distribution (tensorflow[and-cuda])

    @property
    def key(self) -> str:
        return self.name


class FrameworkPip(_Named):
    """A pip distribution that is a framework: moved from packages.pip to ``frameworks.<field>``."""

    field: FIELDS
    package: str | None = None  # the frameworks.tensorflow_package it sets


class FrameworkConda(_Named):
    """A conda package that is a framework: refused, naming ``frameworks.<field>``."""

    field: FIELDS


class FrameworkRefused(_Named):
    """A framework package envgen does not model: refused wherever a profile lists it, or, a ``conda_build`` row,
    only in packages.conda (conda's build of what envgen models as a pip wheel), with ``fix``: the way in."""

    conda_build: bool = False
    reason: str
    fix: str | None = None


@dataclass(frozen=True)
class FrameworkNames:
    """Look-ups by name: pip distribution -> (frameworks field, tensorflow_package or None); conda package ->
    frameworks field; refused names -> reason (``unmodelled``, anywhere) or (reason, fix) (``conda_as_pip``)."""

    pip: dict[str, tuple[str, str | None]]
    conda: dict[str, str]
    unmodelled: dict[str, str]
    conda_as_pip: dict[str, tuple[str, str]]


def framework_names(pip: list[FrameworkPip], conda: list[FrameworkConda],
                    refused: list[FrameworkRefused]) -> FrameworkNames:
    return FrameworkNames(
        pip={r.name: (r.field, r.package) for r in pip},
        conda={r.name: r.field for r in conda},
        unmodelled={r.name: r.reason for r in refused if not r.conda_build},
        conda_as_pip={r.name: (r.reason, r.fix or "") for r in refused if r.conda_build},
    )


def read_framework_names(data_dir: Path | None = None) -> FrameworkNames:
    """The tables from framework_distributions.yaml alone (a few rows; no other file of the KB is read)."""
    import yaml

    from envgen.paths import kb_data_dir

    path = (data_dir or kb_data_dir()) / FILE
    doc = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return framework_names([FrameworkPip.model_validate(r) for r in doc["framework_pip"]],
                           [FrameworkConda.model_validate(r) for r in doc["framework_conda"]],
                           [FrameworkRefused.model_validate(r) for r in doc["framework_refused"]])
