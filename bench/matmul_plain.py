"""Plain matmul reference: the way most people time a GPU matrix product.

For each precision: two random normal n x n operands on the GPU (n = 8192), a few warm-up products, then
one loop of ``iters`` (20) products ``a @ b`` timed with CUDA events around the whole loop;
TFLOP/s = 2 n^3 iters / t. Nothing else: no ``out=``, no batches, no median, no shared code with the
smoke probe or ``bench/matmul_reference.py``. ``--repeats`` runs the loop more than once (each loop is
printed) to show the spread; the figure kept is the first loop's.

    python bench/matmul_plain.py [--n 8192] [--iters 20] [--warmup 3] [--repeats 3] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def rows(torch) -> list[tuple[str, object, bool]]:
    major = torch.cuda.get_device_capability(0)[0]
    out = [("fp32", torch.float32, False)]
    if major >= 8:
        out.append(("tf32", torch.float32, True))
    out.append(("fp16", torch.float16, False))
    if major >= 8:
        out.append(("bf16", torch.bfloat16, False))
    return out


def one(torch, n: int, dtype, tf32: bool, iters: int, warmup: int, repeats: int) -> dict:
    torch.set_float32_matmul_precision("high" if tf32 else "highest")
    a = torch.randn(n, n, device="cuda", dtype=dtype)
    b = torch.randn(n, n, device="cuda", dtype=dtype)
    for _ in range(warmup):
        c = a @ b
    torch.cuda.synchronize()
    loops = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            c = a @ b
        end.record()
        end.synchronize()
        seconds = start.elapsed_time(end) / 1000.0
        loops.append(round(2.0 * n**3 * iters / seconds / 1e12, 2))
    del a, b, c
    torch.cuda.empty_cache()
    return {"n": n, "iters": iters, "warmup": warmup, "tflops": loops[0], "tflops_loops": loops}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=8192)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--precisions", default="fp32,tf32,fp16,bf16")
    parser.add_argument("--json", metavar="OUT")
    args = parser.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        sys.stderr.write("matmul_plain: no CUDA GPU visible\n")
        return 1
    wanted = args.precisions.split(",")
    saved = torch.get_float32_matmul_precision()
    results = []
    began = time.time()
    try:
        for label, dtype, tf32 in rows(torch):
            if label not in wanted:
                continue
            row = one(torch, args.n, dtype, tf32, args.iters, args.warmup, args.repeats)
            row["precision"] = label
            results.append(row)
            print(f"plain n={args.n} {label:<5s} {row['tflops']:8.2f} TFLOP/s "
                  f"(loops: {', '.join(f'{v:.1f}' for v in row['tflops_loops'])})", flush=True)
    finally:
        torch.set_float32_matmul_precision(saved)
    report = {
        "benchmark": "matmul_plain",
        "device": torch.cuda.get_device_name(0),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "method": f"a @ b, {args.warmup} warm-up products, then {args.iters} products timed with CUDA events "
                  "around the whole loop; first loop kept",
        "started": began,
        "seconds": round(time.time() - began, 2),
        "results": results,
    }
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
