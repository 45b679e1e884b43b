"""The same small profile built natively for linux/amd64 and under QEMU for linux/arm64, as a ratio, with the steps
that take the time (issue #43).

The profile: Debian 12's Python 3.11 (apt) and one pure-Python wheel (pip, through the proxy and the CA-bundle
secret as every envgen build), on the local base of both platforms. It is checked and rendered once
(envgen.pipeline.platforms.prepare_platforms); then each platform is built alone, cold (`--no-cache`, and a fresh
ENVGEN_CACHE_ID so that uv's cache mount starts empty; apt's cache mounts keep their .debs, one set per
architecture: run twice to see warm-apt figures), pushed to the local registry, and timed. The build log's `#N DONE
12.3s` lines give each step's time; the steps are grouped as apt (the apt-get install layers), python env (venv and
pip/uv install), the rest (the probe's files, the user). The build and runtime stages run side by side, so the
steps' sum exceeds the wall time.

    eval "$(sudo scripts/engine-current start)"; sudo scripts/engine-current arm64-base
    python bench/bench_arm64.py [--registry localhost:5000/envgen-bench] [--runs 1]

Needs Docker >= 24 with the containerd image store (scripts/engine-current), qemu-user-static registered with
binfmt's F flag (scripts/host-setup), the local registry (localhost:5000) and PyPI. Pushed tags and local images
are removed at the end. About 5 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PROFILE = """\
name: bench-arm64
description: Python 3.11 + one pure-Python wheel, for the arm64 benchmark
base: debian:bookworm-slim
local_base: true
installer: pip
python: "3.11"
gpu: {required: false}
packages:
  pip: [six==1.16.0]
"""
STEP = re.compile(r"^#(\d+) \[(?:linux/\w+ )?([^\]]+)\] (.*)$")
DONE = re.compile(r"^#(\d+) DONE (\d+(?:\.\d+)?)s$")
GROUPS = (("apt", ("apt-install.sh",)), ("python env", ("requirements", "--prefix", "venv")))


def step_times(log: Path) -> dict[str, float]:
    """Seconds per step (its stage, number and command's first words) from a BuildKit plain log."""
    names: dict[str, str] = {}
    times: dict[str, float] = {}
    for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
        step = STEP.match(line)
        if step:
            command = step.group(3)
            names[step.group(1)] = f"{step.group(2)}: {command.split('    ')[-1][:70]}"
            continue
        done = DONE.match(line)
        if done and done.group(1) in names:
            name = names[done.group(1)]
            times[name] = times.get(name, 0.0) + float(done.group(2))
    return times


def grouped(times: dict[str, float]) -> dict[str, float]:
    """The steps' seconds per group: apt, python env, the rest (probe files, base, workdirs)."""
    out = {name: 0.0 for name, _ in GROUPS} | {"rest": 0.0}
    for step, seconds in times.items():
        group = next((name for name, marks in GROUPS if any(mark in step for mark in marks)), "rest")
        out[group] += seconds
    return out


def delete(ref: str, digest: str) -> None:
    host, repo = ref.split("/", 1)
    request = urllib.request.Request(f"http://{host}/v2/{repo.rsplit(':', 1)[0]}/manifests/{digest}",
                                     method="DELETE")
    with contextlib.suppress(OSError):
        urllib.request.build_opener(urllib.request.ProxyHandler({})).open(request, timeout=10).close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--registry", default=f"localhost:5000/envgen-bench-{os.getpid()}")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    from envgen.docker import connect
    from envgen.docker.engine import engine_info
    from envgen.pipeline.platforms import build_prepared, prepare_platforms

    home = Path(tempfile.mkdtemp(prefix="envgen-bench-arm64-"))
    (home / "profiles").mkdir()
    (home / "profiles" / "bench-arm64.yaml").write_text(PROFILE, encoding="utf-8")
    (home / "config.yaml").write_text(f"state_dir: {home / 'state'}\n", encoding="utf-8")
    os.environ.update(ENVGEN_CONFIG=str(home / "config.yaml"), ENVGEN_PROFILE_PATH=str(home / "profiles"))
    engine = engine_info(connect())
    print(f"engine: Docker {engine.version}, containerd store: {engine.containerd_store}; cores: {os.cpu_count()}")
    prepared = prepare_platforms("bench-arm64", registry=args.registry)
    totals: dict[str, list[float]] = {"linux/amd64": [], "linux/arm64": []}
    steps: dict[str, dict[str, float]] = {}
    pushed = []
    for run in range(args.runs):
        for platform in totals:
            arch = platform.split("/")[1]
            began = time.monotonic()
            built = build_prepared(prepared, [platform], no_cache=True, suffix=f"-{arch}-{run}",
                                   build_args={"ENVGEN_CACHE_ID": f"bench-{os.getpid()}-{arch}-{run}"})
            totals[platform].append(time.monotonic() - began)
            steps[platform] = step_times(built.log_path)
            pushed.append((built.ref, [i.digest for i in built.images] + [built.index_digest]))
            print(f"{platform} run {run + 1}: {totals[platform][-1]:.1f} s, pushed {built.ref}")
    for platform, seconds in totals.items():
        groups = grouped(steps[platform])
        print(f"\n{platform}: median {statistics.median(seconds):.1f} s over {len(seconds)} run(s); steps: "
              + ", ".join(f"{g} {s:.1f} s" for g, s in groups.items()))
        for name, secs in sorted(steps[platform].items(), key=lambda kv: -kv[1])[:4]:
            print(f"  {secs:7.1f} s  {name}")
    amd, arm = (statistics.median(totals[p]) for p in totals)
    arm_groups, amd_groups = grouped(steps["linux/arm64"]), grouped(steps["linux/amd64"])
    top = max(arm_groups, key=lambda g: arm_groups[g])
    print(f"\nratio arm64 (QEMU) / amd64 (native): {arm / amd:.1f}x; the arm64 build's largest part: {top} "
          f"({arm_groups[top]:.1f} s of {sum(arm_groups.values()):.1f} s in steps; amd64: "
          f"{amd_groups[top]:.1f} s)")
    for ref, digests in pushed:
        for digest in digests:
            delete(ref, digest)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
