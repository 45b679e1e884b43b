"""The project a pyproject.toml or setup.py describes is itself no requirement on an index: said once, with the ways
to have it in the image."""

from __future__ import annotations

from envgen.layout import WORKSPACE
from envgen.suggest.adopt.model import Origin, Read

LOCAL = ("the project itself must be copied in: envgen builds the environment it needs, not the project (mount it at "
         f"run time, `envgen run` does so at {WORKSPACE}, and `pip install -e .` there, or build a wheel with "
         "`pip wheel .`, put it in mirrors.wheelhouse and pin it with ==)")


def note_project(read: Read, origin: Origin, name: str | None) -> None:
    shown = f"the project {name!r}" if name else "the project"
    read.notes.append(f"{origin}: {shown} is not installed: {LOCAL}")
