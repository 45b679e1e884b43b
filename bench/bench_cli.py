"""Whole-process wall time of the commands run on every edit: `envgen --help`, `envgen check`, `envgen suggest`.

Each command is started as a fresh process N times (after one warm-up run that also fills the knowledge-base
cache); the median is printed next to two references measured in the same run, interleaved with the commands
so machine load hits them alike: `python -c pass` (interpreter start) and `python -c "import yaml"`.

    python bench/bench_cli.py [-n RUNS] [--profile PROFILE]

Each case runs with a private cache directory (ENVGEN_CACHE_DIR) so the user's cache is not touched; the
"check, no cache" row sets ENVGEN_NO_CACHE=1 (parse and validate the YAML every time).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

TARGETS = {"envgen --help": 0.3, "envgen check": 0.3, "envgen suggest": 1.0}


def _time(cmd: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):  # check exits 1 on errors in the profile; anything else is a failure
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.decode()[-400:]}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", "--runs", type=int, default=15)
    parser.add_argument("--profile", default="modern-a100")
    args = parser.parse_args(argv)
    py = sys.executable
    envgen = [py, "-m", "envgen"]
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "ENVGEN_CACHE_DIR": cache}
        nocache = {**env, "ENVGEN_NO_CACHE": "1"}
        cases: list[tuple[str, list[str], dict[str, str]]] = [
            ("python -c pass", [py, "-c", "pass"], env),
            ('python -c "import yaml"', [py, "-c", "import yaml"], env),
            ("envgen --help", [*envgen, "--help"], env),
            ("envgen check", [*envgen, "check", args.profile, "--gpu", "A100", "--driver", "525.60.13"], env),
            ("envgen check, no cache", [*envgen, "check", args.profile], nocache),
            ("envgen suggest", [*envgen, "suggest", "--gpu", "RTX 3090", "--driver", "470.82",
                                "--frameworks", "tensorflow,pytorch"], env),
        ]
        for _, cmd, case_env in cases:  # warm-up: page cache, bytecode, the KB cache
            _time(cmd, case_env)
        samples: dict[str, list[float]] = {name: [] for name, _, _ in cases}
        for _ in range(args.runs):
            for name, cmd, case_env in cases:
                samples[name].append(_time(cmd, case_env))
    medians = {name: statistics.median(values) for name, values in samples.items()}
    base, yaml_ref = medians["python -c pass"], medians['python -c "import yaml"']
    print(f"median of {args.runs} runs, whole process (python {sys.version.split()[0]}, load {os.getloadavg()[0]:.2f})")
    print(f"{'command':<26} {'median s':>9} {'min s':>7} {'x pass':>7} {'x yaml':>7}  target")
    for name, values in samples.items():
        target = TARGETS.get(name.split(",")[0])
        verdict = "" if target is None else f"< {target} s {'ok' if medians[name] < target else 'MISSED'}"
        print(f"{name:<26} {medians[name]:>9.3f} {min(values):>7.3f} {medians[name] / base:>7.1f} "
              f"{medians[name] / yaml_ref:>7.1f}  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
