"""What every PyTorch check of the envgen probe shares: the import, the facts, the GPU gate, the
precisions and the error measure. torch is imported inside the checks; Python 3.7+."""

import contextlib

from ..core.common import Skip

FRAMEWORK = "torch"
# Relative Frobenius error allowed against a float64 reference, by the precision of the product.
TOLERANCE = {"fp32": 1e-4, "tf32": 5e-3, "fp16": 5e-3, "bf16": 2e-2}


def _import_torch():
    import torch
    return torch


def _facts(ctx):
    return ctx.frameworks.setdefault(FRAMEWORK, {})


def _require_torch(ctx):
    if FRAMEWORK not in ctx.frameworks:
        raise Skip("torch is not available (see torch.version)")
    return _import_torch()


def _require_gpu(ctx):
    reason = ctx.gpu_skip_reason()
    if reason:
        raise Skip(reason)
    if not _facts(ctx).get("gpu_ok"):
        raise Skip("torch cannot use the GPU (see torch.devices)")


def _device(ctx, torch):
    """'cuda:0' when the GPU checks run, 'cpu' in CPU-only mode; Skip when the GPU is unusable."""
    if ctx.mode == "cpu-only":
        return torch.device("cpu")
    _require_gpu(ctx)
    if _facts(ctx).get("kernels_ok") is False:
        raise Skip("no kernels for this GPU (see torch.kernels)")
    return torch.device("cuda:0")


@contextlib.contextmanager
def _fp32_precision(torch, allow_tf32):
    """Matmul and cuDNN precision for fp32 inputs: IEEE fp32 or TF32 (Ampere and later)."""
    if hasattr(torch, "set_float32_matmul_precision"):
        saved = torch.get_float32_matmul_precision()
        torch.set_float32_matmul_precision("high" if allow_tf32 else "highest")
    else:
        saved = getattr(torch.backends.cuda.matmul, "allow_tf32", None)
        if saved is not None:
            torch.backends.cuda.matmul.allow_tf32 = allow_tf32
    saved_cudnn = getattr(torch.backends.cudnn, "allow_tf32", None)
    if saved_cudnn is not None:
        torch.backends.cudnn.allow_tf32 = allow_tf32
    try:
        yield
    finally:
        if hasattr(torch, "set_float32_matmul_precision"):
            torch.set_float32_matmul_precision(saved)
        elif saved is not None:
            torch.backends.cuda.matmul.allow_tf32 = saved
        if saved_cudnn is not None:
            torch.backends.cudnn.allow_tf32 = saved_cudnn


def _precisions(torch, device):
    """(label, dtype, allow_tf32) the GPU supports; fp32 only on the CPU."""
    if device.type != "cuda":
        return [("fp32", torch.float32, False)]
    major, _minor = torch.cuda.get_device_capability(device)
    rows = [("fp32", torch.float32, False)]
    if major >= 8:
        rows.append(("tf32", torch.float32, True))
    rows.append(("fp16", torch.float16, False))
    bf16 = getattr(torch, "bfloat16", None)
    if bf16 is not None and major >= 8:
        rows.append(("bf16", bf16, False))
    return rows


def _rel_error(torch, value, reference):
    diff = value.detach().double().cpu() - reference.detach().double().cpu()
    return float(torch.norm(diff) / torch.norm(reference.detach().double().cpu()))


# --- placement and correctness -------------------------------------------------------------------
