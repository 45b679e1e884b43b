"""One GPU call per extension package, each against a reference: a flash-attention forward and an xFormers
memory-efficient attention (float32 attention on the same GPU), an 8-bit matmul (bitsandbytes Linear8bitLt), a
CuPy kernel compiled at run time (NVRTC), DeepSpeed's accelerator, a Triton kernel, a JAX ``jit`` on the GPU, and
a serving engine's own RMSNorm kernel (vLLM's ``_C.rms_norm``, sgl-kernel's ``rmsnorm``) on small tensors, no
model weights. Each is ``call(ctx, module) -> (message, figures)`` and raises ``Fail``. Python 3.7+."""

import codecs
import importlib
import math
import os
import traceback

from ..core.common import CaptureStderr, Fail, Skip

NO_CALL = {"apex": "NVIDIA Apex's fused kernels exist only in a source build; the import proves the package"}


def _torch_gpu(ctx):
    """torch on a usable GPU, for the packages that run on torch tensors."""
    facts = ctx.frameworks.get("torch") or {}
    if not facts.get("gpu_ok"):
        raise Skip("torch cannot use the GPU (see torch.devices): the call needs CUDA tensors")
    import torch
    return torch


def _rel(torch, value, reference):
    diff = value.float() - reference.float()
    return float(torch.norm(diff) / torch.norm(reference.float()))


def _attention_reference(torch, q, k, v, causal):
    """softmax(q k^T / sqrt(d)) v in float32; q, k, v are (batch, seq, heads, dim)."""
    q, k, v = (t.float().transpose(1, 2) for t in (q, k, v))
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if causal:
        mask = torch.ones(scores.shape[-2:], dtype=torch.bool, device=scores.device).triu(1)
        scores = scores.masked_fill(mask, float("-inf"))
    return (scores.softmax(-1) @ v).transpose(1, 2)


def _qkv(torch, shape=(2, 256, 8, 64)):
    gen = torch.Generator(device="cuda").manual_seed(0)
    return [torch.randn(*shape, device="cuda", dtype=torch.float16, generator=gen) for _ in range(3)]


def call_flash_attn(ctx, module):
    torch = _torch_gpu(ctx)
    from flash_attn import flash_attn_func
    q, k, v = _qkv(torch)
    out = flash_attn_func(q, k, v, causal=True)
    torch.cuda.synchronize()
    error = _rel(torch, out, _attention_reference(torch, q, k, v, True))
    figures = {"shape": list(q.shape), "dtype": "fp16", "causal": True, "rel_error": float("%.3g" % error)}
    if not error < 2e-2:
        raise Fail("flash_attn_func differs from the float32 attention (relative error %.3g)" % error, figures)
    return "flash_attn_func forward %s fp16 causal matches float32 attention (rel error %.2g)" % (
        "x".join(str(s) for s in q.shape), error), figures


def call_xformers(ctx, module):
    torch = _torch_gpu(ctx)
    import xformers.ops
    q, k, v = _qkv(torch)
    out = xformers.ops.memory_efficient_attention(q, k, v)
    torch.cuda.synchronize()
    error = _rel(torch, out, _attention_reference(torch, q, k, v, False))
    figures = {"shape": list(q.shape), "dtype": "fp16", "rel_error": float("%.3g" % error)}
    if not error < 2e-2:
        raise Fail("memory_efficient_attention differs from float32 attention (relative error %.3g)" % error,
                   figures)
    return "memory_efficient_attention matches float32 attention (rel error %.2g)" % error, figures


def call_bitsandbytes(ctx, module):
    torch = _torch_gpu(ctx)
    torch.manual_seed(4)
    dense = torch.nn.Linear(256, 128, bias=False).half()
    int8 = module.nn.Linear8bitLt(256, 128, bias=False, has_fp16_weights=False, threshold=0.0)
    int8.load_state_dict(dense.state_dict())
    int8 = int8.cuda()  # the weights are quantised to int8 here
    x = torch.randn(32, 256, device="cuda", dtype=torch.float16)
    out = int8(x)
    torch.cuda.synchronize()
    reference = x.float() @ dense.weight.cuda().float().t()
    error = _rel(torch, out, reference)
    figures = {"shape": [32, 256, 128], "weight_dtype": str(int8.weight.dtype).replace("torch.", ""),
               "rel_error": float("%.3g" % error)}
    if not error < 5e-2:
        raise Fail("8-bit matmul differs from the fp32 product (relative error %.3g)" % error, figures)
    return "Linear8bitLt 8-bit matmul (32x256 @ 256x128) matches fp32 (rel error %.2g)" % error, figures


def call_cupy(ctx, module):
    n = 1 << 20
    kernel = module.ElementwiseKernel("float32 x", "float32 y", "y = 2 * x + 1", "envgen_probe_axpb")
    x = module.arange(n, dtype=module.float32)
    y = kernel(x)
    module.cuda.Stream.null.synchronize()
    got = [float(v) for v in y[[0, 1, n - 1]].get()]
    props = module.cuda.runtime.getDeviceProperties(0)
    name = codecs.decode(props["name"], "utf-8") if isinstance(props["name"], bytes) else str(props["name"])
    figures = {"n": n, "device": name, "cuda_runtime": module.cuda.runtime.runtimeGetVersion(),
               "values": got}
    if got != [1.0, 3.0, 2.0 * (n - 1) + 1]:
        raise Fail("CuPy kernel gave %s, expected [1, 3, %d]" % (got, 2 * (n - 1) + 1), figures)
    return "ElementwiseKernel compiled (NVRTC) and ran on %s" % name, figures


def call_deepspeed(ctx, module):
    from deepspeed.accelerator import get_accelerator
    accelerator = get_accelerator()
    figures = {"accelerator": accelerator.device_name(), "available": bool(accelerator.is_available())}
    if figures["accelerator"] != "cuda" or not figures["available"]:
        raise Fail("DeepSpeed's accelerator is %s (available %s), not CUDA" % (
            figures["accelerator"], figures["available"]), figures)
    return "DeepSpeed accelerator cuda, %d device(s)" % accelerator.device_count(), dict(
        figures, devices=accelerator.device_count())


def call_triton(ctx, module):
    torch = _torch_gpu(ctx)
    from . import ext_triton
    error, n = ext_triton.vector_add(torch)
    figures = {"n": n, "max_abs_error": error}
    if error != 0.0:
        raise Fail("Triton vector add differs from torch's (max error %g)" % error, figures)
    return "a Triton kernel (vector add, n=%d) compiled and matches torch" % n, figures


def call_jax(ctx, module):
    import jax.numpy as jnp
    error = "no GPU device"
    with CaptureStderr() as captured:
        try:
            gpus = module.devices("gpu")
        except RuntimeError as exc:  # "Unknown backend: 'gpu' requested", after the CUDA backend failed
            gpus, error = [], exc
    ctx.logs["jax"] = captured.text
    if not gpus:
        raise Fail("JAX has no GPU backend: %s" % error, log=captured.text)
    f = module.jit(lambda a: jnp.dot(a, a.T) + 1.0)
    a = module.device_put(jnp.ones((256, 256), dtype=jnp.float32), gpus[0])
    out = f(a).block_until_ready()
    value = float(out[0, 0])
    placed = str(getattr(out, "devices", lambda: {gpus[0]})())
    figures = {"device": str(gpus[0]), "result_devices": placed, "value": value, "gpus": len(gpus)}
    if value != 257.0:
        raise Fail("jax.jit result %s, expected 257.0" % value, figures)
    return "jax.jit ran on %s: result matches" % gpus[0], figures


# an engine's compiled ops (its own CUDA kernels, linked against torch and one CUDA runtime): an ABI or CUDA
# mismatch shows as an ImportError here ("undefined symbol", "libcudart.so.13: cannot open shared object file")
COMPILED = {"vllm": "vllm._C", "sglang": "sgl_kernel"}
# the words of a loader that only lacks the driver (a host without a GPU): not the package's fault
_NO_DRIVER = ("libcuda.so", "no CUDA GPUs", "Found no NVIDIA driver")


def load_compiled(module_name, figures, module=None):
    """Import the engine's compiled ops; Fail on an ABI or CUDA-runtime mismatch, say so when only the driver
    is missing; then every shared object the engine ships (load_objects)."""
    ops = COMPILED[module_name]
    try:
        importlib.import_module(ops)
    except Exception as exc:  # noqa: BLE001 - the loader's own words are the finding
        text = str(exc)
        if not any(word in text for word in _NO_DRIVER):
            figures["compiled_ops"] = "failed"
            raise Fail("%s (the engine's compiled ops) cannot be loaded: %s" % (ops, text),
                       figures, log=traceback.format_exc()) from exc
        figures["compiled_ops"] = "needs the driver"
        said = "%s needs the NVIDIA driver to load (%s): it loads in the GPU tier" % (ops, text.strip())
    else:
        figures["compiled_ops"] = "loaded"
        said = "%s loads" % ops
    return said + load_objects(module, figures)


def load_objects(module, figures):
    """dlopen every shared object under the engine's package (torch is loaded by then, so its libraries and the
    CUDA runtime it found are there for them): those that load without a driver are proven here, those whose
    loader names only the driver (libcuda.so.1, a DT_NEEDED of theirs) wait for the GPU tier, any other
    failure fails the check with the loader's words."""
    import ctypes  # here: a Python without ctypes fails the library tier's own check, not the whole probe

    root = os.path.dirname(getattr(module, "__file__", None) or "")
    if not root:
        return ""
    found = sorted(os.path.relpath(os.path.join(top, name), root)
                   for top, _, names in os.walk(root) for name in names if name.endswith(".so"))
    loaded, waiting = [], []
    for name in found:
        try:
            ctypes.CDLL(os.path.join(root, name))
        except OSError as exc:
            if not any(word in str(exc) for word in _NO_DRIVER):
                figures["shared_objects"] = {"loaded": loaded, "need the driver": waiting, "failed": name}
                raise Fail("%s (shipped by the engine) cannot be loaded: %s" % (name, exc), figures) from exc
            waiting.append(name)
        else:
            loaded.append(name)
    figures["shared_objects"] = {"loaded": loaded, "need the driver": waiting}
    if not found:
        return ""
    text = "; %d of %d shared objects load without a driver" % (len(loaded), len(found))
    return text + ("; waiting for the driver (libcuda.so.1): %s" % ", ".join(waiting) if waiting else "")


def _rms_reference(torch, x, weight, eps):
    xf = x.float()
    return xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * weight.float()


def _rms_inputs(torch):
    gen = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(16, 1024, device="cuda", dtype=torch.float16, generator=gen)
    weight = torch.randn(1024, device="cuda", dtype=torch.float16, generator=gen)
    return x, weight


def _rms_check(torch, name, out, x, weight, eps):
    torch.cuda.synchronize()
    error = _rel(torch, out, _rms_reference(torch, x, weight, eps))
    figures = {"kernel": name, "shape": list(x.shape), "dtype": "fp16", "rel_error": float("%.3g" % error)}
    if not error < 1e-2:
        raise Fail("%s differs from the float32 RMSNorm (relative error %.3g)" % (name, error), figures)
    return "%s (16x1024 fp16) matches float32 RMSNorm (rel error %.2g)" % (name, error), figures


def call_vllm(ctx, module):
    """vLLM's own RMSNorm kernel (torch.ops._C.rms_norm, registered by vllm._C): compiled for this GPU or not."""
    torch = _torch_gpu(ctx)
    importlib.import_module("vllm._C")
    x, weight = _rms_inputs(torch)
    out = torch.empty_like(x)
    torch.ops._C.rms_norm(out, x, weight, 1e-6)
    return _rms_check(torch, "vllm _C.rms_norm", out, x, weight, 1e-6)


def call_sglang(ctx, module):
    """sgl-kernel's RMSNorm (the kernel package SGLang pins): compiled for this GPU and this torch or not."""
    torch = _torch_gpu(ctx)
    sgl_kernel = importlib.import_module("sgl_kernel")
    x, weight = _rms_inputs(torch)
    out = sgl_kernel.rmsnorm(x, weight, 1e-6)
    return _rms_check(torch, "sgl_kernel.rmsnorm", out, x, weight, 1e-6)


CALLS = {
    "flash_attn": call_flash_attn,
    "xformers": call_xformers,
    "bitsandbytes": call_bitsandbytes,
    "cupy": call_cupy,
    "deepspeed": call_deepspeed,
    "triton": call_triton,
    "jax": call_jax,
    "vllm": call_vllm,
    "sglang": call_sglang,
}
