"""`envgen run PROFILE true` against `envgen check PROFILE` plus the engine's own time (issue #41).

`envgen run PROFILE` looks up the image the profile renders to (the profile and the KB from check's caches, the
content hash from the store where a render of the same inputs made it, else rendered in memory:
envgen/pipeline/tagkey.py), checks the host against it where it gets GPUs, and starts the container; `envgen
check PROFILE` loads, plans and judges. The goal: run no slower than check plus what the engine itself takes to
start and remove a container (`docker run --rm IMAGE true`, measured in the same run).

The profile (default cpu-minimal, which builds in seconds) is built first with this checkout under a private
namespace, config and state directory (nothing of the user's is read or written), then each command runs N times
as a fresh process, interleaved so that the machine's load hits them alike; the medians are printed with
run - check - engine, "envgen's own overhead of a run over a check". --baseline DIR times `check` and `run` of
another checkout (`git archive COMMIT | tar -x -C DIR`) on the same image: its render gives the same tag.

    python bench/bench_run.py [-n RUNS] [--profile PROFILE] [--baseline DIR] [--keep]
"""

from __future__ import annotations

import argparse
import os
import resource
import site
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _time(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the process: user + system). On a busy machine the wall figure includes
    waiting for a core; the CPU figure is what the command itself costs (the engine daemon's work is in neither)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    # `python -m` puts the working directory first on sys.path: each checkout runs from its own root
    done = subprocess.run(cmd, env=env, cwd=env.get("BENCH_CWD", REPO), stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.decode()[-600:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _environment(root: Path) -> dict[str, str]:
    """A private namespace, config (its state directory) and cache directory."""
    config = root / "config.yaml"
    config.write_text(f"state_dir: {root / 'state'}\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "ENVGEN_NAMESPACE": f"envgen-bench-{uuid.uuid4().hex[:8]}", "ENVGEN_CONFIG": str(config),
            "ENVGEN_CACHE_DIR": str(root / "cache")}


def _tag(env: dict[str, str], profile: str) -> str:
    code = ("import sys\nfrom envgen.pipeline.resolve import profile_tag\nfrom envgen.profile import load_profile\n"
            f"print(profile_tag(load_profile({profile!r}))[0])")
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=REPO, check=True, capture_output=True,
                          text=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=7)
    parser.add_argument("--profile", default="cpu-minimal")
    parser.add_argument("--baseline", default=None, help="another checkout to time as well")
    parser.add_argument("--keep", action="store_true", help="keep the image built")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="envgen-bench-run-") as tmp:
        env = _environment(Path(tmp))
        env["PYTHONPATH"] = str(REPO)
        envgen = [sys.executable, "-m", "envgen"]
        built = subprocess.run([*envgen, "build", args.profile], env=env, cwd=REPO, capture_output=True, text=True,
                               check=False)
        if built.returncode != 0:
            raise SystemExit(f"envgen build {args.profile} failed: {(built.stdout + built.stderr)[-800:]}")
        tag = _tag(env, args.profile)
        cases: dict[str, tuple[list[str], dict[str, str]]] = {
            "envgen check": ([*envgen, "check", args.profile], env),
            "envgen run": ([*envgen, "run", args.profile, "--", "true"], env),
            "engine: docker run --rm": (["docker", "run", "--rm", tag, "true"], env),
        }
        if args.baseline:
            old = {**env, "PYTHONPATH": os.pathsep.join([args.baseline, *site.getsitepackages()]),
                   "BENCH_CWD": args.baseline,  # its own cache: the KB cache's key differs by code, and a
                   "ENVGEN_CACHE_DIR": str(Path(tmp) / "cache-baseline")}  # writer drops the other's
            python = [sys.executable, "-S", "-m", "envgen"]
            cases["before: envgen check"] = ([*python, "check", args.profile], old)
            cases["before: envgen run"] = ([*python, "run", args.profile, "--", "true"], old)
        try:
            _report(cases, args.n)
        finally:
            if not args.keep:  # every tag under the private namespace (the content tag and the :latest alias),
                listed = subprocess.run(["docker", "images", "--format", "{{.Repository}}:{{.Tag}}", "--filter",
                                         f"reference={env['ENVGEN_NAMESPACE']}/*"], capture_output=True, text=True,
                                        check=False).stdout.split()  # by name: an image also tagged elsewhere stays
                subprocess.run(["docker", "rmi", *dict.fromkeys([tag, *listed])], capture_output=True, check=False)
    return 0


def _report(cases: dict[str, tuple[list[str], dict[str, str]]], runs: int) -> None:
    for cmd, env in cases.values():  # warm-up: caches filled, bytecode written
        _time(cmd, env)
    load = os.getloadavg()
    walls: dict[str, list[float]] = {name: [] for name in cases}
    cpus: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(runs):
        for name, (cmd, env) in cases.items():
            wall, cpu = _time(cmd, env)
            walls[name].append(wall)
            cpus[name].append(cpu)
    wall_of: Callable[[str], float] = lambda name: statistics.median(walls[name])  # noqa: E731
    print(f"load average before the runs {load[0]:.1f}, after {os.getloadavg()[0]:.1f} ({os.cpu_count()} CPUs)")
    print(f"{'case':<28} {'median s':>9} {'min s':>7} {'CPU s':>7}   ({runs} runs each, interleaved; CPU: median)")
    for name in cases:
        print(f"{name:<28} {wall_of(name):>9.3f} {min(walls[name]):>7.3f} {statistics.median(cpus[name]):>7.3f}")
    engine = wall_of("engine: docker run --rm")
    cpu_of: Callable[[str], float] = lambda name: statistics.median(cpus[name])  # noqa: E731
    for prefix in ("", "before: "):
        if f"{prefix}envgen run" in walls:
            run, check = wall_of(f"{prefix}envgen run"), wall_of(f"{prefix}envgen check")
            fastest = min(walls[f"{prefix}envgen run"]) / (min(walls[f"{prefix}envgen check"])
                                                           + min(walls["engine: docker run --rm"]))
            cpu = cpu_of(f"{prefix}envgen run") - cpu_of(f"{prefix}envgen check") - cpu_of("engine: docker run --rm")
            print(f"{prefix or 'now: '}run - check - engine = {run - check - engine:+.3f} s "
                  f"(run / (check + engine) = {run / (check + engine):.2f}; by the fastest runs: {fastest:.2f}; "
                  f"CPU of the client processes, the daemon's in none: {cpu:+.3f} s)")


if __name__ == "__main__":
    raise SystemExit(main())
