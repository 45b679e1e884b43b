"""Whole-process wall time of `envgen check` now that it resolves the whole pip set and judges every release on its
files (envgen.lock.judged), against references measured in the same run, interleaved so that machine load hits them
alike: `python -c pass` (interpreter start) and `envgen check --offline` (the same check, not asking the index: what
a check cost before the resolution became the default, plus the offline note).

Rows:
- "check, cold": the kept answer and the index's pages removed before each run: uv resolves, every pinned release's
  page, metadata and (for a release with no wheel) sdist are read from the index. Its time is the network's.
- "check, warm": the answer kept by the run before (target < 0.3 s).
- "check, after an edit": the profile's YAML changed before each run (a comment line added), the pip set not; the
  loaded-profile cache cannot serve it, the kept resolution still does (target < 0.5 s).

    python bench/bench_check_resolved.py [-n RUNS] [--cold-runs N] [--pins 'a==1 b==2'] [--python 3.11]

Each run uses a private cache directory (ENVGEN_CACHE_DIR); PYTHONDONTWRITEBYTECODE is dropped (an installed
envgen runs from .pyc files) and ENVGEN_OFFLINE is dropped for every row but the offline reference.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGETS = {"check, warm": 0.3, "check, after an edit": 0.5}
PROFILE = """name: bench-resolved
base: debian:bookworm-slim
installer: pip
python: "{python}"
gpu: {{required: false}}
packages:
  pip: [{pins}]
"""


def _time(cmd: list[str], env: dict[str, str], cpus: list[float] | None = None) -> float:
    """Wall seconds of one run; its CPU seconds (user + system: what it costs, whatever the machine's load) are
    appended to ``cpus``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.decode()[-400:]}")
    if cpus is not None:
        cpus.append((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return elapsed


def _forget(cache: Path) -> None:
    """The kept answers and the index's pages gone; the KB and profile caches kept."""
    for old in cache.glob("resolved-*.json"):
        old.unlink()
    shutil.rmtree(cache / "pypi", ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", "--runs", type=int, default=15)
    parser.add_argument("--cold-runs", type=int, default=3)
    parser.add_argument("--pins", default="flask==2.0.0 black==22.1.0 requests==2.31.0 numpy==1.26.4")
    parser.add_argument("--python", default="3.11")
    args = parser.parse_args(argv)
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        cache, root = Path(tmp) / "cache", Path(tmp)
        profile = root / "bench-resolved.yaml"
        profile.write_text(PROFILE.format(python=args.python, pins=", ".join(args.pins.split())))
        edited = root / "bench-edited.yaml"
        edited.write_text(profile.read_text())
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "ENVGEN_OFFLINE")}
        env["ENVGEN_CACHE_DIR"] = str(cache)
        offline = {**env, "ENVGEN_OFFLINE": "1"}
        check = [py, "-m", "envgen", "check"]
        count = iter(range(10**6))

        def edit() -> None:
            with edited.open("a") as handle:
                handle.write(f"# edit {next(count)}\n")

        cases = [("python -c pass", [py, "-c", "pass"], env, None),
                 ("check --offline", [*check, str(profile)], offline, None),
                 ("check, warm", [*check, str(profile)], env, None),
                 ("check, after an edit", [*check, str(edited)], env, edit)]
        for _, cmd, case_env, before in cases:  # warm-up: bytecode, the KB cache, the kept answers
            (before or (lambda: None))()
            _time(cmd, case_env)
        walls: dict[str, list[float]] = {name: [] for name, _, _, _ in [*cases, ("check, cold", 0, 0, 0)]}
        cpus: dict[str, list[float]] = {name: [] for name in walls}
        for _ in range(args.cold_runs):
            _forget(cache)
            walls["check, cold"].append(_time([*check, str(profile)], env, cpus["check, cold"]))
        for _ in range(args.runs):
            for name, cmd, case_env, before in cases:
                (before or (lambda: None))()
                walls[name].append(_time(cmd, case_env, cpus[name]))
    wall = {name: statistics.median(values) for name, values in walls.items()}
    cpu = {name: statistics.median(values) for name, values in cpus.items()}
    base, ref = wall["python -c pass"], wall["check --offline"]
    print(f"median of {args.runs} runs ({args.cold_runs} cold), whole process, pins: {args.pins} "
          f"(python {sys.version.split()[0]}, {os.cpu_count()} cores, 1-min load {os.getloadavg()[0]:.2f})")
    print(f"{'command':<24} {'wall s':>7} {'cpu s':>7} {'x pass':>7} {'x offline':>9}  target (wall)")
    for name in ["python -c pass", "check --offline", "check, cold", "check, warm", "check, after an edit"]:
        target = TARGETS.get(name)
        verdict = "" if target is None else f"< {target} s {'ok' if wall[name] < target else 'MISSED'}"
        print(f"{name:<24} {wall[name]:>7.3f} {cpu[name]:>7.3f} {wall[name] / base:>7.1f} {wall[name] / ref:>9.2f}  "
              f"{verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
