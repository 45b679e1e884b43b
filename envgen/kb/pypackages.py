"""Rows of the Python-package layer: pairs of packages that break at run time although their metadata allows
them, or that the metadata forbids (``python_packages.yaml``, written from the frameworks' trackers and release
notes), and the frameworks' own ``Requires-Dist`` (``framework_requires.yaml``, read from PyPI's metadata by
``tools.kbrefresh.requires``)."""

from __future__ import annotations

import re
import sys
from dataclasses import field
from typing import Annotated, Any, ClassVar, Literal, NamedTuple

from envgen.kb.models import Row, Ver
from envgen.kb.specifiers import Specifier
from envgen.records import Check, Lax, Length, Matches, Record

# a release as PyPI spells it: 2.15.1, 2.15.0.post1, 1.0rc1
Release = Annotated[str, Matches(re.compile(r"^\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?$"), "release number")]


class Side(Record):
    """One side of a pair: any of these distributions (PEP 503 names) at a version the specifier admits."""

    names: Annotated[list[str], Length(min=1)]
    versions: Specifier = ""  # PEP 440 specifier such as "<2.12"; empty: any version


class Unpinned(Record):
    """pip installs the newest release of an unpinned `other`, and on Python >= ``python_min`` today's newest lies
    in ``other.versions``: an unpinned `other` gets a warning, and ``pin`` (outside the range) is the way out."""

    python_min: Ver = "3.0"
    pin: Annotated[str, Matches(re.compile(r"^[a-z0-9][a-z0-9.-]*==[0-9][0-9a-z.]*$"), "exact pin (name==version)")]


class Trial(Record):
    """One run or read a row's witness rests on (``tools.kbrefresh.witness`` carries it out and records what it
    saw in ``tools/kbrefresh/upstream/witnesses.yaml``). ``install``: exact pins put into a fresh venv by uv, then
    ``run`` (Python code, ``python -c``) in it; ``wheel`` + ``member``: a file read out of that release's wheel on
    PyPI (by range requests): ``find`` is searched in it (present or not, as ``found`` says), or with ``run`` the
    member is written beside the code that imports it. ``result``: what the trial shows: the pair ``breaks`` when
    used, pip (uv) ``refused`` to install it, it ``works``, or (resolved only, for a Python this machine lacks) it
    ``installs``."""

    result: Literal["breaks", "refused", "works", "installs"]
    install: list[Annotated[str, Matches(re.compile(r"^[a-z0-9][a-z0-9.-]*==[0-9][0-9a-z.]*$"), "exact pin")]] = \
        field(default_factory=list)
    run: str = ""
    python: str = ""  # resolve only (uv pip compile) for this CPython minor on Linux x86_64: refused or installs
    wheel: Annotated[str, Matches(re.compile(r"^([a-z0-9][a-z0-9.-]*==[0-9][0-9a-z.]*)?$"), "exact pin")] = ""
    member: str = ""  # a path inside the wheel
    find: str = ""
    found: bool = True
    expect: str = ""  # text the output holds (breaks: by default the first line of the row's `error`)

    @property
    def key(self) -> str:
        """What identifies the trial in the recorded witnesses."""
        parts = [" ".join(self.install), f"resolve for Python {self.python}" if self.python else "",
                 f"{self.wheel}:{self.member}" if self.wheel else "",
                 f"find {self.find!r}" if self.find else "", f"run {self.run!r}" if self.run else ""]
        return " | ".join(p for p in parts if p)

    def pins(self) -> dict[str, str]:
        """Each distribution the trial puts in place, with its version (the wheel read counts as installed)."""
        out = dict(p.split("==") for p in self.install)
        if self.wheel:
            name, version = self.wheel.split("==")
            out[name] = version
        return out


class PackageBreak(Row):
    FILE: ClassVar[str] = "python_packages.yaml"

    id: str
    # runtime: the metadata allows the pair and it fails when used; ceiling: a limit the metadata (or the
    # project's own notes) states, so pip refuses the pair or a careful install avoids it; notice: works, but
    # behaves differently from what code written for older releases expects
    kind: Literal["runtime", "ceiling", "notice"]
    package: Side
    other: Side | None = None
    other_absent: bool = False  # the break needs `other` to be missing, not present
    same_series: bool = False  # the break is `other` on another major.minor than `package`
    env: dict[str, str] = field(default_factory=dict)  # environment values (the profile's `env:`) the break needs
    unpinned: Unpinned | None = None
    shows: str  # when it fails: "import tensorflow", "loading a Keras .h5 file"
    error: str  # the error text users see, as recorded in the source
    fix: str
    notes: str = ""
    # the runs and reads that show the break and its boundaries (the last release that breaks, the first that
    # works, on each side); what they saw is recorded in tools/kbrefresh/upstream/witnesses.yaml
    witness: list[Trial] = field(default_factory=list)

    @property
    def key(self) -> str:
        return self.id


class Requirement(NamedTuple):
    """One Requires-Dist line. A named tuple, not a model: the table holds ~7,000 of them, and a tuple
    unpickles from the KB cache ~20x faster than a pydantic model (check's budget is 0.3 s)."""

    name: str
    spec: Specifier = ""
    extra: str = ""  # the extra that brings it ("and-cuda"); empty: always
    python: list[str] = []  # noqa: RUF012 (never mutated) the CPython minors its marker holds for; empty: all

    def as_dict(self) -> dict[str, object]:
        """The row as the data file writes it (defaults left out)."""
        defaults = self._field_defaults
        return {k: v for k, v in self._asdict().items() if k not in defaults or v != defaults[k]}


def _shared_strings(value: Any) -> Any:
    """One string object per distinct name, specifier and Python minor: the KB cache's pickle then stores each
    once (half the size, a third of the load time)."""
    if not isinstance(value, list):
        return value
    return [{k: (sys.intern(v) if isinstance(v, str) else [sys.intern(p) for p in v] if isinstance(v, list)
                 else v) for k, v in item.items()} if isinstance(item, dict) else item for item in value]


class FrameworkRequires(Row):
    FILE: ClassVar[str] = "framework_requires.yaml"

    distribution: str
    version: Release
    build: str | None = None  # torch: the CUDA build (cu121) its nvidia-* pins belong to
    # read from the release's sdist (PyPI serves no wheel of it), not from a wheel's core metadata
    sdist: bool = False
    python: list[str]
    # lax for the named tuples (a mapping per line); the tuple's own fields and extra keys are still checked
    requires: Annotated[tuple[Requirement, ...], Lax(), Check(_shared_strings, mode="before")]

    @property
    def key(self) -> str:
        return f"{self.distribution}=={self.version}" + (f"+{self.build}" if self.build else "")

    @property
    def read_from(self) -> str:
        """Where its Requires-Dist was read, as findings say it: "its wheel's" or "its sdist's"."""
        return "its sdist's" if self.sdist else "its wheel's"

    def active(self, python: str, extras: frozenset[str]) -> list[Requirement]:
        """The requirements that hold for a CPython minor with these extras."""
        return [r for r in self.requires
                if (not r.extra or r.extra in extras) and (not r.python or python in r.python)]


class PipName(Row):
    """A distribution name users write that does not install what they mean (``pip_names.yaml``): PyPI's
    placeholder ``pytorch``, the import name ``cv2``, a name PyPI has no release of."""

    FILE: ClassVar[str] = "pip_names.yaml"
    name: str  # PEP 503, as written: "pytorch", "scikitlearn"
    use: str  # the distribution meant: "torch", "scikit-learn"
    severity: Literal["error", "warning"]  # error: pip fails (a stub that raises, no such release); warning: works
    why: str  # what PyPI has under the name

    @property
    def key(self) -> str:
        return f"pip_names.{self.name}"


class CommonPipNames(Row):
    """Distribution names a did-you-mean compares an unknown name with, beside the ones the KB's tables name."""

    FILE: ClassVar[str] = "pip_names.yaml"
    names: Annotated[list[str], Length(min=1)]

    @property
    def key(self) -> str:
        return "common_pip_names"
