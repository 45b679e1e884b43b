"""Build figures for `cpu-smoke`: envgen's Dockerfile against a plain hand-written one.

Prints, for each: cold build time (no build cache), warm rebuild time (nothing changed), rebuild time
after a small change (one extra pip package), and the final image size. Both build with BuildKit on
the same local base image and get the proxy CA bundle the same way (a build secret), so the network
path is the same; the hand-written Dockerfile is the common pattern: one stage, one `pip install` layer,
no cache mounts, caches removed with --no-cache-dir.

    python bench/bench_build.py [--keep-cache]     # --keep-cache: skip the cold runs' cache prune

Needs a running engine (scripts/host-setup). Cold runs prune the BuildKit cache: slow (minutes).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from envgen.config import load_config
from envgen.docker import build_image, connect, detect_builder, inspect_image
from envgen.docker.progress import NullSink
from envgen.pipeline.build import build

ROOT = Path(__file__).resolve().parents[1]

HAND_WRITTEN = """\
FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-venv \\
    && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /opt/env
COPY wheels/ /tmp/wheels/
RUN --mount=type=secret,id=ca_bundle,required=false \\
    PIP_CERT=/run/secrets/ca_bundle /opt/env/bin/pip install --no-cache-dir --find-links /tmp/wheels \\
    tensorflow-cpu==2.12.0 torch==2.13.0+cpu numpy==1.23.5 {extra}
ENV PATH=/opt/env/bin:$PATH
"""


def prune(keep: bool) -> None:
    if not keep:
        subprocess.run(["/usr/bin/docker", "builder", "prune", "-af"], check=True, capture_output=True)


def timed(action) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def envgen_figures(home: Path, keep_cache: bool) -> dict[str, float]:
    profiles = home / "profiles"
    profiles.mkdir()
    base = (ROOT / "profiles" / "cpu-smoke.yaml").read_text(encoding="utf-8")
    (profiles / "bench-smoke.yaml").write_text(base.replace("name: cpu-smoke", "name: bench-smoke"))
    (home / "config.yaml").write_text(f"state_dir: {home / 'state'}\n")
    os.environ["ENVGEN_CONFIG"] = str(home / "config.yaml")
    os.environ["ENVGEN_PROFILE_PATH"] = str(profiles)
    prune(keep_cache)
    cold = timed(lambda: build("bench-smoke", smoke=False))
    warm = timed(lambda: build("bench-smoke", smoke=False))
    changed = base.replace("name: cpu-smoke", "name: bench-smoke").replace(
        "    - numpy==1.23.5", "    - numpy==1.23.5\n    - six==1.16.0")
    (profiles / "bench-smoke.yaml").write_text(changed)
    small = timed(lambda: build("bench-smoke", smoke=False))
    client = connect()
    image = inspect_image(client, "envgen/bench-smoke:latest")
    return {"cold": cold, "warm": warm, "small": small, "size": (image.size if image else 0) / 1e6}


def hand_written_figures(home: Path, keep_cache: bool, wheelhouse: Path) -> dict[str, float]:
    context = home / "hand"
    shutil.copytree(wheelhouse, context / "wheels")
    builder = detect_builder(choice="buildkit")
    config = load_config()
    secrets = {"ca_bundle": config.ca_bundle} if config.ca_bundle else {}

    def run(extra: str) -> str:
        (context / "Dockerfile").write_text(HAND_WRITTEN.format(extra=extra))
        return build_image(context, builder=builder, log_path=home / "hand.log", tags=["bench/hand:latest"],
                           secrets=secrets, progress=NullSink()).image_id

    prune(keep_cache)
    cold = timed(lambda: run(""))
    warm = timed(lambda: run(""))
    small = timed(lambda: run("six==1.16.0"))
    image = inspect_image(connect(), "bench/hand:latest")
    return {"cold": cold, "warm": warm, "small": small, "size": (image.size if image else 0) / 1e6}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep-cache", action="store_true", help="do not prune the build cache before cold runs")
    parser.add_argument("--wheelhouse", type=Path, default=Path("/opt/wheels"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="envgen-bench-") as tmp:
        home = Path(tmp)
        envgen = envgen_figures(home, args.keep_cache)
        hand = hand_written_figures(home, args.keep_cache, args.wheelhouse)
    print(f"{'cpu-smoke (BuildKit, 2 cores)':32} {'envgen':>10} {'hand-written':>13}")
    for key, label, unit in (("cold", "cold build", "s"), ("warm", "warm rebuild (no change)", "s"),
                             ("small", "rebuild after +1 pip package", "s"), ("size", "image size", "MB")):
        print(f"{label:32} {envgen[key]:>9.1f}{unit} {hand[key]:>12.1f}{unit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
