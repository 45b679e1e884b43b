"""PyTorch placement and correctness checks of the envgen probe: matmul and convolution against a
float64 CPU reference, mixed precision, a few training steps. Python 3.7+.

Each check is ``func(ctx) -> (message, figures)`` and raises ``Skip`` or ``Fail`` (core.common).
"""

import time

from ..core.common import Fail, Skip
from ..core.versions import cudnn_text
from .matmul import judge_error, matmul_verdict
from .torch_base import TOLERANCE, _device, _fp32_precision, _precisions, _rel_error, _require_torch


def check_matmul(ctx):
    torch = _require_torch(ctx)
    device = _device(ctx, torch)
    n = min(ctx.matmul_size, 1024)
    gen = torch.Generator().manual_seed(0)
    a = torch.randn(n, n, generator=gen)
    b = torch.randn(n, n, generator=gen)
    reference = torch.matmul(a.double(), b.double())
    figures = {"n": n, "device": str(device)}
    bad = []
    for label, dtype, allow_tf32 in _precisions(torch, device):
        with _fp32_precision(torch, allow_tf32):
            c = torch.matmul(a.to(device=device, dtype=dtype), b.to(device=device, dtype=dtype))
            if device.type == "cuda":
                torch.cuda.synchronize()
        if c.device.type != device.type:
            raise Fail("matmul placed on the CPU: result on %s, expected %s" % (c.device, device), figures)
        judge_error(figures, bad, label, _rel_error(torch, c, reference), TOLERANCE)
        figures["result_device_" + label] = str(c.device)
    return matmul_verdict(n, device, bad, figures)


def check_conv(ctx):
    torch = _require_torch(ctx)
    device = _device(ctx, torch)
    functional = torch.nn.functional
    figures = {"device": str(device)}
    if device.type == "cuda":
        figures["cudnn_available"] = bool(torch.backends.cudnn.is_available())
        figures["cudnn_enabled"] = bool(torch.backends.cudnn.enabled)
        figures["cudnn_version"] = cudnn_text(torch.backends.cudnn.version())
        if not figures["cudnn_available"]:
            raise Fail("cuDNN is not available to torch (torch.backends.cudnn.is_available() is False)",
                       figures)
    gen = torch.Generator().manual_seed(1)
    batch = max(1, min(ctx.batch_size, 32))
    x = torch.randn(batch, 16, 32, 32, generator=gen)
    w = torch.randn(32, 16, 3, 3, generator=gen) * 0.1
    grad_out = torch.randn(batch, 32, 32, 32, generator=gen)
    x_ref = x.double().requires_grad_()
    w_ref = w.double().requires_grad_()
    y_ref = functional.conv2d(x_ref, w_ref, padding=1)
    y_ref.backward(grad_out.double())
    with _fp32_precision(torch, False):
        xd = x.to(device).requires_grad_()
        wd = w.to(device).requires_grad_()
        y = functional.conv2d(xd, wd, padding=1)
        y.backward(grad_out.to(device))
        if device.type == "cuda":
            torch.cuda.synchronize()
    errors = {
        "rel_error_forward": _rel_error(torch, y, y_ref),
        "rel_error_grad_input": _rel_error(torch, xd.grad, x_ref.grad),
        "rel_error_grad_weight": _rel_error(torch, wd.grad, w_ref.grad),
    }
    figures.update((key, float("%.3g" % value)) for key, value in errors.items())
    figures["shape"] = list(x.shape)
    if y.device.type != device.type:
        raise Fail("convolution placed on the CPU: result on %s" % y.device, figures)
    if not max(errors.values()) < 1e-3:
        raise Fail("convolution result differs from the reference (max relative error %.3g)"
                   % max(errors.values()), figures)
    return "conv2d forward and backward on %s match float64 CPU reference" % device, figures




# --- mixed precision and training ------------------------------------------------------------------

def check_amp(ctx):
    torch = _require_torch(ctx)
    device = _device(ctx, torch)
    torch.manual_seed(2)
    nn = torch.nn
    model = nn.Sequential(nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10)).to(device)
    x = torch.randn(max(ctx.batch_size, 8), 256, device=device)
    if device.type == "cuda":
        major, _minor = torch.cuda.get_device_capability(device)
        bf16_ok = major >= 8 and getattr(torch.cuda, "is_bf16_supported", lambda: False)()
        dtype = torch.bfloat16 if bf16_ok else torch.float16
    else:
        dtype = getattr(torch, "bfloat16", None)
    if hasattr(torch, "autocast"):
        autocast = torch.autocast(device_type=device.type, dtype=dtype)
    elif device.type == "cuda":
        autocast, dtype = torch.cuda.amp.autocast(), torch.float16
    else:
        raise Skip("mixed precision on the CPU needs torch >= 1.10")
    with _fp32_precision(torch, False):
        reference = model(x)
    with autocast:
        out = model(x)
        loss = out.float().pow(2).mean()
    scaled = loss
    scaler = None
    if dtype == torch.float16 and device.type == "cuda":
        scaler = _grad_scaler(torch)
        scaled = scaler.scale(loss)
    scaled.backward()
    grads_finite = all(bool(torch.isfinite(p.grad).all()) for p in model.parameters())
    error = _rel_error(torch, out.float(), reference)
    figures = {"device": str(device), "dtype": str(dtype).replace("torch.", ""),
               "output_dtype": str(out.dtype).replace("torch.", ""),
               "rel_error_vs_fp32": float("%.3g" % error),
               "grad_scaler": scaler is not None, "grads_finite": grads_finite}
    if out.dtype != dtype:
        raise Fail("autocast did not run the linear layers in %s (output %s)" % (dtype, out.dtype), figures)
    if not grads_finite or not error < 5e-2:
        raise Fail("mixed-precision result differs from the reference (relative error %.3g, finite grads %s)"
                   % (error, grads_finite), figures)
    return "autocast %s on %s: relative error %.2g vs fp32" % (figures["dtype"], device, error), figures


def _grad_scaler(torch):
    amp = getattr(torch, "amp", None)
    if amp is not None and hasattr(amp, "GradScaler"):
        return amp.GradScaler("cuda")
    return torch.cuda.amp.GradScaler()


def check_train(ctx):
    torch = _require_torch(ctx)
    device = _device(ctx, torch)
    torch.manual_seed(3)
    gen = torch.Generator().manual_seed(3)
    batch = ctx.batch_size
    images = torch.randn(batch, 1, 28, 28, generator=gen)
    teacher = torch.randn(28 * 28, 10, generator=gen)
    labels = torch.argmax(images.reshape(batch, -1) @ teacher, dim=1)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 8, 3), torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(),
        torch.nn.Linear(8 * 13 * 13, 10),
    ).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = torch.nn.CrossEntropyLoss()
    images, labels = images.to(device), labels.to(device)
    losses = []
    began = time.perf_counter()
    for _ in range(ctx.train_steps):
        optimizer.zero_grad()
        loss = loss_fn(model(images), labels)
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    seconds = time.perf_counter() - began
    on_device = all(p.device.type == device.type for p in model.parameters())
    figures = {"device": str(device), "batch": batch, "steps": ctx.train_steps,
               "loss_first": round(losses[0], 4), "loss_last": round(losses[-1], 4),
               "losses": [round(v, 4) for v in losses], "seconds": round(seconds, 3)}
    if not on_device:
        raise Fail("training placed on the CPU: parameters are not on %s" % device, figures)
    if not losses[-1] < losses[0] or any(v != v for v in losses):
        raise Fail("loss did not decrease: %.4f -> %.4f" % (losses[0], losses[-1]), figures)
    return ("%d steps of an MNIST-shaped CNN on %s: loss %.3f -> %.3f"
            % (ctx.train_steps, device, losses[0], losses[-1]), figures)


