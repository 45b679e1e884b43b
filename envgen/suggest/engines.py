"""`envgen suggest --frameworks vllm` (or ``sglang``): a serving engine pins its own torch exactly (its wheel's
Requires-Dist, ``engine_requires.yaml``), so the search for it is the torch search for that pin. Each engine
release, newest first, becomes a torch request for the torch it pins, a Python inside both windows, and the engine
itself in ``packages.pip``; the first that passes the check (the engine rules included) is the answer. A release
whose compiled kernels (its own, or the sgl-kernel it pins: ``engine_arches.yaml``) have no code for the GPU is not
tried."""

from __future__ import annotations

from envgen.errors import InputError
from envgen.kb import KnowledgeBase
from envgen.kb.builds import driver_fit
from envgen.kb.engine_kernels import compiled_rows, core_fails_on
from envgen.kb.engines import ENGINES, EngineRequires
from envgen.kb.versions import in_range, vtuple
from envgen.suggest.request import Request

MAX_RELEASES = 8  # engine releases tried, newest first (one per torch and Python)


def asked_engine(req: Request) -> str | None:
    """The engine ``--frameworks`` names, if any (refused beside TensorFlow: one engine image is a torch image)."""
    engines = [name for name in req.frameworks if name in ENGINES]
    if not engines:
        return None
    if len(engines) > 1 or "tensorflow" in req.frameworks:
        raise InputError(f"option --frameworks: {', '.join(req.frameworks)} asks for more than one serving stack",
                         fix="ask for one engine (vllm or sglang), alone or with a pytorch version")
    return engines[0]


def _python(kb: KnowledgeBase, row: EngineRequires, torch: str, req: Request) -> str | None:
    """The oldest Python both the engine release and its torch publish wheels for (the one asked, if given): an
    engine brings dozens of dependencies whose wheels trail a new Python (sglang 0.5.10 on 3.13: uv finds no wheel
    of outlines-core 0.1.26, which outlines 0.1.11 pins; tests/unit/test_suggest_engines.py resolves the answers)."""
    release = kb.torch_release(torch)
    pythons = [p for p in row.python if release is None or in_range(p, release.python_min, release.python_max)]
    if req.python is not None:
        return req.python if any(vtuple(p) == vtuple(req.python)[:2] for p in pythons) else None
    return min(pythons, key=vtuple, default=None)


def _driver_runs(kb: KnowledgeBase, row: EngineRequires, driver: str | None) -> bool:
    """The host driver runs the CUDA build the engine's PyPI wheel carries (cu130 -> CUDA 13.0's minimum)."""
    if not row.build or not row.build.startswith("cu") or driver is None:
        return True
    cuda = f"{row.build[2:-1]}.{row.build[-1]}"
    return driver_fit(kb, cuda, driver) in ("ok", "minor-compat")


def _kernels_run(kb: KnowledgeBase, row: EngineRequires, gpu: str) -> bool:
    """The core compiled objects the release installs have code the GPU runs (a release whose arches were not read
    is not refused here)."""
    model = kb.gpu(gpu)
    return model is None or not any(core_fails_on(kb, r, model.compute_capability) for r in compiled_rows(kb, row))


def engine_requests(kb: KnowledgeBase, req: Request, engine: str) -> list[Request]:
    """One torch request per engine release (newest first) that the request admits and whose CUDA build the
    driver runs; one per torch and Python (an older release with the same torch finds the same stack)."""
    prefix, torch_prefix = req.frameworks[engine], req.frameworks.get("pytorch")
    out: list[Request] = []
    seen: set[tuple[str, str]] = set()
    for row in sorted((r for r in kb.engine_requires if r.distribution == engine), key=lambda r: vtuple(r.version),
                      reverse=True):
        torch = row.pin("torch")
        if torch is None or (prefix and not _prefixed(row.version, prefix)):
            continue
        if torch_prefix and not _prefixed(torch, torch_prefix):
            continue
        python = _python(kb, row, torch, req)
        if python is None or kb.torch_release(torch) is None or not _driver_runs(kb, row, req.driver) \
                or not _kernels_run(kb, row, req.gpu):
            continue
        if (torch, python) in seen:
            continue
        seen.add((torch, python))
        out.append(Request(req.gpu, {"pytorch": torch}, req.driver, python, req.prefer,
                           pip=(f"{engine}=={row.version}",)))
        if len(out) == MAX_RELEASES:
            break
    return out


def _prefixed(version: str, prefix: str) -> bool:
    return vtuple(version)[: len(vtuple(prefix))] == vtuple(prefix)
