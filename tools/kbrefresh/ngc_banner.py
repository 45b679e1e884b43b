"""NGC framework builds named in the start banner an NGC container prints (the image's own output).

Input: text holding one or more banners as ``docker run nvcr.io/nvidia/pytorch:YY.MM-py3`` prints them::

    =============
    == PyTorch ==
    =============

    NVIDIA Release 24.02 (build 82611821)
    PyTorch Version 2.3.0a0+ebedce2

TensorFlow images name their flavour in the release line (``NVIDIA Release YY.MM-tf2 (build N)``, then
``TensorFlow Version X.Y.Z``). The banner states the release and the framework build and nothing else (no CUDA,
Python or driver); the PyTorch build may carry a shorter commit than NVIDIA's notes print (7 digits for 10).
What was read is stored in ``upstream/ngc-container-banners.txt``, one block per recorded banner, each under the
public file it was read from, named by repository, commit and path (a README or log quoting ``docker run`` output:
a copy, so rows built on it stay unverified).

Usage::

    python -m tools.kbrefresh.ngc_notes --banner FILE   # per NGC release and framework, as YAML

Banners of one release that name different builds keep no framework_version (like ngc_triton's rows).
"""

from __future__ import annotations

import re
from typing import Any

_BANNER = re.compile(
    r"NVIDIA Release (?P<release>\d{2}\.\d{2})(?:-(?P<flavour>tf[12]))?(?: \(build (?P<build>\d+)\))?\s+"
    r"(?P<framework>PyTorch|TensorFlow) Version (?P<version>\d+\.\d+\.\d+\S*)"
)


def parse_banners(text: str) -> dict[str, dict[str, Any]]:
    """``"<framework> YY.MM[-flavour]"`` -> release, framework, flavour, builds and framework_version of every
    banner in ``text``, in order of release."""
    out: dict[str, dict[str, Any]] = {}
    for m in _BANNER.finditer(text):
        framework = m["framework"].lower()
        key = f"{framework} {m['release']}" + (f"-{m['flavour']}" if m["flavour"] else "")
        seen = out.setdefault(key, {"release": m["release"], "framework": framework, "flavour": m["flavour"],
                                    "builds": [], "framework_version": m["version"]})
        if m["build"] and m["build"] not in seen["builds"]:
            seen["builds"].append(m["build"])
        if seen["framework_version"] != m["version"]:
            seen["framework_version"] = None
    return {k: {f: v for f, v in facts.items() if v is not None} for k, facts in sorted(out.items())}
