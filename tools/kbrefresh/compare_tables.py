"""Compare the knowledge base row by row with independent public tables (stored copies in ``upstream/``).

Tables: replicate/cog's generated ``pkg/config/torch_compatibility.json``, ``tf_compatibility.json`` and
``cuda_compatibility.json`` (``upstream/cog-*.json``, copied at cog commit 6110c912377d, 2026-08-21). Each
difference is one line; ``upstream/compare-reviewed.txt`` lists the differences a maintainer has looked at
(with why the KB keeps its value), so only new drift shows.

Usage::

    python -m tools.kbrefresh.compare_tables [--all]

prints the unreviewed differences (``--all``: every difference) and exits 1 when there are any. Refresh the
stored copies from cog's repository and rerun: a changed upstream value shows as a new line.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from envgen.kb.knowledge import KnowledgeBase
from envgen.kb.versions import minor, vtuple

UPSTREAM = Path(__file__).resolve().parent / "upstream"


def _load(name: str) -> list[dict[str, Any]]:
    return list(json.loads((UPSTREAM / name).read_text(encoding="utf-8")))


def torch_differences(kb: KnowledgeBase, rows: list[dict[str, Any]]) -> list[str]:
    out = []
    for row in rows:
        version, _, tag = row["Torch"].partition("+")
        where = f"cog torch {row['Torch']}"
        release = kb.torch_release(version)
        if release is None:
            out.append(f"{where}: no pytorch.yaml release {version}")
            continue
        if tag and kb.torch_variant_by_tag(version, tag) is None:
            out.append(f"{where}: pytorch.yaml#{version} has no variant {tag}")
        for field, theirs, ours in (("torchvision", row.get("Torchvision"), release.torchvision),
                                    ("torchaudio", row.get("Torchaudio"), release.torchaudio)):
            theirs = (theirs or "").split("+")[0] or None
            if theirs != ours:
                out.append(f"{where}: {field} {theirs} (pytorch.yaml#{version}: {ours})")
        high = max([release.python_max, *release.python_experimental], key=vtuple)
        outside = [p for p in row.get("Pythons") or []
                   if not vtuple(release.python_min) <= vtuple(p) <= vtuple(high)]
        if outside:
            out.append(f"{where}: Pythons {', '.join(outside)} outside pytorch.yaml#{version} "
                       f"{release.python_min}-{high}")
    return out


def tf_differences(kb: KnowledgeBase, rows: list[dict[str, Any]]) -> list[str]:
    out = []
    for row in rows:
        where = f"cog tensorflow {row['TF']}"
        build = kb.tensorflow_build(row["TF"])
        if build is None:
            out.append(f"{where}: no tensorflow.yaml row")
            continue
        if row.get("CUDA") and minor(row["CUDA"]) != minor(build.cuda):
            out.append(f"{where}: CUDA {row['CUDA']} (tensorflow.yaml#{build.series}: {build.cuda})")
        if row.get("CuDNN") and minor(row["CuDNN"]) != minor(build.cudnn):
            out.append(f"{where}: cuDNN {row['CuDNN']} (tensorflow.yaml#{build.series}: {build.cudnn})")
        outside = [p for p in row.get("Pythons") or []
                   if not vtuple(build.python_min) <= vtuple(p) <= vtuple(build.python_max)]
        if outside:
            out.append(f"{where}: Pythons {', '.join(outside)} outside tensorflow.yaml#{build.series} "
                       f"{build.python_min}-{build.python_max}")
    return out


def cuda_differences(kb: KnowledgeBase, rows: list[dict[str, Any]]) -> list[str]:
    out = []
    for row in rows:
        info = kb.base_image(f"nvidia/cuda:{row['Tag']}")
        if info is None or info.status not in ("available", "end-of-life"):
            status = "no row" if info is None else f"{info.status}: {info.reason}"
            out.append(f"cog nvidia/cuda:{row['Tag']}: base_images.yaml says {status}")
    return out


def differences(kb: KnowledgeBase) -> list[str]:
    return (torch_differences(kb, _load("cog-torch_compatibility.json"))
            + tf_differences(kb, _load("cog-tf_compatibility.json"))
            + cuda_differences(kb, _load("cog-cuda_compatibility.json")))


def reviewed() -> set[str]:
    text = (UPSTREAM / "compare-reviewed.txt").read_text(encoding="utf-8")
    return {line.split("  # ")[0].strip() for line in text.splitlines() if line.strip() and not line.startswith("#")}


def main(argv: list[str]) -> int:
    from envgen.kb.loader import load_kb

    found = differences(load_kb())
    done = set() if "--all" in argv else reviewed()
    shown = [d for d in found if d not in done]
    sys.stdout.write("".join(f"{line}\n" for line in shown))
    return 1 if shown else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
