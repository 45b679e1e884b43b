"""What an image's preflight checks before the user's command (the probe's ``envgen_probe.py preflight``, run by
the image's entrypoint under any runtime): whether the image needs a GPU, the driver each CUDA runtime its code
calls needs (the plan's ``cuda.in_use``, judged by cuda.yaml's Linux minimum and minor-version compatibility floor,
as ``check --driver`` judges them), whether a data-centre GPU may run it through forward compatibility (an NGC base
carries NVIDIA's compatibility libraries: ``check.base.ngc``), and the GPU code each framework build ships (cubins
and PTX, read from the wheels: pytorch.yaml and tensorflow.yaml). Written into /etc/envgen/profile.json under
``preflight``: made once here from the plan's rows, never worked out again by render or the image."""

from __future__ import annotations

from typing import Any

from envgen.kb import KnowledgeBase
from envgen.plan.stack import Stack

PREFLIGHT_SCHEMA = "envgen.preflight/1"


def _drivers(stack: Stack, kb: KnowledgeBase) -> list[dict[str, Any]]:
    out = []
    for version, why in stack.cuda_in_use:
        row = kb.cuda(version)
        out.append({"cuda": version, "why": why,
                    "driver_min": row.driver_linux_min if row is not None else None,
                    "minor_compat_min": row.minor_compat_driver_min if row is not None else None})
    return out


def _kernels(stack: Stack, tf_cuda: str | None) -> list[dict[str, Any]]:
    profile, variant, tf = stack.profile, stack.torch_variant, stack.tf_build
    out = []
    if variant is not None and variant.cuda and (variant.arch_list or variant.ptx):
        version = str(profile.frameworks.pytorch)
        out.append({"what": f"torch {version}" if "+" in version else f"torch {version}+{variant.tag}",
                    "code": [*variant.arch_list, *variant.ptx]})
    if tf is not None and tf_cuda and stack.ngc is None and (tf.arch_list or tf.ptx):
        out.append({"what": f"tensorflow {profile.frameworks.tensorflow} (CUDA {tf.cuda})",
                    "code": [*tf.arch_list, *tf.ptx]})
    return out


def preflight_document(stack: Stack, kb: KnowledgeBase, tf_cuda: str | None) -> dict[str, Any]:
    """The ``preflight`` facts of /etc/envgen/profile.json (a CPU image's: no GPU needed, nothing to check)."""
    gpu = stack.gpu
    # what the fix's `envgen suggest --frameworks` names (it takes tensorflow and pytorch)
    frameworks = [name for name in ("tensorflow", "pytorch") if getattr(stack.profile.frameworks, name)]
    return {"schema": PREFLIGHT_SCHEMA, "profile": stack.profile.name, "gpu_required": gpu, "frameworks": frameworks,
            "forward_compat": gpu and stack.ngc is not None,
            "drivers": _drivers(stack, kb) if gpu else [], "kernels": _kernels(stack, tf_cuda) if gpu else []}
