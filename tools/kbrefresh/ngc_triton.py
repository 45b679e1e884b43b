"""NGC PyTorch builds named in Triton Inference Server's release compatibility matrix.

Input: the text of Triton's ``docs/introduction/compatibility.md`` (triton-inference-server/server; the same
table is published as ``docs.nvidia.com/deeplearning/triton-inference-server/.../introduction/compatibility.html``).
Its ``trtllm-python-py3`` table lists, per Triton release, the Torch build the container runs, e.g.
``2.4.0a0+3bcc3cddb5.nv24.7``: the ``.nvYY.M`` suffix names the NGC PyTorch release that build comes from (24.07),
and the row's Python is the interpreter that runs it, so the NGC PyTorch release of that month ships the same
Python minor. The row's CUDA is the TensorRT-LLM container's own and is NOT a fact about the PyTorch release.

Usage::

    python -m tools.kbrefresh.ngc_notes --triton-matrix compatibility.md   # per NGC PyTorch release, as YAML

A build named without a ``.nvYY.M`` suffix (``2.3.0a0+ebedce2``) names no release and is skipped; a release whose
rows name two different builds or Pythons keeps only what they agree on.
"""

from __future__ import annotations

import re
from typing import Any

_SUFFIX = re.compile(r"^(?P<version>\d+\.\d+\.\d+(?:a0)?\+[0-9a-f]+)\.nv(?P<yy>\d{2})\.(?P<m>\d{1,2})$")
_PYTHON = re.compile(r"^Python (\d+\.\d+)(?:\.\d+)?$")


def _trtllm_rows(text: str) -> list[list[str]]:
    """The cells of each table row whose NGC tag is a ``-trtllm-python-py3`` image."""
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and cells[1].endswith("-trtllm-python-py3"):
            rows.append(cells)
    return rows


def parse_matrix(text: str) -> dict[str, dict[str, Any]]:
    """NGC PyTorch release (YY.MM) -> the facts the matrix states about it: framework_version, python, and the
    Triton releases (``triton``) whose rows name its build."""
    out: dict[str, dict[str, Any]] = {}
    for cells in _trtllm_rows(text):
        build = _SUFFIX.match(cells[3].replace("%2B", "+"))
        if build is None:
            continue
        release = f"{build['yy']}.{int(build['m']):02d}"
        python = _PYTHON.match(cells[2])
        seen = out.setdefault(release, {"release": release, "triton": [],
                                        "framework_version": build["version"],
                                        "python": python.group(1) if python else None})
        seen["triton"].append(cells[0])
        if seen["framework_version"] != build["version"]:
            seen["framework_version"] = None
        if python is None or seen["python"] != python.group(1):
            seen["python"] = None
    return {k: {f: v for f, v in facts.items() if v is not None} for k, facts in sorted(out.items())}
