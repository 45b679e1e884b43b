"""Rows of ``recipes.yaml``: the torch wheel pins `envgen suggest` writes into profiles (strict models, sourced)."""

from __future__ import annotations

from dataclasses import field
from pathlib import Path
from typing import Annotated

import yaml

from envgen.errors import KnowledgeBaseError
from envgen.kb.versions import vtuple
from envgen.records import Length, Record


class _Row(Record):
    source: Annotated[str, Length(min=4)]
    unverified: bool = False


class TorchWheels(_Row):
    """The nvidia-cudnn pins of torch releases [since, until) whose CUDA builds depend on NVIDIA's PyPI wheels (the
    cuDNN major is the knowledge base's: ``framework_libraries``)."""

    since: str
    until: str | None = None
    cudnn_pins: dict[str, str] = field(default_factory=dict)  # CUDA minor -> nvidia-cudnn-cuXX version

    def covers(self, version: str) -> bool:
        v = vtuple(version)
        return v >= vtuple(self.since) and (self.until is None or v < vtuple(self.until))

    def pin(self, cuda: str) -> str | None:
        return self.cudnn_pins.get(cuda)

    def cite(self) -> str:
        return f"suggest/recipes.yaml#torch_wheels:{self.since}-{self.until or ''}: {self.source}"


class FirstRelease(_Row):
    series: str
    version: str


class Recipes(Record):
    torch_wheels: list[TorchWheels]
    tensorflow_first_release: list[FirstRelease]

    def torch_wheels_for(self, version: str) -> TorchWheels | None:
        return next((r for r in self.torch_wheels if r.covers(version)), None)

    def tf_version(self, series: str) -> str:
        """The first release of a TensorFlow series that was published on PyPI."""
        row = next((r for r in self.tensorflow_first_release if r.series == series), None)
        return row.version if row else f"{series}.0"


def load_recipes(path: Path | None = None) -> Recipes:
    path = path or Path(__file__).resolve().parent / "recipes.yaml"
    from pydantic import ValidationError

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return Recipes.model_validate(yaml.load(path.read_text(encoding="utf-8"), Loader=loader))
    except (ValidationError, yaml.YAMLError) as exc:
        raise KnowledgeBaseError(f"{path.name}: {' '.join(str(exc).split())[:300]}") from exc
