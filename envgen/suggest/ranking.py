"""The order candidates are judged in: foreseen warnings first, then newest or settled (``--prefer lts``)."""

from __future__ import annotations

from envgen.kb import KnowledgeBase
from envgen.kb.builds import driver_fit
from envgen.kb.versions import vtuple
from envgen.suggest.parts import Candidate, TorchPart, cudas
from envgen.suggest.request import Request


class Ranker:
    """Sort keys for candidates, with the per-CUDA and per-release facts computed once per search (a search
    orders thousands of candidates)."""

    def __init__(self, kb: KnowledgeBase, req: Request, cc: str) -> None:
        self.kb, self.req, self.cc = kb, req, cc
        self._cuda: dict[str, tuple[int, tuple[int, ...]]] = {}
        self._settled: dict[str, bool] = {}

    def _cuda_facts(self, cuda: str) -> tuple[int, tuple[int, ...]]:
        """(foreseen warnings, minimum driver) of a CUDA: minor-version compatibility, and a newest target of an
        older major than the GPU (PTX JIT)."""
        if cuda not in self._cuda:
            toolkit = self.kb.cuda(cuda)
            warn = int(driver_fit(self.kb, cuda, self.req.driver) != "ok")
            if toolkit is not None and vtuple(toolkit.cc_max)[0] < vtuple(self.cc)[0]:
                warn += 1
            self._cuda[cuda] = (warn, vtuple(toolkit.driver_linux_min) if toolkit else ())
        return self._cuda[cuda]

    def settled(self, torch: TorchPart) -> bool:
        """The last patch of a torch series that had at least one patch release (x.y.1 or later)."""
        version = torch.build.release.version
        if version not in self._settled:
            v = vtuple(version)
            series = [vtuple(r.version) for r in self.kb.pytorch if vtuple(r.version)[:2] == v[:2]]
            self._settled[version] = len(v) > 2 and v[2] >= 1 and v == max(series)
        return self._settled[version]

    def key(self, c: Candidate) -> tuple[object, ...]:
        """Candidates the check will not warn about first (so a clean stack is not missed behind a long run of
        newer ones that warn), then by preference."""
        facts = [self._cuda_facts(cuda) for cuda in cudas(c)]
        warnings = sum(f[0] for f in facts)
        if c.torch is not None and c.python in c.torch.build.release.python_experimental:
            warnings += 1
        staleness = (c.tf.rank if c.tf else 0) + (c.torch.rank if c.torch else 0)
        tf_rank = c.tf.rank if c.tf else 0
        python = tuple(-x for x in vtuple(c.python))
        if self.req.prefer == "lts":
            # settled releases: not the newest TensorFlow series that fits, and a torch series that already had a
            # patch release (its last patch); among those the fewest releases behind, then the oldest driver
            unsettled = (c.tf is not None and c.tf.rank == 0) + (c.torch is not None and not self.settled(c.torch))
            driver_need = max((f[1] for f in facts), default=())
            return (warnings, unsettled, staleness, driver_need, tf_rank, python)
        newest_cuda = tuple(-x for x in max((vtuple(cu) for cu in cudas(c)), default=()))
        return (warnings, staleness, tf_rank, newest_cuda, python)
