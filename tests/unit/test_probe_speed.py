"""The probe's GPU matmul timing: the plan within the time budget, the size choice, and the method
against a simulated power-capped GPU (the behaviour measured on an H200, docs/validation/2026-11-30-h200)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from test_probe_helpers import probe_module


def test_plan_is_full_on_a_fast_gpu() -> None:
    timing = probe_module("gpu.timing")
    plan = timing.plan_speed(0.0014, 10.0)  # bf16 8192 on an H200: 1.4 ms a product
    assert (plan.warmup, plan.iters, plan.windows) == (3, 20, 3)
    assert plan.sustain_iters * 0.0014 >= timing.SUSTAIN_BATCH_S
    assert plan.sustain_load * 0.0014 >= timing.SUSTAIN_LOAD_S
    assert plan.cost_s(0.0014) < 2.0


@pytest.mark.parametrize("product_s", [1e-7, 1e-4, 0.0014, 0.02, 0.08, 0.5, 4.5, 60.0])
@pytest.mark.parametrize("share_s", [0.5, 3.0, 10.0])
def test_plan_stays_within_its_share(product_s: float, share_s: float) -> None:
    plan = probe_module("gpu.timing").plan_speed(product_s, share_s)
    assert plan.iters >= 1 and plan.windows >= 1
    # a plan over its share is the smallest one: one window of one product after one warm-up
    assert plan.cost_s(product_s) <= share_s or (plan.windows, plan.warmup, plan.iters) == (1, 1, 1)


def test_plan_drops_sustained_then_windows_on_a_slow_card() -> None:
    timing = probe_module("gpu.timing")
    peak_only = timing.plan_speed(0.08, 6.5)  # fp32 4096 on a small card: 80 ms a product
    assert peak_only.sustain_iters == 0 and peak_only.windows == 3
    slow = timing.plan_speed(4.5, 10.0)  # fp16 on a card without fast fp16
    assert (slow.windows, slow.warmup, slow.sustain_iters) == (1, 1, 0)
    assert slow.iters == 1


def test_speed_size_grows_only_on_a_fast_gpu_with_memory() -> None:
    timing = probe_module("gpu.timing")
    gib = 1024**3
    assert timing.speed_size(4096, 0.00018, 140 * gib) == 8192  # H200: fp16 4096 in 0.18 ms
    assert timing.speed_size(1024, 0.00001, 140 * gib) == 8192  # capped at MAX_SPEED_N
    assert timing.speed_size(4096, 0.0027, 140 * gib) == 4096   # already over MIN_PRODUCT_S
    assert timing.speed_size(4096, 0.00018, 1 * gib) == 4096    # 3 x 8192^2 fp32 (768 MiB) > half of 1 GiB
    assert timing.speed_size(16384, 0.001, 140 * gib) == 16384  # a larger profile size is kept


def test_speed_budget_is_a_share_of_the_time_left() -> None:
    timing = probe_module("gpu.timing")
    ctx = SimpleNamespace(timeout_s=300.0, elapsed=lambda: 20.0)
    assert timing.speed_budget(ctx, 4) == pytest.approx(min(timing.SPEED_BUDGET_CAP_S, 280 * 0.25) / 4)
    late = SimpleNamespace(timeout_s=30.0, elapsed=lambda: 26.0)
    assert timing.speed_budget(late, 2) == pytest.approx(0.5)
    assert timing.speed_budget(SimpleNamespace(timeout_s=30.0, elapsed=lambda: 40.0), 4) == 0.0


class PowerCappedGpu:
    """A simulated GPU: a product takes ``fast`` seconds for the first ``boost_s`` of continuous load,
    then ``slow`` (the power cap has cut the clock); an idle pause of 0.1 s or more restores the boost.
    CUDA events read its clock."""

    def __init__(self, fast: float, slow: float, boost_s: float = 0.08) -> None:
        self.fast, self.slow, self.boost_s = fast, slow, boost_s
        self.now = 0.0
        self.load_began = 0.0
        self.products = 0
        self.pauses: list[float] = []

    def product(self) -> None:
        self.products += 1
        self.now += self.fast if self.now - self.load_began < self.boost_s else self.slow

    def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds
        if seconds >= 0.1:
            self.load_began = self.now

    def torch(self) -> SimpleNamespace:
        gpu = self

        class Event:
            def __init__(self, enable_timing: bool = False) -> None:
                self.at = 0.0

            def record(self) -> None:
                self.at = gpu.now

            def synchronize(self) -> None:
                pass

            def elapsed_time(self, other: Event) -> float:
                return (other.at - self.at) * 1000.0

        return SimpleNamespace(cuda=SimpleNamespace(Event=Event, synchronize=lambda: None))


def test_time_cuda_reads_peak_after_idle_and_sustained_after_load() -> None:
    probe_torch = probe_module("gpu.torch_speed")
    gpu = PowerCappedGpu(fast=0.0014, slow=0.0017)  # bf16 8192 on an H200: ~790 vs ~650 TFLOP/s
    peak, sustained, plan = probe_torch.time_cuda(gpu.torch(), gpu.product, 10.0, sleep=gpu.sleep)
    assert peak == pytest.approx(0.0014)
    assert sustained == pytest.approx(0.0017)
    assert plan.windows == 3 and gpu.pauses == [plan.pause_s] * 3 and plan.pause_s >= 0.1
    assert gpu.products == 2 + plan.windows * (plan.warmup + plan.iters) + plan.sustain_load \
        + plan.sustain_batches * plan.sustain_iters


def test_tensorflow_gpu_timing_follows_the_same_plan() -> None:
    probe_tf = probe_module("gpu.tf_speed")
    gpu = PowerCappedGpu(fast=0.0014, slow=0.0017)
    peak, sustained, plan = probe_tf._time_tf_gpu(gpu.product, lambda _value: None, 10.0, sleep=gpu.sleep,
                                                  clock=lambda: gpu.now)
    assert peak == pytest.approx(0.0014)
    assert sustained == pytest.approx(0.0017)
    assert (plan.windows, plan.iters) == (3, 20) and gpu.pauses == [plan.pause_s] * 3


def test_the_former_method_read_the_capped_rate() -> None:
    """What went wrong before: ~0.45 s of back-to-back batches is mostly past the boost window."""
    gpu = PowerCappedGpu(fast=0.0014, slow=0.0017)
    for _ in range(int(0.45 / 0.0014)):
        gpu.product()
    seconds_per_product = gpu.now / int(0.45 / 0.0014)
    assert seconds_per_product > 0.0014 * 1.1
