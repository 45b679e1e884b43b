"""The profile's ``packages.pip`` lines as the plan installs them, each read once: name, extras, specifier and
marker (``profile.requirements.PipLine``), where it was written (``packages.pip[N]``), the stage that installs it,
its GPU extension row (kb/data/extensions.yaml) and, for an sdist-only extension, its source build.

The stage: a line that names a distribution the frameworks themselves require (their recorded Requires-Dist,
``framework_requires.yaml``, followed through the dependencies the KB has rows of: ``framework_closure``) goes to
the **environment** stage, resolved together with the frameworks' pins, so that ``protobuf==4.21.12`` beside
TensorFlow 2.12 (which allows ``>=3.20.3,<5``) is one resolution and not a second install that moves a package the
frameworks already hold. The tools of the environment's venv (``VENV_TOOLS``: pip, setuptools, wheel) go there too:
installed as extras they would be constrained by the venv's own version (the extras step takes the environment's
versions as constraints), so ``setuptools<81`` or ``setuptools==65.5.0`` would fail the build while the environment's
pip installs them as asked; a range the frameworks' own Requires-Dist cannot meet is check's error
(``pkg-requires-conflict``), naming both. The **extras** stage holds what the frameworks do not need; an sdist-only
extension package is built in a **source build** stage of its own.

A line the base image satisfies (``base_provides.packages`` names the distribution, and the version the base holds is
inside the line's specifier) is in the **base** stage: nothing installs it, so nothing downloads it (the classic
builder's host download, the BuildKit build, the wheelhouse, the lock); the smoke test checks the base's version.
A line with extras is installed as written (the extras' own requirements are not the base's), and a line the base's
version does not satisfy is refused (:func:`provided_conflicts`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from envgen.kb import KnowledgeBase
from envgen.kb.extensions import satisfies
from envgen.kb.pypackages import FrameworkRequires, Requirement
from envgen.plan.extensions import Extension, SourceBuild, extension_of
from envgen.plan.refusals import Refused, refusal
from envgen.profile import Profile
from envgen.profile.requirements import PipLine, canonical

# What `python3 -m venv` may put into the environment besides the interpreter (ensurepip: pip, and setuptools before
# Python 3.12; https://docs.python.org/3/library/venv.html), and wheel, which the build tools of sdists use.
VENV_TOOLS = frozenset({"pip", "setuptools", "wheel"})

Stage = Literal["environment", "extras", "source build", "base"]


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
    provided: str | None = None  # the version the base holds of its distribution (base_provides.packages)

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
    """The distributions the frameworks' pins require on the image's Python, and the frameworks themselves: their
    recorded Requires-Dist (with the extras the pins name), then, offline, the recorded Requires-Dist of what those
    require where the KB has rows of it (TensorFlow 2.12 requires ``jax>=0.3.15``, whose releases require ``scipy``):
    every release inside the requirement's specifier with wheels for this Python counts, so the set is what any
    resolution could bring (a name too many costs a cached layer; a name too few, a resolution that cannot hold)."""
    names: set[str] = set()
    todo: list[Requirement] = []
    for pin in framework_pins:
        name, extras, version = split_pin(pin)
        names.add(name)
        row = kb.requires_of(name, version, version.partition("+")[2] or None if name == "torch" else None)
        todo += row.active(python_minor, extras) if row is not None else []
    rows = _rows_by_distribution(kb)
    while todo:
        req = todo.pop()
        if req.name in names:
            continue
        names.add(req.name)
        for row in rows.get(req.name, ()):
            if python_minor in row.python and satisfies(row.version, req.spec):
                todo += row.active(python_minor, frozenset())
    return frozenset(names)


def _rows_by_distribution(kb: KnowledgeBase) -> dict[str, list[FrameworkRequires]]:
    out: dict[str, list[FrameworkRequires]] = {}
    for row in kb.framework_requires:
        out.setdefault(row.distribution, []).append(row)
    return out


def plan_requirements(profile: Profile, lines: Sequence[PipLine], kb: KnowledgeBase, framework_pins: Sequence[str],
                      build_of: Callable[[Extension], SourceBuild | None]) -> tuple[PlannedRequirement, ...]:
    """Every ``packages.pip`` line (``lines``: read once, ``Stack.pip_lines``) with its stage; ``build_of``: the
    source build an extension gets, if any."""
    closure = framework_closure(kb, framework_pins, profile.python_minor) if framework_pins else frozenset()
    held = profile.base_packages
    out = []
    for index, (spec, line) in enumerate(zip(profile.packages.pip, lines, strict=True)):
        applies = line.applies(profile.python_version)
        ext = extension_of(line, kb) if applies else None
        provided = held.get(line.name)
        in_base = applies and provided is not None and not line.extras and held_in(line.specifier, provided)
        build = build_of(ext) if ext is not None and not in_base else None
        stage: Stage = ("base" if in_base else "source build" if build is not None
                        else "environment" if applies and (line.name in closure or line.name in VENV_TOOLS)
                        else "extras")
        out.append(PlannedRequirement(spec, line, f"packages.pip[{index}]", applies, stage, ext, build, provided))
    return tuple(out)


def provided_conflicts(requirements: Iterable[PlannedRequirement]) -> list[Refused]:
    """The packages.pip lines (whose marker holds) naming a distribution the base holds at a version outside the
    line: installing the line would replace the base's copy, and the smoke test would check a version the image
    does not hold (``plan.refusals``: base-provides-conflict; check reports it, the render refuses it)."""
    refusal("base-provides-conflict")
    return [Refused(
        "base-provides-conflict",
        f"{r.origin} {r.spec!r} asks for a version of {r.name} the base does not hold (base_provides.packages: "
        f"{r.name} {r.provided})",
        f"write the base's version in the line ({r.line.raw_name}{r.line.extras_text}=={r.provided}), or correct "
        f"base_provides.packages.{r.name} to the version the base holds")
        for r in requirements if r.applies and r.provided is not None and not held_in(r.specifier, r.provided)]


def held_in(specifier: str, held: str) -> bool:
    """Does the version a base holds satisfy a line's specifier, as pip judges it (``packaging``: a post-release
    is not its release, ``==0.0.22`` leaves out ``0.0.22.post7``; a local label such as ``+cu124`` on the held
    version matches a public specifier)? Imported only for a profile on a base that holds packages."""
    if not specifier:
        return True
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        return Version(held) in SpecifierSet(specifier, prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return False


def depends_on(pip_output: str, name: str) -> str:
    """pip's line naming what asked for ``name`` in a ResolutionImpossible (``asttokens 2.4.1 depends on
    six>=1.12.0``), or "" when it gives none."""
    found = re.search(rf"^\s*(\S+ \S+ depends on {re.escape(name)}(?![A-Za-z0-9_.-]).*)$", pip_output,
                      re.IGNORECASE | re.MULTILINE)
    return found.group(1).strip() if found else ""


def base_conflict(name: str, held: str, why: str) -> tuple[str, str]:
    """(message, fix) for a packages.pip line whose dependencies need another version of a distribution a
    base_provides base holds (``why``: what asked for it, as the resolver said or the KB records it). The build
    scripts say the same (lib-pip.sh ``envgen_base_conflict``); the lock and check say it with this."""
    return (f"a packages.pip line needs another version of {name} than the base holds (base_provides: {name} "
            f"{held})" + (f": {why}" if why else ""),
            f"pin a release of that line's package whose requirements accept {name} {held}, or build on a base that "
            "holds the version it needs and write that version in the profile's base_provides")
