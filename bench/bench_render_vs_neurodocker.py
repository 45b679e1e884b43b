"""`envgen render PROFILE` against `neurodocker generate docker` for the same stack, each a fresh process, paired.

Each round runs both commands once, one after the other (the order alternates round to round), so load on the
shared machine hits both alike; the figure is the median of the per-round ratios (envgen / neurodocker) of the
wall time, printed beside each command's median wall time and the same ratio of CPU time (user + system, what the
command itself costs; on a loaded machine the wall time includes waiting for a core). One warm-up round first
(bytecode, the page cache and envgen's KB cache, which `envgen check` fills too).

The neurodocker command describes modern-a100's stack to it: the CUDA runtime base, a conda environment with the
profile's Python and CUDA toolkit, the frameworks by pip. neurodocker comes from PyPI, in a venv of its own:

    python -m venv /tmp/nd && /tmp/nd/bin/pip install neurodocker==2.1.2
    python bench/bench_render_vs_neurodocker.py --neurodocker /tmp/nd/bin/neurodocker [-n RUNS]

envgen runs with a private cache directory and state directory, and renders into a temporary directory.
--baseline DIR adds the render of another checkout (e.g. `git archive d6f882d | tar -x -C DIR`), run with
`python -S` and PYTHONPATH=DIR:<site-packages> (this checkout's editable install cannot shadow it) and a cache
directory of its own, paired the same way.
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

NEURODOCKER_ARGS = ["generate", "docker", "--pkg-manager", "apt",
                    "--base-image", "nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04",
                    "--miniconda", "version=latest", "conda_install=python=3.10.13 cudatoolkit=11.8",
                    "pip_install=tensorflow==2.12.0 torch==2.1.2 torchvision==0.16.2 torchaudio==2.1.2"]


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of ``cmd`` in ``cwd`` (not a checkout: `python -m envgen` would import
    the envgen beside it); a failure stops the bench."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.decode()[-400:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=15)
    parser.add_argument("--profile", default="modern-a100")
    parser.add_argument("--neurodocker", default=shutil.which("neurodocker"), help="the neurodocker command")
    parser.add_argument("--baseline", help="another checkout's root, its render measured beside this one")
    args = parser.parse_args(argv)
    if not args.neurodocker:
        raise SystemExit("neurodocker not found: install it from PyPI (see the docstring) and pass --neurodocker")
    with tempfile.TemporaryDirectory(prefix="envgen-bench-render-") as tmp:
        home = Path(tmp)
        (home / "config.yaml").write_text(f"state_dir: {home / 'state'}\n", encoding="utf-8")
        env = {**os.environ, "ENVGEN_CONFIG": str(home / "config.yaml"), "ENVGEN_CACHE_DIR": str(home / "cache")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as an installed envgen runs: from bytecode
        cases = {"envgen render": ([sys.executable, "-m", "envgen", "render", args.profile, "-o", str(home / "out")],
                                   env),
                 "neurodocker generate": ([args.neurodocker, *NEURODOCKER_ARGS], env)}
        if args.baseline:
            import site

            old = {**env, "ENVGEN_CACHE_DIR": str(home / "baseline-cache"),
                   "PYTHONPATH": os.pathsep.join([args.baseline, *site.getsitepackages()])}
            cases["baseline render"] = ([sys.executable, "-S", "-m", "envgen", "render", args.profile, "-o",
                                         str(home / "old")], old)
        for cmd, case_env in cases.values():  # warm-up
            timed(cmd, case_env, home)
        walls: dict[str, list[float]] = {name: [] for name in cases}
        cpus: dict[str, list[float]] = {name: [] for name in cases}
        for run in range(args.runs):
            for name in (list(cases) if run % 2 == 0 else list(cases)[::-1]):
                wall, cpu = timed(*cases[name], home)
                walls[name].append(wall)
                cpus[name].append(cpu)
    ours, theirs = "envgen render", "neurodocker generate"
    wall_ratio = statistics.median(a / b for a, b in zip(walls[ours], walls[theirs], strict=True))
    cpu_ratio = statistics.median(a / b for a, b in zip(cpus[ours], cpus[theirs], strict=True))
    print(f"{'command':<24} {'wall median (s)':>16} {'cpu median (s)':>15}   {args.runs} paired runs")
    for name in cases:
        print(f"{name:<24} {statistics.median(walls[name]):>16.3f} {statistics.median(cpus[name]):>15.3f}")
    if args.baseline:
        old_ratio = statistics.median(a / b for a, b in zip(walls["baseline render"], walls[theirs], strict=True))
        print(f"baseline render / neurodocker generate, median of paired ratios: wall {old_ratio:.2f}x")
    verdict = "met" if wall_ratio <= 1.0 else "NOT met"
    print(f"envgen render {args.profile} / neurodocker generate, median of paired ratios: wall {wall_ratio:.2f}x, "
          f"cpu {cpu_ratio:.2f}x; goal <= 1.00x (wall): {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
