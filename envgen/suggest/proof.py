"""A candidate must be installable before it is ranked: the frameworks it names (TensorFlow's distribution with its
extras, torch of its CUDA build, torchvision and torchaudio of the release) go through `check`'s combined set
(``check.packages.combined``: the recorded Requires-Dist, intersected per distribution, and the exact pins PyPI
serves for the candidate's Python), and a candidate whose set pip refuses is refused with the reason, before any
profile is written or judged."""

from __future__ import annotations

from envgen.check.packages.combined import Stated, among, first_disjoint, index_of, stated, unserved
from envgen.check.packages.installs import Installed
from envgen.kb import KnowledgeBase
from envgen.suggest.parts import Candidate

_FRAMEWORKS = "frameworks"


def installs(c: Candidate) -> list[Installed]:
    """What pip installs from the frameworks stage for ``c``: the distributions a written profile's plan pins (the
    TensorFlow distribution is the build's GPU package, as the plan takes it for a profile that names none)."""
    out = []
    if c.tf is not None:
        name, _, extra = c.tf.build.gpu_package.partition("[")
        extras = frozenset({extra.rstrip("]")}) if extra else frozenset()
        out.append(Installed(name, c.tf.version, _FRAMEWORKS, extras))
    if c.torch is not None:
        release = c.torch.build.release
        out.append(Installed("torch", release.version, _FRAMEWORKS, build=c.torch.build.variant.tag))
        out += [Installed(name, version, _FRAMEWORKS) for name, version in
                (("torchvision", release.torchvision), ("torchaudio", release.torchaudio)) if version]
    return out


class CombinedSet:
    """The combined-set verdict per candidate. A search asks for thousands of candidates made of a few dozen
    distributions: each one's requirements are read once per Python, and each group of requirements on one name
    is intersected once."""

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb
        self._stated: dict[tuple[Installed, str], list[Stated]] = {}
        self._disjoint: dict[tuple[tuple[str, str], ...], tuple[int, int] | None] = {}
        self._index = index_of(kb)

    def _of(self, item: Installed, python: str) -> list[Stated]:
        key = (item, python)
        if key not in self._stated:
            self._stated[key] = stated(self.kb, [item], python)
        return self._stated[key]

    def _first_disjoint(self, said: list[Stated]) -> tuple[int, int] | None:
        key = tuple((s.by.name, s.req.spec) for s in said)
        if key not in self._disjoint:
            self._disjoint[key] = first_disjoint(said)
        return self._disjoint[key]

    def refusal(self, c: Candidate) -> str | None:
        """Why pip refuses the candidate's set (the two requirements that do not meet), or None."""
        items = installs(c)
        said = [s for item in items for s in self._of(item, c.python)]
        pinned = {item.name for item in items}
        found = [f"{x.a.said()} against {x.b.said()}" for x in among(said, pinned, self._first_disjoint)]
        found += [f"{s.said()}, which PyPI serves nothing of for CPython {c.python}"
                  for s, _ in unserved(said, pinned, c.python, self._index)]
        return f"{c.label()}: pip refuses the set, {'; '.join(found)}" if found else None
