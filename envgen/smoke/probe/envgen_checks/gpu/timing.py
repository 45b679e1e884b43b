"""How the envgen probe times its GPU matmul speed check: the median, TFLOP/s, the peak and sustained plan
within the time budget, the matrix size, and the figures and message both frameworks report.

Standard library only; runs on Python 3.7 and later (checked by a unit test with vermin).
"""

import math


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2.0


def tflops(n, seconds):
    return 2.0 * n * n * n / seconds / 1e12 if seconds > 0 else None


# How the GPU matmul speed is timed. A big GPU runs at its boost clock only for the first tens of
# milliseconds of full load: then its power cap cuts the SM clock (measured on an H200, 700 W cap:
# 1980 MHz for ~50-100 ms, then ~1450-1520 MHz; bf16 790 -> ~670 TFLOP/s; docs/validation/2026-11-30-h200).
# So the rate depends on how long the card has been loaded, and the probe reports two figures:
# - peak: after an idle pause (the clock recovers in 0.1 s), PEAK_WARMUP products, then PEAK_ITERS
#   products timed with device events around the whole loop, median of PEAK_WINDOWS such windows:
#   what the usual "warm up, time 20 products" measurement reads;
# - sustained: after SUSTAIN_LOAD_S of back-to-back products (the cap has engaged), the median of
#   SUSTAIN_BATCHES batches of >= SUSTAIN_BATCH_S each: what a long training run gets.
PEAK_WARMUP = 3
PEAK_ITERS = 20
PEAK_WINDOWS = 3
PAUSE_S = 0.25
SUSTAIN_LOAD_S = 0.3
SUSTAIN_BATCH_S = 0.05
SUSTAIN_BATCHES = 3
# The speed check's share of the time budget left when it starts, and its cap
SPEED_BUDGET_SHARE = 0.25
SPEED_BUDGET_CAP_S = 40.0
# On a fast GPU the profile's matmul_size is doubled (up to MAX_SPEED_N, memory allowing) until one
# product takes at least MIN_PRODUCT_S: a product that fills the chip, and a window of PEAK_ITERS
# products as long as the usual 8192 reference's.
MAX_SPEED_N = 8192
MIN_PRODUCT_S = 1e-3


class SpeedPlan(object):
    """How one precision is timed: the peak windows, and the sustained phase or None."""

    def __init__(self, warmup, iters, windows, pause_s, sustain_load, sustain_iters, sustain_batches):
        self.warmup = warmup
        self.iters = iters
        self.windows = windows
        self.pause_s = pause_s
        self.sustain_load = sustain_load        # untimed products before the sustained batches
        self.sustain_iters = sustain_iters      # products per sustained batch (0: no sustained figure)
        self.sustain_batches = sustain_batches

    def cost_s(self, product_s):
        products = (self.windows * (self.warmup + self.iters) + self.sustain_load
                    + self.sustain_iters * self.sustain_batches)
        return self.windows * self.pause_s + products * product_s

    def as_dict(self):
        return dict(self.__dict__)


def speed_budget(ctx, precisions):
    """Seconds each precision may spend in the GPU speed check: a share of the time budget left."""
    left = max(0.0, ctx.timeout_s - ctx.elapsed())
    return min(SPEED_BUDGET_CAP_S, left * SPEED_BUDGET_SHARE) / max(1, precisions)


def plan_speed(product_s, share_s):
    """The SpeedPlan for a product taking ``product_s`` seconds within ``share_s`` seconds: the full
    plan where it fits, then without the sustained phase, then one shorter window (a slow card)."""
    product_s = max(float(product_s), 1e-6)
    load = int(math.ceil(SUSTAIN_LOAD_S / product_s))
    per_batch = int(math.ceil(SUSTAIN_BATCH_S / product_s))
    full = SpeedPlan(PEAK_WARMUP, PEAK_ITERS, PEAK_WINDOWS, PAUSE_S, load, per_batch, SUSTAIN_BATCHES)
    if full.cost_s(product_s) <= share_s:
        return full
    peak_only = SpeedPlan(PEAK_WARMUP, PEAK_ITERS, PEAK_WINDOWS, PAUSE_S, 0, 0, 0)
    if peak_only.cost_s(product_s) <= share_s:
        return peak_only
    iters = int(max(1, min(PEAK_ITERS, (share_s - PAUSE_S) / product_s - 1)))
    return SpeedPlan(1, iters, 1, PAUSE_S, 0, 0, 0)


def speed_size(n, product_s, free_bytes, itemsize=4):
    """The matmul size for the speed check: ``n`` doubled while one product (``product_s`` at ``n``)
    takes under MIN_PRODUCT_S, the next size stays within MAX_SPEED_N and its three operands of
    ``itemsize`` bytes fit in half of ``free_bytes``."""
    product_s = float(product_s)
    while (product_s < MIN_PRODUCT_S and 2 * n <= MAX_SPEED_N
           and 3 * (2 * n) ** 2 * itemsize <= free_bytes / 2):
        n *= 2
        product_s *= 8
    return n


def method_text(timer):
    """The speed figures' ``method``: ``timer`` (how a loop is bracketed), then the plan's constants."""
    return ("%s; peak: %d products after %d warm-up and an idle pause of %gs, median of %d windows; sustained: "
            "after %gs of load, median of %d batches"
            % (timer, PEAK_ITERS, PEAK_WARMUP, PAUSE_S, PEAK_WINDOWS, SUSTAIN_LOAD_S, SUSTAIN_BATCHES))


def sustained_time(func, timed, plan):
    """Seconds per call under load, the median of the plan's batches (``timed(count)`` times ``count`` calls),
    or None for a plan without a sustained phase."""
    if not plan.sustain_iters:
        return None
    for _ in range(plan.sustain_load):
        func()
    return median([timed(plan.sustain_iters) / plan.sustain_iters for _ in range(plan.sustain_batches)])


def record_precision(figures, label, n, peak_s, sustained_s, plan):
    """One precision's TFLOP/s into ``figures``; its part of the message: "fp16 301.2 (280.4)"."""
    figures[label + "_tflops"] = round(tflops(n, peak_s), 2)
    figures[label + "_tflops_sustained"] = round(tflops(n, sustained_s), 2) if sustained_s else None
    figures[label + "_iters"] = plan.iters
    text = "%s %.1f" % (label, figures[label + "_tflops"])
    if sustained_s:
        text += " (%.1f)" % figures[label + "_tflops_sustained"]
    return text


def speed_message(n, parts, figures):
    """The speed check's message, fp32 against the CPU recorded in ``figures``."""
    figures["speedup_fp32_vs_cpu"] = round(figures["fp32_tflops"] / figures["cpu_fp32_tflops"], 1)
    return ("matmul n=%d TFLOP/s, peak (sustained): %s; fp32 %.0fx the CPU"
            % (n, ", ".join(parts), figures["speedup_fp32_vs_cpu"]))
