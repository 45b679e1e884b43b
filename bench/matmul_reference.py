"""Sustained matmul benchmark: the rate a GPU keeps under continuous load, for the smoke probe's
sustained figure (``<precision>_tflops_sustained``).

Independent of the probe's code. For each size and precision: square random matrices, >= 0.5 s of
warm-up load, then timed batches of ~0.1 s bracketed by CUDA events, reported as the median and
spread of the batches; a host timer around synchronised batches is printed beside it as a cross-check.
On a power-capped GPU this reads below a short "warm up, time 20 products" measurement
(``bench/matmul_plain.py``, the reference for the probe's peak figure): an H200 holds its boost clock
for the first ~50-100 ms of load only (``bench/matmul_gap.py`` shows it; docs/validation/2026-11-30-h200).

    python bench/matmul_reference.py [--sizes 2048,4096,8192] [--repeats 20] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time


def flops(n: int) -> float:
    return 2.0 * n**3


def precisions(torch, capability: tuple[int, int]) -> list[tuple[str, object, bool]]:
    rows = [("fp32", torch.float32, False)]
    if capability[0] >= 8:
        rows.append(("tf32", torch.float32, True))
    rows.append(("fp16", torch.float16, False))
    if capability[0] >= 8:
        rows.append(("bf16", torch.bfloat16, False))
    return rows


def measure(torch, n: int, dtype, allow_tf32: bool, repeats: int, batch_s: float) -> dict:
    torch.set_float32_matmul_precision("high" if allow_tf32 else "highest")
    a = torch.randn(n, n, device="cuda", dtype=dtype)
    b = torch.randn(n, n, device="cuda", dtype=dtype)
    out = torch.empty(n, n, device="cuda", dtype=dtype)
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    # warm-up: at least 0.5 s of work, which also brings the SM clock up
    began = time.perf_counter()
    while time.perf_counter() - began < 0.5:
        torch.matmul(a, b, out=out)
        torch.cuda.synchronize()
    start.record()
    for _ in range(10):
        torch.matmul(a, b, out=out)
    end.record()
    end.synchronize()
    per_call = start.elapsed_time(end) / 1000.0 / 10
    iters = max(1, int(batch_s / per_call))
    event_samples, host_samples = [], []
    for _ in range(repeats):
        torch.cuda.synchronize()
        host_began = time.perf_counter()
        start.record()
        for _ in range(iters):
            torch.matmul(a, b, out=out)
        end.record()
        end.synchronize()
        host_samples.append((time.perf_counter() - host_began) / iters)
        event_samples.append(start.elapsed_time(end) / 1000.0 / iters)
    tflops = [flops(n) / s / 1e12 for s in event_samples]
    del a, b, out
    torch.cuda.empty_cache()
    return {
        "n": n,
        "iters_per_batch": iters,
        "batches": repeats,
        "tflops_median": round(statistics.median(tflops), 2),
        "tflops_min": round(min(tflops), 2),
        "tflops_max": round(max(tflops), 2),
        "tflops_host_timer": round(flops(n) / statistics.median(host_samples) / 1e12, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="2048,4096,8192")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--batch-seconds", type=float, default=0.1)
    parser.add_argument("--json", metavar="OUT")
    args = parser.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        sys.stderr.write("matmul_reference: no CUDA GPU visible\n")
        return 1
    capability = torch.cuda.get_device_capability(0)
    saved = torch.get_float32_matmul_precision()
    results = []
    try:
        for n in (int(size) for size in args.sizes.split(",")):
            for label, dtype, allow_tf32 in precisions(torch, capability):
                row = measure(torch, n, dtype, allow_tf32, args.repeats, args.batch_seconds)
                row["precision"] = label
                results.append(row)
                print(f"n={n:<6d} {label:<5s} {row['tflops_median']:8.2f} TFLOP/s "
                      f"(min {row['tflops_min']:.2f}, "
                      f"max {row['tflops_max']:.2f}; host timer {row['tflops_host_timer']:.2f}; "
                      f"{row['batches']} x {row['iters_per_batch']} calls)", flush=True)
    finally:
        torch.set_float32_matmul_precision(saved)
    report = {
        "benchmark": "matmul_reference",
        "device": torch.cuda.get_device_name(0),
        "capability": f"{capability[0]}.{capability[1]}",
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "method": "CUDA events around batches of back-to-back matmuls (out=), median over batches, "
                  "after >= 0.5 s warm-up",
        "results": results,
    }
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
