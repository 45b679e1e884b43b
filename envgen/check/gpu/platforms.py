"""The host platform: WSL 2 runs CUDA on the Windows driver, which must be a WSL-capable one, and NVIDIA's
WSL 2 support covers only some GPU architectures (kb.platform("wsl2"), cuda.yaml `platforms`)."""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import driver_at_least, finding
from envgen.kb.versions import vtuple


def wsl2(ctx: CheckContext) -> list[Finding]:
    row = ctx.kb.platform("wsl2") if ctx.host.platform == "wsl2" and ctx.gpu else None
    if row is None:
        return []
    out = []
    driver = ctx.host.driver
    if driver is not None and not driver_at_least(driver, row.driver_min):
        out.append(finding(
            "error", "wsl-driver-too-old",
            f"Windows driver {driver} predates CUDA on WSL 2 (a WSL-capable driver is >= {row.driver_min}): inside "
            "the distribution CUDA finds no usable driver",
            f"install a current Windows NVIDIA driver (>= {row.driver_min}) on the Windows side, not in the "
            "distribution, then `wsl --update`",
            row.cite()))
    for target in ctx.targets:
        model = target.model
        if model is not None and vtuple(model.compute_capability) < vtuple(row.cc_min):
            out.append(finding(
                "warning", "wsl-gpu-unsupported",
                f"{target.label} ({model.architecture}, compute capability {model.compute_capability}) is older than "
                f"the GPUs NVIDIA supports CUDA on WSL 2 for (compute capability >= {row.cc_min}): it may not be "
                "visible inside WSL 2, or fail there",
                "run the image on Linux natively (dual boot, or a Linux host), or on a newer GPU",
                row.cite()))
    return out


RULES = [wsl2]
