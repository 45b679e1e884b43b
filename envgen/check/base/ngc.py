"""NGC framework images: compute capability >= 6.0, the NGC driver minimum, the framework they ship."""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import driver_at_least, finding
from envgen.kb.models import NgcRelease
from envgen.kb.versions import cc_tuple, minor, same_version, vtuple


def ngc_known(ctx: CheckContext) -> list[Finding]:
    if not ctx.plan.family.release_table or ctx.ngc is not None:
        return []
    near = ctx.kb.ngc_nearest(ctx.profile.base)
    taken = (f"; a cuda/python left out of the profile is taken from the nearest release with a row, {near.tag} "
             f"(CUDA {near.cuda}, Python {near.python}), which may differ" if near is not None else "")
    return [
        finding(
            "warning",
            "ngc-unknown",
            f"NGC image {ctx.profile.base} is not in the knowledge base: its CUDA, cuDNN, Python, framework "
            f"version and driver minimum cannot be checked (the GPU floor of every NGC release still applies)"
            f"{taken}",
            "use a release listed in ngc.yaml, or state cuda/cudnn/python from the release notes",
            "ngc.yaml",
        )
    ]


def _floor(ctx: CheckContext) -> tuple[str, str] | None:
    """(compute capability, cite) an NGC image needs: the highest of the family's floor (every release,
    sourced), the release row's own, and the minimum of the CUDA the release is built on (CUDA 13 builds no
    code below 7.5)."""
    family, ngc = ctx.kb.ngc_family_for(ctx.profile.base), ctx.ngc
    floors = [(r.cc_min, r.cite()) for r in (family, ngc) if r is not None and r.cc_min is not None]
    toolkit = ctx.kb.cuda(minor(ngc.cuda)) if ngc is not None else None
    if toolkit is not None:
        floors.append((toolkit.cc_min, toolkit.cite()))
    return max(floors, key=lambda f: cc_tuple(f[0]), default=None)


def ngc_gpus(ctx: CheckContext) -> list[Finding]:
    """The GPU minimum of the NGC image (see ``_floor``)."""
    floor = _floor(ctx) if ctx.plan.family.release_table else None
    if floor is None:
        return []
    cc_min, cite = floor
    return [
        finding(
            "error",
            "ngc-gpu-too-old",
            f"{ctx.profile.base} needs compute capability >= {cc_min}; "
            f"{t.label} has {t.model.compute_capability} ({t.model.architecture})",
            "use a conda/pip profile for this GPU (NGC images do not support it)",
            cite,
        )
        for t in ctx.targets
        if t.model is not None and cc_tuple(t.model.compute_capability) < cc_tuple(cc_min)
    ]


def _driver_min(ctx: CheckContext, ngc: NgcRelease) -> tuple[str, str] | None:
    """(minimum driver, cite): the release's stated one, else that of the CUDA it is built on."""
    if ngc.driver_min is not None:
        return ngc.driver_min, ngc.cite()
    toolkit = ctx.kb.cuda(minor(ngc.cuda))
    return (toolkit.driver_linux_min, toolkit.cite()) if toolkit is not None else None


def ngc_driver(ctx: CheckContext) -> list[Finding]:
    ngc, driver = ctx.ngc, ctx.host.driver
    need = _driver_min(ctx, ngc) if ngc is not None and driver is not None else None
    if ngc is None or driver is None or need is None or driver_at_least(driver, need[0]):
        return []
    minimum, cite = need
    forward = _forward_compat(ctx, ngc, driver, minimum, cite)
    if forward is not None:
        return forward
    return [
        finding(
            "error",
            "ngc-driver-too-old",
            f"{ngc.image}:{ngc.tag} needs driver >= {minimum} (CUDA "
            f"{ngc.cuda}); the host has {driver}",
            f"upgrade the driver to >= {minimum} or use an older NGC release",
            cite,
        )
    ]


def _forward_compat(ctx: CheckContext, ngc: NgcRelease, driver: str, minimum: str, cite: str) -> list[Finding] | None:
    """The findings for a driver below the release's minimum on a data-centre branch that CUDA forward
    compatibility serves; None when the driver is on no such branch."""
    # forward compatibility is the base's path: it holds while the image keeps the base's own NVIDIA_REQUIRE_CUDA
    # (plan.require); code envgen adds on a newer CUDA needs that CUDA's driver (toolkit-refuses says so)
    kept = ctx.plan.nvidia_require_cuda is None
    branches = [
        b for b in ngc.datacenter_drivers
        if kept and vtuple(b)[0] == vtuple(driver)[0] and driver_at_least(driver, b)
    ]
    if not branches:
        return None
    family = ctx.kb.ngc_family_for(ctx.profile.base)
    segments = family.forward_compat_segments if family is not None else ["datacenter"]
    excluded = [t for t in ctx.targets if t.model is not None and t.model.segment not in (*segments, "synthetic")]
    if excluded:
        who = ", ".join(f"{t.label} ({t.model.segment})" for t in excluded if t.model is not None)
        return [
            finding(
                "error",
                "ngc-driver-no-forward-compat",
                f"driver {driver} is below {ngc.tag}'s minimum {minimum}; data-centre GPUs may run it "
                f"through CUDA forward compatibility (branch {branches[0]}+), but {who} get no such path",
                f"upgrade the driver to >= {minimum} or use an older NGC release",
                family.cite() if family is not None else cite,
            )
        ]
    return [
        finding(
            "warning",
            "ngc-driver-forward-compat",
            f"driver {driver} is below {ngc.tag}'s minimum "
            f"{minimum} but is data-centre branch {branches[0]}+, supported through CUDA forward "
            "compatibility on data-centre GPUs only (the image keeps the base's own NVIDIA_REQUIRE_CUDA, "
            "so the NVIDIA Container Toolkit starts it)",
            f"upgrade to >= {minimum} on other GPUs",
            cite,
        )
    ]


def ngc_framework(ctx: CheckContext) -> list[Finding]:
    ngc = ctx.ngc
    if ngc is None:
        return []
    given = ctx.profile.frameworks.tensorflow if ngc.framework == "tensorflow" else ctx.profile.torch_version
    if given and ngc.framework_version and not same_version(given, ngc.framework_version):
        return [
            finding(
                "warning",
                "ngc-framework-differs",
                f"{ngc.tag} ships {ngc.framework} "
                f"{ngc.framework_version}; the profile asks for {given}, and a pip install would replace "
                "NVIDIA's build",
                f"set {ngc.framework} to {ngc.framework_version} or pick another NGC release",
                ngc.cite(),
            )
        ]
    return []


RULES = [ngc_known, ngc_gpus, ngc_driver, ngc_framework]
