"""NGC release rows (ngc.yaml) from the facts NVIDIA's per-release notes state.

Input: the text of a release-notes page saved from docs.nvidia.com/deeplearning/frameworks/
(``pytorch-release-notes/rel-YY-MM.html``, ``tensorflow-release-notes/...``; a sibling container of the same
month, MXNet or PaddlePaddle, shares the CUDA/cuDNN/Python/driver facts but not the framework version).
``upstream/nvidia-ngc-facts.yaml`` is the stored copy of what was read: one entry per page, only the facts it
states, and the ngc.yaml row they back.

Usage::

    python -m tools.kbrefresh.ngc_notes PAGE.txt...     # the facts each saved page states, as YAML
    python -m tools.kbrefresh.ngc_notes --compare       # stored facts against ngc.yaml; exit 1 on drift
    python -m tools.kbrefresh.ngc_notes --triton-matrix compatibility.md   # NGC PyTorch builds (ngc_triton)
    python -m tools.kbrefresh.ngc_notes --banner banners.txt   # builds the images' start banners name (ngc_banner)
    python -m tools.kbrefresh.ngc_notes --triton-backends FILE  # the images' Python (ngc_backends)

A fact a page does not state is left out (and the row's field stays empty): nothing is filled from a
neighbouring release.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import yaml

from envgen.kb.knowledge import KnowledgeBase

UPSTREAM = Path(__file__).resolve().parent / "upstream"
FACTS = UPSTREAM / "nvidia-ngc-facts.yaml"
# row fields a fact may back (facts also carry page, row, release)
FIELDS = ("cuda", "cudnn", "python", "ubuntu", "driver_min", "datacenter_drivers", "cc_min", "framework_version")

_PATTERNS: dict[str, re.Pattern[str]] = {
    "release": re.compile(r"\bRelease (\d{2}\.\d{2})\b"),
    "cuda": re.compile(r"is based on (?:NVIDIA )?CUDA (\d+\.\d+\.\d+)"),
    "driver_min": re.compile(r"requires NVIDIA Driver release (\d+(?:\.\d+)*) or later"),
    "ubuntu": re.compile(r"Ubuntu (\d{2}\.\d{2}) including Python"),
    "python": re.compile(r"including Python (\d\.\d+)|/python(\d\.\d+)/dist-packages"),
    "cudnn": re.compile(r"cuDNN (\d+\.\d+\.\d+(?:\.\d+)?)"),
    "cc_min": re.compile(r"supports CUDA compute capability (\d\.\d) and (?:later|higher)"),
    "framework_version": re.compile(r"container image version \d{2}\.\d{2} is based on "
                                    r"(?:PyTorch |TensorFlow )?(\d+\.\d+\.\d+(?:a0)?(?:\+[0-9a-f]+)?)"),
}
_BRANCH = re.compile(r"(\d{3}\.\d{2}) \(or later R\d{3}\)")


def parse(text: str) -> dict[str, Any]:
    """The facts a release-notes page's text states: release, CUDA, driver minimum, data-centre branches, ..."""
    out: dict[str, Any] = {}
    for key, pattern in _PATTERNS.items():
        m = pattern.search(text)
        if m:
            out[key] = next(g for g in m.groups() if g)
    branches = _BRANCH.findall(text)
    if branches:
        out["datacenter_drivers"] = branches
    return out


def load_facts(path: Path = FACTS) -> list[dict[str, Any]]:
    return list(yaml.safe_load(path.read_text(encoding="utf-8")) or [])


def differences(kb: KnowledgeBase, facts: list[dict[str, Any]]) -> list[str]:
    """One line per stored fact that ngc.yaml does not carry (or a row that does not cite its page)."""
    out: list[str] = []
    for fact in facts:
        ref = fact.get("row")
        if not ref:
            continue
        row = kb.ngc(ref)
        if row is None:
            out.append(f"ngc.yaml#{ref}: no row; {fact['page']} states {sorted(set(fact) & set(FIELDS))}")
            continue
        if fact["page"] not in row.source:
            out.append(f"ngc.yaml#{ref}: source does not cite {fact['page']}")
        for key in FIELDS:
            if key in fact and getattr(row, key) != fact[key]:
                out.append(f"ngc.yaml#{ref} {key}: KB {getattr(row, key)!r}, {fact['page']} states {fact[key]!r}")
    return out


def main(argv: list[str]) -> int:
    if argv == ["--compare"]:
        from envgen.kb import load_kb

        diff = differences(load_kb(), load_facts())
        sys.stdout.write("\n".join(diff) + ("\n" if diff else ""))
        return 1 if diff else 0
    if len(argv) == 2 and argv[0] == "--triton-matrix":
        from tools.kbrefresh.ngc_triton import parse_matrix

        facts = parse_matrix(Path(argv[1]).read_text(encoding="utf-8"))
        sys.stdout.write(yaml.safe_dump(list(facts.values()), sort_keys=False, width=120))
        return 0
    if len(argv) == 2 and argv[0] == "--banner":
        from tools.kbrefresh.ngc_banner import parse_banners

        banners = parse_banners(Path(argv[1]).read_text(encoding="utf-8"))
        sys.stdout.write(yaml.safe_dump(list(banners.values()), sort_keys=False, width=120))
        return 0
    if len(argv) == 2 and argv[0] == "--triton-backends":
        from tools.kbrefresh.ngc_backends import parse_backends

        backends = parse_backends(Path(argv[1]).read_text(encoding="utf-8"))
        sys.stdout.write(yaml.safe_dump(list(backends.values()), sort_keys=False, width=120))
        return 0
    if not argv or {"--compare", "--triton-matrix", "--banner", "--triton-backends"} & set(argv):
        sys.stderr.write(__doc__ or "")
        return 2
    pages = [{"page": path, **parse(Path(path).read_text(encoding="utf-8"))} for path in argv]
    sys.stdout.write(yaml.safe_dump(pages, sort_keys=False, width=120))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
