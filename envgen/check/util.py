"""Helpers shared by the rules."""

from __future__ import annotations

from envgen.check.findings import Finding, Severity
from envgen.kb import KnowledgeBase
from envgen.kb.builds import nearest_torch_builds
from envgen.kb.versions import at_least


def finding(severity: Severity, code: str, message: str, fix: str, source: str) -> Finding:
    return Finding(severity, code, " ".join(message.split()), one_each(" ".join(fix.split())), source)


def one_each(fix: str) -> str:
    """A fix of "; "-joined ways with none said twice: a way that another one begins with is left out ("pin
    numpy==1.26.4; pin numpy==1.26.4 (torch < 2.3 ...), or use torch >= 2.3" keeps the second)."""
    ways = fix.split("; ")
    kept = [w for i, w in enumerate(ways) if w not in ways[:i]
            and not any(o != w and o.startswith(w) for o in ways)]
    return "; ".join(kept)


def driver_at_least(driver: str, minimum: str) -> bool:
    """Only a driver known to be new enough passes ("525.60" against "525.60.13" cannot be told: False)."""
    return at_least(driver, minimum) is True


def nearest_builds(kb: KnowledgeBase, cc: str, version: str, cuda: str | None, driver: str | None) -> str:
    """"2.7.0+cu126, 2.6.0+cu124": the torch builds nearest to ``version`` with a cubin for ``cc`` that ``driver``
    runs (the search `envgen suggest` uses), or a sentence when there is none."""
    return ", ".join(nearest_torch_builds(kb, cc, version, cuda, driver)) or "none in the knowledge base"
