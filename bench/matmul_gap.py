"""Why a matmul figure depends on how it is timed: experiments in one process, with the GPU's clock,
power and clock-event reasons sampled through NVML beside them.

- series: per precision, after an idle pause, products back to back for ~``--series-s`` seconds with a
  CUDA event after each one: the rate in time windows since the load began (0-25 ms, 25-50 ms, ...);
- recovery: bf16, right after a long run, idle pauses of 0.1 to 5 s, then a plain 20-product loop;
- variants: bf16 loops of 20 products after 3 warm-ups: ``a @ b``, ``out=``, a sync after every product,
  200 products instead of 20, n = 4096 and 16384;
- old: the probe's former method (median of 7 batches of ~50 ms after 2 warm-up batches) at 4096 and 8192.

    python bench/matmul_gap.py [--n 8192] [--series-s 2] [--json OUT]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import threading
import time

WINDOWS_MS = (0, 25, 50, 100, 200, 500, 1000, 2000, 4000)


class Sampler:
    """NVML samples (perf_counter, SM MHz, power W, temperature C, clock-event reason mask) every ~10 ms."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, int, float, int, int]] = []
        self.info: dict = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        try:
            import pynvml

            pynvml.nvmlInit()
            self._nvml = pynvml
            self._handle = pynvml.nvmlDeviceGetHandleByIndex(0)
            self.info = {
                "driver": _text(pynvml.nvmlSystemGetDriverVersion()),
                "power_limit_w": pynvml.nvmlDeviceGetEnforcedPowerLimit(self._handle) / 1000.0,
                "power_default_limit_w": pynvml.nvmlDeviceGetPowerManagementDefaultLimit(self._handle) / 1000.0,
                "max_sm_mhz": pynvml.nvmlDeviceGetMaxClockInfo(self._handle, pynvml.NVML_CLOCK_SM),
            }
        except Exception as exc:  # noqa: BLE001 - the experiments still run without NVML
            self._nvml = None
            self.info = {"nvml_error": str(exc)}

    def _reasons(self) -> int:
        nvml = self._nvml
        for name in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
            if hasattr(nvml, name):
                return int(getattr(nvml, name)(self._handle))
        return -1

    def _run(self) -> None:
        nvml = self._nvml
        while not self._stop.is_set():
            with contextlib.suppress(Exception):
                self.samples.append((time.perf_counter(),
                                     nvml.nvmlDeviceGetClockInfo(self._handle, nvml.NVML_CLOCK_SM),
                                     nvml.nvmlDeviceGetPowerUsage(self._handle) / 1000.0,
                                     nvml.nvmlDeviceGetTemperature(self._handle, nvml.NVML_TEMPERATURE_GPU),
                                     self._reasons()))
            time.sleep(0.01)

    def start(self) -> None:
        if self._nvml is not None:
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def between(self, began: float, ended: float) -> dict:
        rows = [s for s in self.samples if began <= s[0] <= ended]
        if not rows:
            return {}
        reasons = 0
        for row in rows:
            reasons |= max(row[4], 0)
        return {"sm_mhz_mean": round(statistics.mean(r[1] for r in rows)),
                "sm_mhz_min": min(r[1] for r in rows), "sm_mhz_max": max(r[1] for r in rows),
                "power_w_mean": round(statistics.mean(r[2] for r in rows), 1),
                "power_w_max": round(max(r[2] for r in rows), 1),
                "temp_c_max": max(r[3] for r in rows), "reasons_or": hex(reasons), "samples": len(rows)}


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def precisions(torch) -> list[tuple[str, object, bool]]:
    return [("fp32", torch.float32, False), ("tf32", torch.float32, True),
            ("fp16", torch.float16, False), ("bf16", torch.bfloat16, False)]


def rate(n: int, count: int, seconds: float) -> float:
    return round(2.0 * n**3 * count / seconds / 1e12, 2)


def operands(torch, n: int, dtype, tf32: bool):
    torch.set_float32_matmul_precision("high" if tf32 else "highest")
    return torch.randn(n, n, device="cuda", dtype=dtype), torch.randn(n, n, device="cuda", dtype=dtype)


def loop(torch, a, b, iters: int, warmup: int = 3, out=None, sync_each: bool = False) -> float:
    """Seconds for ``iters`` products after ``warmup``, CUDA events around the loop."""
    for _ in range(warmup):
        c = a @ b
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        if out is not None:
            torch.matmul(a, b, out=out)
        else:
            c = a @ b  # noqa: F841
        if sync_each:
            torch.cuda.synchronize()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1000.0


def series(torch, sampler: Sampler, n: int, label: str, dtype, tf32: bool, seconds: float, pause: float) -> dict:
    a, b = operands(torch, n, dtype, tf32)
    once = loop(torch, a, b, 3, warmup=1) / 3
    count = int(max(40, min(6000, seconds / once)))
    events = [torch.cuda.Event(enable_timing=True) for _ in range(count + 1)]
    torch.cuda.synchronize()
    time.sleep(pause)
    host0 = time.perf_counter()
    events[0].record()
    for index in range(count):
        a @ b
        events[index + 1].record()
    events[-1].synchronize()
    host1 = time.perf_counter()
    ends = [events[0].elapsed_time(e) for e in events[1:]]  # ms since the load began
    windows = []
    for low, high in zip(WINDOWS_MS, WINDOWS_MS[1:], strict=False):
        picked = [i for i, t in enumerate(ends) if low <= (ends[i - 1] if i else 0.0) < high]
        if not picked:
            continue
        span = ends[picked[-1]] - (ends[picked[0] - 1] if picked[0] else 0.0)
        row = {"from_ms": low, "to_ms": high, "products": len(picked), "tflops": rate(n, len(picked), span / 1000)}
        row.update(sampler.between(host0 + low / 1000, host0 + min(high, ends[-1]) / 1000))
        windows.append(row)
    first20 = ends[19] / 1000 if count >= 20 else None
    result = {"precision": label, "n": n, "products": count, "pause_s": pause,
              "total_ms": round(ends[-1], 1), "tflops_all": rate(n, count, ends[-1] / 1000),
              "tflops_first20": rate(n, 20, first20) if first20 else None, "windows": windows,
              "nvml": sampler.between(host0, host1)}
    del a, b
    torch.cuda.empty_cache()
    return result


def old_probe(torch, n: int, dtype, tf32: bool) -> float:
    """The probe's method before this fix (probe_torch.time_cuda as of 2026-11-29)."""
    a, b = operands(torch, n, dtype, tf32)
    c = torch.empty_like(a)

    def func():
        torch.matmul(a, b, out=c)

    func()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    start.record()
    func()
    end.record()
    end.synchronize()
    once = max(start.elapsed_time(end) / 1000.0, 1e-6)
    iters = int(max(1, min(2000, 0.05 / once)))
    samples = []
    for attempt in range(9):
        start.record()
        for _ in range(iters):
            func()
        end.record()
        end.synchronize()
        if attempt >= 2:
            samples.append(start.elapsed_time(end) / 1000.0 / iters)
    return rate(n, 1, statistics.median(samples))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=8192)
    parser.add_argument("--series-s", type=float, default=2.0)
    parser.add_argument("--json", metavar="OUT")
    args = parser.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        sys.stderr.write("matmul_gap: no CUDA GPU visible\n")
        return 1
    n = args.n
    sampler = Sampler()
    sampler.start()
    report: dict = {"benchmark": "matmul_gap", "device": torch.cuda.get_device_name(0), "torch": torch.__version__,
                    "cuda": torch.version.cuda, "nvml_info": sampler.info}
    print("nvml:", sampler.info, flush=True)
    table = {label: (dtype, tf32) for label, dtype, tf32 in precisions(torch)}
    try:
        report["series"] = []
        for label, dtype, tf32 in precisions(torch):
            row = series(torch, sampler, n, label, dtype, tf32, args.series_s, pause=2.0)
            report["series"].append(row)
            print(f"series {label}: first20 {row['tflops_first20']}, all {row['tflops_all']} over "
                  f"{row['total_ms']:.0f} ms", flush=True)
            for w in row["windows"]:
                print(f"   {w['from_ms']:>5}-{w['to_ms']:<5} ms {w['tflops']:8.1f} TFLOP/s  "
                      f"SM {w.get('sm_mhz_mean')} MHz ({w.get('sm_mhz_min')}-{w.get('sm_mhz_max')}) "
                      f"{w.get('power_w_mean')} W max {w.get('power_w_max')} reasons {w.get('reasons_or')} "
                      f"T {w.get('temp_c_max')}", flush=True)
        dtype, tf32 = table["bf16"]
        report["recovery"] = []
        for pause in (0.0, 0.1, 0.3, 1.0, 3.0):
            a, b = operands(torch, n, dtype, tf32)
            loop(torch, a, b, int(1.5 / 0.0014), warmup=0)  # ~1.5 s of bf16 load first
            time.sleep(pause)
            host0 = time.perf_counter()
            seconds = loop(torch, a, b, 20)
            row = {"pause_s": pause, "tflops": rate(n, 20, seconds),
                   "nvml": sampler.between(host0, time.perf_counter())}
            report["recovery"].append(row)
            print(f"recovery bf16 after {pause:.1f} s idle: {row['tflops']}  {row['nvml']}", flush=True)
            del a, b
        report["variants"] = []
        for name, size, kwargs in (("a@b", n, {}), ("out=", n, {"out": True}), ("sync each", n, {"sync_each": True}),
                                   ("200 products", n, {"iters": 200}), ("a@b", 4096, {}), ("a@b", 16384, {})):
            a, b = operands(torch, size, dtype, tf32)
            out = torch.empty_like(a) if kwargs.pop("out", False) else None
            iters = kwargs.pop("iters", 20)
            torch.cuda.synchronize()
            time.sleep(1.0)
            host0 = time.perf_counter()
            seconds = loop(torch, a, b, iters, out=out, **kwargs)
            row = {"variant": name, "n": size, "iters": iters, "tflops": rate(size, iters, seconds),
                   "nvml": sampler.between(host0, time.perf_counter())}
            report["variants"].append(row)
            print(f"variant bf16 {name} n={size} x{iters}: {row['tflops']}  {row['nvml']}", flush=True)
            del a, b, out
            torch.cuda.empty_cache()
        report["old_probe"] = []
        for size in (4096, n):
            for label, dtype_, tf32_ in precisions(torch):
                torch.cuda.synchronize()
                time.sleep(0.5)
                value = old_probe(torch, size, dtype_, tf32_)
                report["old_probe"].append({"n": size, "precision": label, "tflops": value})
                print(f"old probe method n={size} {label}: {value}", flush=True)
    finally:
        sampler.stop()
        torch.set_float32_matmul_precision("highest")
        report["nvml_samples"] = [list(s) for s in sampler.samples[::5]]
        if args.json:
            with open(args.json, "w", encoding="utf-8") as handle:
                json.dump(report, handle, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
