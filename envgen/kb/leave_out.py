"""Rows of ``leave_out.yaml``: what a runtime image may leave out of its Python environment because nothing loads it
at runtime (tests inside site-packages, documentation, static libraries, headers), each with the ``find -path``
patterns it removes, why that is safe and where that is documented, and the paths kept where a package does load
them (``keep``: torch's headers for its JIT extensions, astropy's tests package it imports). A row with
``leave_out: false`` records a decision to keep something, with its evidence (bytecode caches). Read by
``plan.slim``; written by hand from the sources each row names."""

from __future__ import annotations

from dataclasses import field
from typing import ClassVar, Literal

from envgen.kb.models import Row, Source
from envgen.records import Record


class KeptPath(Record):
    """A path a package loads at runtime, kept although the rule's pattern matches it."""

    path: str  # a `find -path` pattern relative to the environment's root
    why: str
    source: Source
    # True: what reads the path is a C/C++ compiler (torch's JIT extensions and inductor, triton's launcher), so it
    # is kept only in an image that holds one (``plan.slim`` and templates/sh/slim.sh decide)
    compiler: bool = False


class LeaveOut(Row):
    FILE: ClassVar[str] = "leave_out.yaml"

    name: str  # "tests", "static-libraries", ...
    kind: Literal["d", "f"]  # what the patterns match: directories (removed whole) or files
    paths: list[str]  # `find -path` patterns relative to the environment's root (``*`` also matches "/")
    leave_out: bool = True  # False: a decision to keep, with its evidence in ``why``
    why: str
    keep: list[KeptPath] = field(default_factory=list)

    @property
    def key(self) -> str:
        return self.name
