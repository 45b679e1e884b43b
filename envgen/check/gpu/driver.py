"""Host driver against the CUDA versions the image uses, and against the GPUs it drives.

Minor-version compatibility is a warning, and only within the same CUDA major. A driver branch older than a GPU's
first (or newer than its last) is an error whatever the CUDA runtime allows (gpu_drivers.yaml)."""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import driver_at_least, finding
from envgen.kb.versions import vtuple
from envgen.plan.stack import Target


def _compat_note(compat: str | None) -> str:
    return f" and below its minor-version-compatibility minimum {compat}" if compat else ""


def driver_minimum(ctx: CheckContext) -> list[Finding]:
    driver = ctx.host.driver
    if driver is None or not ctx.gpu:
        return []
    judged = (_cuda_driver(ctx, version, why, driver) for version, why in ctx.plan.cuda.in_use)
    return [f for f in judged if f is not None]


def _cuda_driver(ctx: CheckContext, version: str, why: str, driver: str) -> Finding | None:
    """The host driver against one CUDA the image uses: unknown, too old, or within minor-version compatibility."""
    windows = ctx.host.windows_driver
    where = "Windows/WSL2" if windows else "Linux"
    toolkit = ctx.kb.cuda(version)
    if toolkit is None:
        return finding(
            "warning",
            "cuda-unknown",
            f"CUDA {version} ({why}) is not in the knowledge base; its minimum driver is unknown",
            "use a CUDA release listed in cuda.yaml",
            "cuda.yaml",
        )
    need = toolkit.driver_windows_min if windows else toolkit.driver_linux_min
    compat = toolkit.minor_compat_driver_windows_min if windows else toolkit.minor_compat_driver_min
    if driver_at_least(driver, need):
        return None
    if compat is not None and driver_at_least(driver, compat):
        if any(_branch_finding(ctx, t, driver) for t in ctx.targets):
            return None  # the driver does not drive the GPU at all (gpu_driver_branch): no "it runs"
        return finding(
            "warning",
            "driver-minor-compat",
            f"driver {driver} is below CUDA {version}'s "
            f"{where} minimum {need} ({why}) but within CUDA {vtuple(version)[0]}.x minor-version "
            f"compatibility (>= {compat}): it runs, but PTX JIT of newer code and some features "
            "fail",
            f"upgrade the driver to >= {need}",
            toolkit.cite(),
        )
    return finding(
        "error",
        "driver-too-old",
        f"driver {driver} is below CUDA {version}'s {where} minimum {need}{_compat_note(compat)} "
        f'({why}): "CUDA driver version is insufficient for CUDA runtime version"',
        f"upgrade the driver to >= {need}, or choose an older CUDA",
        toolkit.cite(),
    )


def _branch_finding(ctx: CheckContext, target: Target, driver: str) -> Finding | None:
    """The driver's branch against the GPU's architecture row: older than its first toolkit's, or past its last."""
    model = target.model
    row = ctx.kb.gpu_architecture(model.compute_capability) if model is not None else None
    if model is None or row is None:
        return None
    branch = vtuple(driver)[0]
    if row.last_driver_branch is not None and branch > row.last_driver_branch:
        return finding(
            "error", "gpu-driver-dropped",
            f"driver {driver} (R{branch}) no longer supports {target.label} ({row.architecture}, compute capability "
            f"{model.compute_capability}): its last driver branch is R{row.last_driver_branch}",
            f"use an R{row.last_driver_branch} driver for this GPU", row.cite(),
        )
    toolkit = ctx.kb.cuda(row.first_cuda)
    if toolkit is None:
        return None
    first = toolkit.driver_windows_min if ctx.host.windows_driver else toolkit.driver_linux_min
    if branch >= vtuple(first)[0]:
        return None
    return finding(
        "error", "gpu-driver-too-old",
        f"driver {driver} (R{branch}) does not know {target.label} ({row.architecture}, compute capability "
        f"{model.compute_capability}): its first toolkit, CUDA {row.first_cuda}, starts at driver {first} "
        f"(R{vtuple(first)[0]}), whatever CUDA runtime the image carries",
        f"upgrade the driver to R{vtuple(first)[0]} or newer (>= {first})", f"{row.cite()}; {toolkit.cite()}",
    )


def gpu_driver_branch(ctx: CheckContext) -> list[Finding]:
    """Every target GPU against the host driver's branch (NVIDIA's architecture matrix, gpu_drivers.yaml)."""
    driver = ctx.host.driver
    if driver is None or not ctx.gpu:
        return []
    found = (_branch_finding(ctx, t, driver) for t in ctx.targets)
    return [f for f in found if f is not None]


RULES = [driver_minimum, gpu_driver_branch]
