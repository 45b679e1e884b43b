"""TensorFlow speed check of the envgen probe: matmul TFLOP/s, peak and sustained, against the CPU.
Python 3.7+."""

import time

from .tf_base import _device, _precisions, _require_tf, _Tf32
from .timing import (
    median,
    method_text,
    plan_speed,
    record_precision,
    speed_budget,
    speed_message,
    sustained_time,
    tflops,
)


def _time_tf(tf, func, sync, target_s=0.05, repeats=7, warmup=2):
    """Median seconds per call: batches of calls bracketed by a device sync (fetching a value
    produced after the batch waits for the whole stream), sized to ~target_s."""
    sync(func())
    began = time.perf_counter()
    sync(func())
    once = max(time.perf_counter() - began, 1e-6)
    iters = int(max(1, min(2000, target_s / once)))
    samples = []
    for attempt in range(warmup + repeats):
        began = time.perf_counter()
        for _ in range(iters):
            result = func()
        sync(result)
        if attempt >= warmup:
            samples.append((time.perf_counter() - began) / iters)
    return median(samples), iters


def _time_tf_gpu(func, sync, share_s, sleep=time.sleep, clock=time.perf_counter):
    """The GPU speed plan of timing.plan_speed for TensorFlow: (peak seconds per call, sustained
    seconds per call or None, plan). A host timer between device syncs (fetching a value produced
    last waits for the whole stream) brackets each timed loop."""

    def timed(count):
        sync(func())
        began = clock()
        for _ in range(count):
            result = func()
        sync(result)
        return clock() - began

    sync(func())
    plan = plan_speed(timed(1), share_s)
    peaks = []
    for _ in range(plan.windows):
        sleep(plan.pause_s)  # idle: the SM clock comes back from a power-capped state
        for _ in range(max(0, plan.warmup - 1)):
            func()
        peaks.append(timed(plan.iters) / plan.iters)  # timed() starts with the last warm-up product
    return median(peaks), sustained_time(func, timed, plan), plan


def check_speed(ctx):
    tf = _require_tf(ctx)
    device = _device(ctx)

    def sync(tensor):
        return tensor[0, 0].numpy()

    figures = {}
    n_cpu = min(ctx.matmul_size, 1024)
    with tf.device("/CPU:0"):
        a = tf.random.normal((n_cpu, n_cpu))
        b = tf.random.normal((n_cpu, n_cpu))
        cpu_s, _iters = _time_tf(tf, lambda: tf.matmul(a, b), sync, target_s=0.2, repeats=3, warmup=1)
    figures["cpu_fp32_tflops"] = round(tflops(n_cpu, cpu_s), 4)
    figures["cpu_n"] = n_cpu
    if device.startswith("/CPU"):
        return "CPU fp32 matmul %.3f TFLOP/s (n=%d)" % (figures["cpu_fp32_tflops"], n_cpu), figures
    rows = _precisions(tf, device)
    share_s = speed_budget(ctx, len(rows))
    n = ctx.matmul_size
    figures["n"] = n
    figures["method"] = method_text("host timer between device syncs")
    figures["budget_s_per_precision"] = round(share_s, 2)
    parts = []
    for label, dtype, tf32 in rows:
        with _Tf32(tf, tf32), tf.device(device):
            pair = (tf.random.normal((n, n), dtype=dtype), tf.random.normal((n, n), dtype=dtype))
            peak_s, sustained_s, plan = _time_tf_gpu(lambda ops=pair: tf.matmul(ops[0], ops[1]), sync, share_s)
        parts.append(record_precision(figures, label, n, peak_s, sustained_s, plan))
    return speed_message(n, parts, figures), figures

