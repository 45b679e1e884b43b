"""The profile's ``packages.pip`` lines as the plan installs them, each read once: name, extras, specifier and
marker (``profile.requirements.PipLine``), where it was written (``packages.pip[N]``), the stage that installs it,
its GPU extension row (kb/data/extensions.yaml) and, for an sdist-only extension, its source build.

The stage: a line that names a distribution the frameworks themselves require (their recorded Requires-Dist,
``framework_requires.yaml``) goes to the **environment** stage, resolved together with the frameworks' pins, so that
``protobuf==4.21.12`` beside TensorFlow 2.12 (which allows ``>=3.20.3,<5``) is one resolution and not a second
install that moves a package the frameworks already hold. The **extras** stage holds what the frameworks do not
need; an sdist-only extension package is built in a **source build** stage of its own."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from envgen.kb import KnowledgeBase
from envgen.plan.extensions import Extension, SourceBuild, extension_of
from envgen.profile import Profile
from envgen.profile.requirements import PipLine, canonical

Stage = Literal["environment", "extras", "source build"]


@dataclass(frozen=True)
class PlannedRequirement:
    """One ``packages.pip`` line, read once, with what the plan decided for it."""

    spec: str  # as the profile writes it (what requirements files get; pip evaluates its marker)
    line: PipLine
    origin: str  # where it was written: "packages.pip[2]"
    applies: bool  # its marker holds in the image (CPython on Linux x86-64, the profile's Python)
    stage: Stage
    extension: Extension | None = None  # its row in extensions.yaml, for an exact pin of a GPU extension package
    source_build: SourceBuild | None = None  # its build from the sdist (stage "source build")

    @property
    def name(self) -> str:
        return self.line.name

    @property
    def extras(self) -> tuple[str, ...]:
        return self.line.extras

    @property
    def specifier(self) -> str:
        return self.line.specifier

    @property
    def marker(self) -> str | None:
        return self.line.marker


def split_pin(pin: str) -> tuple[str, frozenset[str], str]:
    """(PEP 503 name, extras, version) of a framework pin the plan wrote: ``tensorflow[and-cuda]==2.15.1`` ->
    ("tensorflow", {"and-cuda"}, "2.15.1"); the version keeps a local label (``2.1.2+cu118``)."""
    head, _, version = pin.partition("==")
    name, _, extras = head.partition("[")
    return canonical(name), frozenset(canonical(e) for e in extras.rstrip("]").split(",") if e), version


def framework_closure(kb: KnowledgeBase, framework_pins: Iterable[str], python_minor: str) -> frozenset[str]:
    """The distributions the frameworks' pins require on the image's Python (their recorded Requires-Dist, with
    the extras the pins name), and the frameworks themselves."""
    names: set[str] = set()
    for pin in framework_pins:
        name, extras, version = split_pin(pin)
        names.add(name)
        local = version.partition("+")[2] or None
        row = kb.requires_of(name, version, local if name == "torch" else None)
        for req in row.requires if row is not None else ():
            if (not req.extra or req.extra in extras) and (not req.python or python_minor in req.python):
                names.add(req.name)
    return frozenset(names)


def plan_requirements(profile: Profile, lines: Sequence[PipLine], kb: KnowledgeBase, framework_pins: Sequence[str],
                      build_of: Callable[[Extension], SourceBuild | None]) -> tuple[PlannedRequirement, ...]:
    """Every ``packages.pip`` line (``lines``: read once, ``Stack.pip_lines``) with its stage; ``build_of``: the
    source build an extension gets, if any."""
    closure = framework_closure(kb, framework_pins, profile.python_minor) if framework_pins else frozenset()
    out = []
    for index, (spec, line) in enumerate(zip(profile.packages.pip, lines, strict=True)):
        applies = line.applies(profile.python_version)
        ext = extension_of(line, kb) if applies else None
        build = build_of(ext) if ext is not None else None
        stage: Stage = ("source build" if build is not None
                        else "environment" if applies and line.name in closure else "extras")
        out.append(PlannedRequirement(spec, line, f"packages.pip[{index}]", applies, stage, ext, build))
    return tuple(out)
