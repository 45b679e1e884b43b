"""Host driver against the CUDA versions the image uses.

Minor-version compatibility is a warning, and only within the same CUDA major."""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import driver_at_least, finding
from envgen.kb.versions import vtuple


def _compat_note(compat: str | None) -> str:
    return f" and below its minor-version-compatibility minimum {compat}" if compat else ""


def driver_minimum(ctx: CheckContext) -> list[Finding]:
    driver = ctx.host.driver
    if driver is None or not ctx.gpu:
        return []
    windows = ctx.host.windows_driver
    where = "Windows/WSL2" if windows else "Linux"
    out = []
    for version, why in ctx.plan.cuda.in_use:
        toolkit = ctx.kb.cuda(version)
        if toolkit is None:
            out.append(
                finding(
                    "warning",
                    "cuda-unknown",
                    f"CUDA {version} ({why}) is not in the knowledge base; its minimum driver is unknown",
                    "use a CUDA release listed in cuda.yaml",
                    "cuda.yaml",
                )
            )
            continue
        need = toolkit.driver_windows_min if windows else toolkit.driver_linux_min
        compat = toolkit.minor_compat_driver_windows_min if windows else toolkit.minor_compat_driver_min
        if driver_at_least(driver, need):
            continue
        if compat is not None and driver_at_least(driver, compat):
            out.append(
                finding(
                    "warning",
                    "driver-minor-compat",
                    f"driver {driver} is below CUDA {version}'s "
                    f"{where} minimum {need} ({why}) but within CUDA {vtuple(version)[0]}.x minor-version "
                    f"compatibility (>= {compat}): it runs, but PTX JIT of newer code and some features "
                    "fail",
                    f"upgrade the driver to >= {need}",
                    toolkit.cite(),
                )
            )
            continue
        out.append(
            finding(
                "error",
                "driver-too-old",
                f"driver {driver} is below CUDA {version}'s {where} minimum {need}{_compat_note(compat)} "
                f'({why}): "CUDA driver version is insufficient for CUDA runtime version"',
                f"upgrade the driver to >= {need}, or choose an older CUDA",
                toolkit.cite(),
            )
        )
    return out


RULES = [driver_minimum]
