"""The nvidia/cuda tags NVIDIA publishes, per patch release, from its own lists.

Inputs: ``doc/supported-tags.md`` and ``doc/unsupported-tags.md`` of gitlab.com/nvidia/container-images/cuda
(unsupported = end-of-life, "these tags still exist"), and the EOL chart of ``doc/container_tags.xlsx`` saved
as CSV (``patch,marked_eol_on,est_deletion``). ``upstream/nvidia-cuda-tags.txt`` is the stored copy of the
two lists (one ``<status> <tag>`` per line) and ``upstream/nvidia-cuda-eol.csv`` that of the chart.

Usage::

    python -m tools.kbrefresh.cuda_tags [--compare] [supported-tags.md unsupported-tags.md [eol.csv]]

prints the ``releases`` of each CUDA minor as YAML, or with ``--compare`` a diff against base_images.yaml
(empty when the knowledge base agrees with the lists).
"""

from __future__ import annotations

import csv
import difflib
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

from envgen.kb.versions import minor, vtuple

UPSTREAM = Path(__file__).resolve().parent / "upstream"
_TAG = re.compile(
    r"`(?P<patch>\d+\.\d+\.\d+)-(?:cudnn(?P<cudnn>\d*)-)?(?P<flavor>base|runtime|devel)-(?P<os>[a-z]+[\d.]*)`"
)
_LINE = re.compile(r"^(?P<status>supported|end-of-life) (?P<tag>\S+)$")

Listed = dict[str, tuple[str, dict[str, set[str]]]]  # patch -> (status, os -> flavours: "base", "cudnn8-devel", ...)


def parse_lists(supported: str, unsupported: str) -> Listed:
    """``{patch: (status, {os: flavours})}``; a patch in both lists (11.0.3, 11.1.1 and 11.2.2 keep a section
    in supported-tags.md) counts as end-of-life, as NVIDIA's EOL chart marks them."""
    out: Listed = {}
    for status, text in (("supported", supported), ("end-of-life", unsupported)):
        for m in _TAG.finditer(text):
            cudnn = m.group("cudnn")
            flavour = m.group("flavor") if cudnn is None else f"cudnn{cudnn}-{m.group('flavor')}"
            entry = out.get(m.group("patch"))
            if entry is None or entry[0] != status:
                entry = out[m.group("patch")] = (status, entry[1] if entry else defaultdict(set))
            entry[1][m.group("os")].add(flavour)
    return out


def parse_stored(text: str) -> Listed:
    """The stored copy: ``<status> <tag>`` lines, rendered back into the two lists' form."""
    lists: dict[str, list[str]] = {"supported": [], "end-of-life": []}
    for line in text.splitlines():
        m = _LINE.match(line.strip())
        if m:
            lists[m.group("status")].append(f"`{m.group('tag')}`")
    return parse_lists("\n".join(lists["supported"]), "\n".join(lists["end-of-life"]))


def parse_eol(text: str) -> dict[str, tuple[str, str]]:
    rows = csv.DictReader(line for line in text.splitlines() if not line.startswith("#"))
    return {r["patch"]: (r["marked_eol_on"], r["est_deletion"]) for r in rows}


def releases(tags: Listed, eol: dict[str, tuple[str, str]]) -> dict[str, list[dict[str, Any]]]:
    """``{cuda minor: [release rows]}`` in the knowledge base's form (CudaTagRelease)."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for patch in sorted(tags, key=vtuple, reverse=True):
        status, by_os = tags[patch]
        cudnn = sorted({f.split("-")[0][5:] for fl in by_os.values() for f in fl if f.startswith("cudnn")})
        row: dict[str, Any] = {"patch": patch, "status": status, "os": _os_order(by_os)}
        if cudnn:
            row["cudnn"] = cudnn[0]
            row["cudnn_os"] = _os_order({o: f for o, f in by_os.items() if any(x.startswith("cudnn") for x in f)})
        if patch in eol:
            row["eol_on"], row["deletion_planned"] = eol[patch]
        out[minor(patch)].append(row)
    return dict(out)


def _os_order(by_os: dict[str, set[str]]) -> list[str]:
    """Newest first within a family, families in a fixed order, as base_images.yaml writes them."""
    def key(name: str) -> tuple[int, tuple[int, ...]]:
        m = re.match(r"([a-z]+)([\d.]*)", name)
        family, version = (m.group(1), m.group(2)) if m else (name, "")
        order = ["ubuntu", "ubi", "rockylinux", "oraclelinux", "centos", "amzn", "azl", "cm"]
        rank = order.index(family) if family in order else len(order)
        return rank, tuple(-x for x in vtuple(version or "0"))

    return sorted(by_os, key=key)


def load_default() -> dict[str, list[dict[str, Any]]]:
    tags = parse_stored((UPSTREAM / "nvidia-cuda-tags.txt").read_text(encoding="utf-8"))
    return releases(tags, parse_eol((UPSTREAM / "nvidia-cuda-eol.csv").read_text(encoding="utf-8")))


def compare(fresh: dict[str, list[dict[str, Any]]], data_file: Path) -> list[str]:
    """Unified diff lines between the KB's releases and ``fresh`` (only the minors the lists name)."""
    doc = yaml.safe_load(data_file.read_text(encoding="utf-8"))
    have = {r["cuda"]: r.get("releases", []) for r in doc["cuda_images"]}
    out: list[str] = []
    for cuda in sorted(set(fresh) | {c for c, r in have.items() if r}, key=vtuple):
        # deleted patches and partial releases from other lists (complete: false) are not in NVIDIA's lists
        listed = [r for r in have.get(cuda, []) if r.get("status") != "deleted" and r.get("complete", True)]
        a = yaml.safe_dump(listed, sort_keys=True).splitlines()
        b = yaml.safe_dump(fresh.get(cuda, []), sort_keys=True).splitlines()
        out += difflib.unified_diff(a, b, f"base_images.yaml nvidia/cuda:{cuda}", f"NVIDIA lists {cuda}", lineterm="")
    return out


def main(argv: list[str]) -> int:
    do_compare = "--compare" in argv
    args = [a for a in argv if a != "--compare"]
    if args and len(args) not in (2, 3):
        sys.stderr.write(__doc__ or "")
        return 2
    if args:
        tags = parse_lists(Path(args[0]).read_text(encoding="utf-8"), Path(args[1]).read_text(encoding="utf-8"))
        eol = parse_eol(Path(args[2]).read_text(encoding="utf-8")) if len(args) == 3 else {}
        fresh = releases(tags, eol)
    else:
        fresh = load_default()
    if do_compare:
        from envgen.paths import kb_data_dir

        diff = compare(fresh, kb_data_dir() / "base_images.yaml")
        sys.stdout.write("\n".join(diff) + ("\n" if diff else ""))
        return 1 if diff else 0
    sys.stdout.write(yaml.safe_dump(fresh, sort_keys=False, width=120))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
