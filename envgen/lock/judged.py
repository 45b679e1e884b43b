"""The whole pip set resolved and judged on its artifacts, by default, wherever an index is reachable: what `check`,
`build` and `lock` read.

uv resolves the profile's pip sets for the image (its Python, CPython's tags, manylinux up to the base's glibc; the
versions a base_provides base holds as constraints; a framework build served from its own index is replaced by its
recorded Requires-Dist, ``framework_requires.yaml``, so PyPI alone answers). Then every pinned release, and every
resolved one pip would build from its sdist, is judged on its own files (``releases``: Requires-Python, a wheel for
the image's tags, an sdist's build needs), and, when the set does not resolve, every pair of requirements on one
distribution is intersected (``meet``) so that the error names both requirements and the releases that would meet.

The answer is kept in envgen's cache directory under a SHA-256 of everything it depends on (the pins, the
constraints, the Python, the glibc, the indexes, the apt packages, and this module's VERSION) for ``TTL_S``
(the set's floating dependencies can move; an index that did not answer, for ``RETRY_S``): a warm `check` reads
one small file. Offline (``--offline``,
``ENVGEN_OFFLINE=1``) or with no index answering, a kept answer of any age serves, else an ``info`` finding names
what could not be resolved: never silence.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from envgen.check.findings import Finding

if TYPE_CHECKING:
    from envgen.kb import KnowledgeBase
    from envgen.plan.image import ImagePlan

VERSION = "2"
TTL_S = 86400
RETRY_S = 600  # an answer that says the index did not answer is kept this long
SOURCE = "uv pip compile (https://docs.astral.sh/uv/pip/compile/) and the index's PEP 691 pages"
_PREFIX = "resolved-"
FROM_FILES = ("pkg-requires-python", "pkg-no-wheel", "pkg-requires-clash")  # the errors read from releases' files


def offline_asked(environ: Mapping[str, str]) -> bool:
    return environ.get("ENVGEN_OFFLINE", "").strip().lower() in ("1", "true", "yes")


def set_key(plan: ImagePlan, environ: Mapping[str, str]) -> str:
    """What the answer depends on, hashed (check, build and lock make the same key for one profile)."""
    from envgen.config import config_path

    config = b""
    with contextlib.suppress(OSError):
        config = config_path(environ).read_bytes()
    pins = plan.pins
    parts = [VERSION, plan.profile.python_minor, plan.base_part.glibc or "",
             plan.profile.base, list(pins.pip), list(pins.pip_extra), list(pins.base), list(plan.pip_index_urls),
             list(plan.pip_find_links), sorted(plan.profile.packages.apt), config.decode("utf-8", "replace"),
             repr(plan.profile.mirrors),  # a profile's own index (mirrors.pip_index_url) answers for its set
             [environ.get(k, "") for k in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "ENVGEN_WHEELHOUSE")]]
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]


def set_findings(plan: ImagePlan, kb: KnowledgeBase, environ: Mapping[str, str], cache: Path | None, *,
                 offline: bool = False) -> list[Finding]:
    """The findings of the resolved set, from the kept answer when there is one (``kb``: the command's, the one
    ``plan`` was made with)."""
    if not plan.pins.pip and not plan.pins.pip_extra:
        return []
    offline = offline or offline_asked(environ)
    path = cache / f"{_PREFIX}{set_key(plan, environ)}.json" if cache else None
    kept = kept_findings(path, offline)
    if kept is not None:
        return kept
    if offline:
        return not_resolved(plan, kb, "offline: --offline or ENVGEN_OFFLINE")
    from envgen.errors import ResolverUnavailable

    try:
        found, life = _resolve_and_judge(plan, kb, environ, cache), TTL_S
    except ResolverUnavailable as exc:  # kept a short while: the next checks do not wait on the index again
        found, life = not_resolved(plan, kb, f"no index answered: {exc.message}"), RETRY_S
    keep_findings(path, found, life, f"{_PREFIX}*.json")
    return found


def kept_findings(path: Path | None, offline: bool) -> list[Finding] | None:
    """The answer kept at ``path`` while it lasts (offline: of any age), else None."""
    if path is not None:
        with contextlib.suppress(OSError, ValueError, TypeError, KeyError):
            kept = json.loads(path.read_bytes())
            if offline or time.time() < kept["until"]:
                return [Finding(**row) for row in kept["findings"]]
    return None


def keep_findings(path: Path | None, found: list[Finding], life: float, stale: str) -> None:
    """Keep ``found`` at ``path`` for ``life`` seconds; older answers matching ``stale`` are pruned."""
    if path is not None:
        from envgen.files import prune_stale, write_atomically

        with contextlib.suppress(OSError):
            write_atomically(path, json.dumps({"until": time.time() + life, "findings": [f.to_json() for f in found]},
                                              sort_keys=True))
            prune_stale(path, stale)


def not_resolved(plan: ImagePlan, kb: KnowledgeBase, reason: str) -> list[Finding]:
    """The ``info`` that says what was not resolved, and why: the packages.pip lines the knowledge base has recorded
    releases of (``pinned_releases.yaml``, ``framework_requires.yaml``: the static rules judged them on those) and
    those it has none of."""
    from envgen.check.util import finding

    lines = [r.line for r in plan.requirements if r.applies]
    if not lines:
        return []
    recorded = {row.name for row in kb.pinned_releases} | {row.distribution for row in kb.framework_requires}
    known = [line.text for line in lines if line.name in recorded]
    unknown = [line.text for line in lines if line.name not in recorded]
    said = "; ".join(part for part in (
        f"judged from the knowledge base's recorded releases: {', '.join(known)}" if known else "",
        f"not judged on their files at all (Requires-Python, wheels for the image, Requires-Dist): "
        f"{', '.join(unknown)}" if unknown else "") if part)
    return [finding("info", "resolve-offline", f"the pip set was not resolved ({reason}): {said}",
                    "check once with the package index reachable (without --offline): its answer is kept, and later "
                    "checks read it offline", SOURCE)]


def _resolve_and_judge(plan: ImagePlan, kb: KnowledgeBase, environ: Mapping[str, str],
                       cache: Path | None) -> list[Finding]:
    from envgen.check.util import finding
    from envgen.lock.judge_run import judge

    started = time.monotonic()
    found, note = judge(plan, kb, environ, cache)
    seconds = time.monotonic() - started
    timed = finding("info", "resolve-time", f"the pip set was resolved and judged on its files in {seconds:.1f} s "
                    f"for {note}; the answer is kept for {TTL_S // 3600} h", "nothing to do", SOURCE)
    return [*found, timed]
