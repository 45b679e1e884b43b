"""The combined set: the Requires-Dist the knowledge base records (``framework_requires.yaml``, read from the
wheels, or from the sdist of a release PyPI has no wheel of) for every distribution pip installs into the image,
intersected per distribution they require, offline.

pip installs one release of each distribution; when two requirements on one name admit no common release (torch
2.6.0's ``typing-extensions>=4.10.0`` against TensorFlow 2.13.0's ``typing-extensions<4.6.0,>=3.6.6``) the resolver
refuses the set (ResolutionImpossible), whatever else is pinned. Exact pins are the narrowest case of the same
test. A distribution the plan itself pins is judged against each requirement by ``packages.requires.framework_requires``
(the pin is the release); here only the names pip has to choose.

An exact pin must also exist for the image's Python: ``unserved`` reads ``pinned_releases.yaml`` (what PyPI serves of
each release the rows pin exactly) and names the pins pip finds nothing of.

The entry points are small so that `envgen suggest` can ask before it ranks a candidate: ``stated`` (who requires
what), ``conflicts`` / ``among`` (the names no release satisfies), ``unserved`` (the pins PyPI lacks) and
``meeting`` (the recorded releases that would do).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from envgen.check.packages.installs import Installed
from envgen.kb import KnowledgeBase
from envgen.kb.indexed import PinnedRelease
from envgen.kb.pypackages import FrameworkRequires, Requirement
from envgen.kb.specifiers import exact, overlaps
from envgen.kb.versions import vtuple

# The requirements a torch wheel takes from its CUDA build, not its release: PyTorch's binary build matrix adds
# them per CUDA variant (PYTORCH_EXTRA_INSTALL_REQUIREMENTS in pytorch/.github/scripts/
# generate_binary_build_matrix.py: the nvidia-* wheels, cuda-toolkit / cuda-bindings, triton). A build whose own
# wheel is not recorded (download.pytorch.org's cu118, cpu) is judged on the rest of its release's row.
_BUILD_TIED = re.compile(r"^(nvidia-.*|cuda-.*|triton|pytorch-triton.*)$")
_ORIGINS = frozenset({"frameworks", "packages.pip"})  # what pip installs, with the metadata of its wheel


@dataclass(frozen=True)
class Stated:
    """One requirement of one installed distribution, with the recorded row it was read from."""

    by: Installed
    req: Requirement
    row: FrameworkRequires
    partial: bool = False  # read from another build's row of the release: the build's own pins left out

    @property
    def text(self) -> str:
        return f"{self.req.name}{self.req.spec}"

    def said(self) -> str:
        """"typing-extensions>=4.10.0 (torch==2.6.0+cu124's Requires-Dist)"."""
        extra = f", extra {self.req.extra}" if self.req.extra else ""
        return f"{self.text} ({self.by.label}'s Requires-Dist{extra})"


@dataclass(frozen=True)
class Conflict:
    """Requirements on one distribution that no release meets together (the first two that disagree)."""

    name: str
    a: Stated
    b: Stated

    @property
    def exact(self) -> bool:
        return exact(self.a.req.spec) is not None and exact(self.b.req.spec) is not None


def row_of(kb: KnowledgeBase, item: Installed) -> tuple[FrameworkRequires, bool] | None:
    """The recorded Requires-Dist of what pip installs for ``item`` (its row, and whether only the release's part
    of another build's row holds), else None."""
    if item.origin not in _ORIGINS:
        return None
    if item.name != "torch" or item.build in (None, "unknown"):
        row = kb.requires_of(item.name, item.version)  # torch without a label: PyPI's own build
        return (row, False) if row is not None else None
    own = kb.requires_of(item.name, item.version, item.build)
    if own is not None and own.build == item.build:
        return own, False
    other = kb.requires_of(item.name, item.version)
    return (other, True) if other is not None else None


def read(kb: KnowledgeBase, item: Installed, python: str) -> tuple[FrameworkRequires, list[Stated]] | None:
    """``item``'s recorded row and the requirements it holds for this CPython minor with the item's extras."""
    found = row_of(kb, item)
    if found is None:
        return None
    row, partial = found
    return row, [Stated(item, req, row, partial) for req in row.active(python, item.extras)
                 if not (partial and _BUILD_TIED.match(req.name))]


def stated(kb: KnowledgeBase, items: Iterable[Installed], python: str) -> list[Stated]:
    """Every requirement the recorded rows of ``items`` hold for this CPython minor, with the items' extras."""
    return [s for item in items for s in (read(kb, item, python) or (None, []))[1]]


def conflicts(kb: KnowledgeBase, items: Iterable[Installed], python: str) -> list[Conflict]:
    """The distributions pip must choose whose stated requirements admit no release, one per name."""
    items = list(items)
    return among(stated(kb, items, python), {item.name for item in items})


Disjoint = Callable[[list[Stated]], "tuple[int, int] | None"]


def among(said: list[Stated], pinned: set[str], disjoint: Disjoint | None = None) -> list[Conflict]:
    """The conflicts of requirements already read (``stated``), leaving out the names ``pinned`` (the plan's own
    pins: ``packages.requires.framework_requires`` judges those); ``disjoint``: ``first_disjoint`` or a memo of it."""
    by_name: dict[str, list[Stated]] = {}
    for s in said:
        if s.req.name not in pinned:
            by_name.setdefault(s.req.name, []).append(s)
    out = []
    for name, group in by_name.items():
        pair = (disjoint or first_disjoint)(group) if len(group) > 1 else None
        if pair is not None:
            out.append(Conflict(name, group[pair[0]], group[pair[1]]))
    return out


def first_disjoint(said: list[Stated]) -> tuple[int, int] | None:
    """The first two requirements (of different distributions) no release meets together; else the first and
    the one that empties the running intersection (three ranges that meet pairwise, but not all together)."""
    for i, a in enumerate(said):
        for j in range(i + 1, len(said)):
            b = said[j]
            if a.by.name != b.by.name and not overlaps(a.req.spec, b.req.spec):
                return i, j
    joined = said[0].req.spec
    for j in range(1, len(said)):
        joined = ",".join(p for p in (joined, said[j].req.spec) if p)
        if not overlaps(joined, ""):
            return 0, j
    return None


Index = dict[tuple[str, str], PinnedRelease]


def index_of(kb: KnowledgeBase) -> Index:
    """What PyPI serves of each exactly pinned release (``pinned_releases.yaml``), by (name, version)."""
    return {(row.name, row.version): row for row in kb.pinned_releases}


def _lacking(req: Requirement, python: str, index: Index) -> PinnedRelease | None:
    """The row of an exact pin PyPI has neither a wheel for this Python nor an sdist of, else None. A pin with a
    local label (jax[cuda12_pip]'s ``jaxlib==0.4.26+cuda12.cudnn89``) names a build PyPI never holds: its project's
    own index serves it (``-f``), so it is left out."""
    version = exact(req.spec)
    if version is None or "+" in version:
        return None
    row = index.get((req.name, version))
    return row if row is not None and not row.installs(python) else None


def unserved(said: list[Stated], pinned: set[str], python: str, index: Index) -> list[tuple[Stated, PinnedRelease]]:
    """The exact pins (on names pip must choose) PyPI serves nothing of for this Python."""
    return [(s, row) for s in said if s.req.name not in pinned
            for row in [_lacking(s.req, python, index)] if row is not None]


def meeting(kb: KnowledgeBase, moved: Installed, fixed: list[Stated], python: str) -> list[str]:
    """The recorded releases of ``moved``'s distribution nearest to its version (the closest older and newer one)
    with wheels for this Python, whose requirements meet every one of ``fixed`` (the other side's) and whose exact
    pins PyPI serves for this Python."""
    want = {s.req.name: s.req.spec for s in fixed}
    index = index_of(kb)

    def fits(row: FrameworkRequires) -> bool:
        if row.python and python not in row.python:
            return False
        reqs = row.active(python, moved.extras)
        return all(overlaps(r.spec, want[r.name]) for r in reqs if r.name in want) and not any(
            _lacking(r, python, index) for r in reqs)

    here = vtuple(moved.version)
    rows = sorted((r for r in kb.framework_requires if r.distribution == moved.name), key=lambda r: vtuple(r.version))
    older = next((r.version for r in reversed(rows) if vtuple(r.version) < here and fits(r)), None)
    newer = next((r.version for r in rows if vtuple(r.version) > here and fits(r)), None)
    return [f"{moved.name} {v}" for v in (older, newer) if v is not None]
