"""What the image's preflight costs a container's command, measured inside an envgen image (issue #42: at most 0.5 s
on the H200), paired against the same entrypoint with the preflight switched off in the same run.

Each round runs the image's entrypoint twice, in alternating order: ``envgen-entrypoint true`` (the preflight,
then the command) and ``ENVGEN_PREFLIGHT=0 envgen-entrypoint true`` (the shell and exec alone: the reference). The
cost is the median of the per-round differences; the ratio is the median preflight run over the median reference
run. Run it in the container, with the GPUs the route gives:

    docker run --rm --device nvidia.com/gpu=all -v $PWD/bench:/bench:ro --entrypoint python3 IMAGE \\
        /bench/bench_preflight.py [--runs 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import time

ENTRYPOINT = "/usr/local/bin/envgen-entrypoint"


def once(preflight: bool) -> float:
    env = dict(os.environ, ENVGEN_PREFLIGHT="1" if preflight else "0")
    start = time.perf_counter()
    done = subprocess.run([ENTRYPOINT, "true"], env=env, capture_output=True, text=True)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{ENTRYPOINT} true exited {done.returncode}: {done.stderr.strip()}")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    once(True), once(False)  # warm-up: the page cache, the driver's first NVML initialisation
    on, off = [], []
    for i in range(args.runs):
        order = (True, False) if i % 2 == 0 else (False, True)
        for preflight in order:
            (on if preflight else off).append(once(preflight))
    cost = statistics.median(a - b for a, b in zip(on, off, strict=True))
    result = {"runs": args.runs, "preflight_median_s": round(statistics.median(on), 4),
              "reference_median_s": round(statistics.median(off), 4), "cost_median_s": round(cost, 4),
              "ratio": round(statistics.median(on) / statistics.median(off), 2), "budget_s": 0.5,
              "within_budget": cost <= 0.5}
    print(json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main()
