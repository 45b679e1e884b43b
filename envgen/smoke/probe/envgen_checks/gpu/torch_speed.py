"""PyTorch speed check of the envgen probe: matmul TFLOP/s, peak and sustained, against the CPU.
Python 3.7+."""

import time

from .timing import (
    median,
    method_text,
    plan_speed,
    record_precision,
    speed_budget,
    speed_message,
    speed_size,
    sustained_time,
    tflops,
)
from .torch_base import _device, _fp32_precision, _precisions, _require_torch


def time_cuda(torch, func, share_s, sleep=time.sleep):
    """Time ``func`` (one product) on the GPU as ``timing.plan_speed`` says, within ``share_s``
    seconds: (peak seconds per call, sustained seconds per call or None, plan). Device events bracket
    each timed loop; the first call (library handles, kernel choice) and the timing of one call that
    sizes the plan stay out of the figures."""
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)

    def timed(count):
        start.record()
        for _ in range(count):
            func()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1000.0

    func()
    torch.cuda.synchronize()
    plan = plan_speed(timed(1), share_s)
    peaks = []
    for _ in range(plan.windows):
        torch.cuda.synchronize()
        sleep(plan.pause_s)  # idle: the SM clock comes back from a power-capped state
        for _ in range(plan.warmup):
            func()
        torch.cuda.synchronize()
        peaks.append(timed(plan.iters) / plan.iters)
    return median(peaks), sustained_time(func, timed, plan), plan


def time_cpu(func, repeats=3):
    func()
    samples = []
    for _ in range(repeats):
        began = time.perf_counter()
        func()
        samples.append(time.perf_counter() - began)
    return median(samples)


def check_speed(ctx):
    torch = _require_torch(ctx)
    device = _device(ctx, torch)
    figures = {}
    n_cpu = min(ctx.matmul_size, 1024)
    cpu_a = torch.randn(n_cpu, n_cpu)
    cpu_b = torch.randn(n_cpu, n_cpu)
    cpu_out = torch.empty(n_cpu, n_cpu)
    cpu_s = time_cpu(lambda: torch.matmul(cpu_a, cpu_b, out=cpu_out))
    figures["cpu_fp32_tflops"] = round(tflops(n_cpu, cpu_s), 4)
    figures["cpu_n"] = n_cpu
    figures["cpu_threads"] = torch.get_num_threads()
    if device.type != "cuda":
        return "CPU fp32 matmul %.3f TFLOP/s (n=%d)" % (figures["cpu_fp32_tflops"], n_cpu), figures
    rows = _precisions(torch, device)
    share_s = speed_budget(ctx, len(rows))
    n = _speed_size(torch, device, ctx.matmul_size)
    figures["n"] = n
    figures["n_profile"] = ctx.matmul_size
    figures["method"] = method_text("CUDA events")
    figures["budget_s_per_precision"] = round(share_s, 2)
    parts = []
    for label, dtype, allow_tf32 in rows:
        a = torch.randn(n, n, device=device, dtype=dtype)
        b = torch.randn(n, n, device=device, dtype=dtype)
        with _fp32_precision(torch, allow_tf32):
            peak_s, sustained_s, plan = time_cuda(torch, lambda a=a, b=b: torch.matmul(a, b), share_s)
        parts.append(record_precision(figures, label, n, peak_s, sustained_s, plan))
        del a, b
    message = speed_message(n, parts, figures)
    figures["max_memory_reserved_mib"] = int(torch.cuda.max_memory_reserved() // (1024 * 1024))
    torch.cuda.empty_cache()
    return message, figures


def _speed_size(torch, device, n):
    """``n``, or larger on a fast GPU (timing.speed_size), judged by an fp16 product; GPUs
    without tensor cores (before Volta) keep ``n``."""
    if torch.cuda.get_device_capability(device)[0] < 7 or not hasattr(torch.cuda, "mem_get_info"):
        return n
    a = torch.randn(n, n, device=device, dtype=torch.float16)
    b = torch.randn(n, n, device=device, dtype=torch.float16)
    torch.matmul(a, b)
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(3):
        torch.matmul(a, b)
    end.record()
    end.synchronize()
    product_s = start.elapsed_time(end) / 1000.0 / 3
    del a, b
    torch.cuda.empty_cache()
    return speed_size(n, product_s, torch.cuda.mem_get_info(device)[0])


