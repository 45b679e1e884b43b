"""Time to render every built-in profile (in memory and to disk): median of N runs.

    python bench/bench_render.py [-n RUNS]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing
    from envgen.kb import load_kb
    from envgen.plan.image import plan_image
    from envgen.profile import list_profiles, load_profile
    from envgen.render import render, render_in_memory

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", "--runs", type=int, default=20)
    args = parser.parse_args(argv)
    kb = load_kb()
    profiles = [load_profile(s.name, env={}) for s in list_profiles({})]
    print(f"{'profile':<18} {'in memory (ms)':>15} {'to disk (ms)':>13}   median of {args.runs}")
    totals_mem: list[float] = []
    totals_disk: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        for profile in profiles:
            mem, disk = [], []
            for i in range(args.runs):
                start = time.perf_counter()
                render_in_memory(plan_image(profile, kb))
                mem.append(time.perf_counter() - start)
                start = time.perf_counter()
                render(plan_image(profile, kb), Path(tmp) / f"{profile.name}-{i % 2}")
                disk.append(time.perf_counter() - start)
            totals_mem.append(statistics.median(mem))
            totals_disk.append(statistics.median(disk))
            print(f"{profile.name:<18} {totals_mem[-1] * 1000:>15.1f} {totals_disk[-1] * 1000:>13.1f}")
    print(f"{'all profiles':<18} {sum(totals_mem) * 1000:>15.1f} {sum(totals_disk) * 1000:>13.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
