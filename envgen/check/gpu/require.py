"""`check --driver` against the image's NVIDIA_REQUIRE_CUDA (``plan.require``: the value the render writes,
evaluated exactly as the NVIDIA Container Toolkit evaluates it), so that check and the runtime cannot disagree."""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import finding
from envgen.plan.require import ToolkitFacts, driver_cuda, evaluate


def toolkit_refuses(ctx: CheckContext) -> list[Finding]:
    """The host's driver against the requirement the image declares, evaluated as the toolkit does."""
    driver = ctx.host.driver
    declared = ctx.plan.nvidia_require_cuda if ctx.gpu else None  # the value the render writes
    if driver is None or declared is None:
        return []
    cuda = driver_cuda(ctx.kb, driver, ctx.host.windows_driver)
    verdict = evaluate(declared, ToolkitFacts(cuda=cuda, driver=driver))
    if verdict.ok:
        return []
    need = declared.split(">=", 1)[1]
    row = ctx.kb.cuda(need)
    minimum = (row.driver_windows_min if ctx.host.windows_driver else row.driver_linux_min) if row else None
    return [finding(
        "error", "toolkit-refuses",
        f'the NVIDIA Container Toolkit refuses to start the image on driver {driver} (CUDA {cuda or "unknown"}): '
        f'NVIDIA_REQUIRE_CUDA="{declared}" gives "unsatisfied condition: {verdict.unsatisfied}"',
        f"upgrade the driver to >= {minimum}" if minimum else "upgrade the driver",
        row.cite() if row else "cuda.yaml",
    )]


RULES = [toolkit_refuses]
