"""Build figures for `cpu-smoke`: envgen's Dockerfile against a plain hand-written one, with ratios.

For each: the median of N cold builds (default 3, interleaved envgen/hand-written so that load on the
shared machine hits both alike), a warm rebuild (nothing changed), a rebuild after one extra pip
package, and the image size. Both build with BuildKit (`DOCKER_BUILDKIT=1 docker build`) on the same
local base image and get the proxy CA bundle the same way (a build secret); the hand-written
Dockerfile is the common pattern: one stage, apt then one `pip install --no-cache-dir` layer, the
wheelhouse COPYed in, no cache mounts.

"Cold" without touching anyone else's build cache (the engine is shared: the global cache is never
pruned): every cold build runs with `--no-cache` (no layer is reused) and, for envgen, a fresh
`ENVGEN_CACHE_ID` build arg, which points uv's cache at an empty sub-directory of its cache mount;
the hand-written Dockerfile has no cache mounts. Those sub-directories are removed at the end by a
small build that mounts the same cache. Image tags start with `envgen-bench-<pid>-` and are removed.

    python bench/bench_build.py [--runs 3] [--wheelhouse /opt/wheels] [--docker CLI]

On another engine: `eval "$(sudo scripts/engine-current start)"` (Docker 26: DOCKER_HOST, and its CLI with the
buildx plugin first on PATH), then `python bench/bench_build.py --docker docker`; the engine's name and version are
printed with the figures.

Needs a running engine with BuildKit (scripts/host-setup) and the network (PyPI). Slow: about
20-30 minutes on 2 cores. The envgen rebuild after +1 package needs a new lock first (`envgen lock`,
timed and printed separately: it resolves on the host, the build itself resolves nothing).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCKER = "/usr/bin/docker"

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

CLEANUP = """\
FROM debian:bookworm-slim
ARG PREFIX
RUN --mount=type=cache,target=/root/.cache/uv rm -rf /root/.cache/uv/"$PREFIX"*
"""


def docker_build(context: Path, tag: str, *, ca: Path | None, args: dict[str, str], no_cache: bool,
                 log: Path) -> float:
    command = [DOCKER, "build", "--progress=plain", "-t", tag]
    if no_cache:
        command.append("--no-cache")
    if ca is not None:
        command += ["--secret", f"id=ca_bundle,src={ca}"]
    for key, value in args.items():
        command += ["--build-arg", f"{key}={value}"]
    command.append(str(context))
    env = {**os.environ, "DOCKER_BUILDKIT": "1"}
    start = time.perf_counter()
    with log.open("a", encoding="utf-8") as out:
        out.write(f"\n=== {' '.join(command)}\n")
        out.flush()
        done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, env=env, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"build of {tag} failed (exit {done.returncode}); see {log}")
    return elapsed


def image_mb(tag: str) -> float:
    out = subprocess.run([DOCKER, "image", "inspect", "-f", "{{.Size}}", tag], capture_output=True, text=True,
                         check=True).stdout
    return int(out.strip()) / 1e6


def envgen_context(home: Path, name: str, extra: str | None, wheelhouse: Path) -> tuple[Path, dict[str, str], float]:
    """Write the bench profile (cpu-smoke under another name), lock it, render it; the lock time."""
    from envgen.kb import load_kb
    from envgen.lock.lock import lock
    from envgen.profile import load_profile
    from envgen.render.core import render

    text = (ROOT / "profiles" / "cpu-smoke.yaml").read_text(encoding="utf-8").replace("name: cpu-smoke",
                                                                                       f"name: {name}")
    if extra:
        text = text.replace("    - numpy==1.23.5", f"    - numpy==1.23.5\n    - {extra}")
    (home / "profiles" / f"{name}.yaml").write_text(text, encoding="utf-8")
    started = time.perf_counter()
    lock(name, wheelhouse=wheelhouse)
    lock_s = time.perf_counter() - started
    out = home / "contexts" / name
    result = render(load_profile(name), load_kb(), out, wheelhouse=wheelhouse)
    return out, dict(result.build_args), lock_s


def _cleanup(home: Path, prefix: str, tags: list[str], log: Path) -> None:
    """Remove the uv cache sub-directories the cold builds filled (a small build that mounts the same cache), the
    bench's image tags, and keep the log."""
    clean = home / "cleanup"
    clean.mkdir()
    (clean / "Dockerfile").write_text(CLEANUP)
    tags.append(f"{prefix}cleanup:0")
    docker_build(clean, tags[-1], ca=None, no_cache=True, log=log, args={"PREFIX": prefix})
    for tag in tags:
        subprocess.run([DOCKER, "rmi", tag], capture_output=True, check=False)
    shutil.copyfile(log, Path(tempfile.gettempdir()) / f"{prefix}bench.log")


def main() -> int:
    global DOCKER
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="cold builds of each (median reported)")
    parser.add_argument("--wheelhouse", type=Path, default=Path("/opt/wheels"))
    parser.add_argument("--docker", default=DOCKER, help="the docker CLI to build with (default: Debian's 20.10 "
                        "CLI; `docker` for the one on PATH); it talks to $DOCKER_HOST")
    args = parser.parse_args()
    DOCKER = shutil.which(args.docker) or args.docker
    engine = subprocess.run([DOCKER, "version", "--format", "{{.Server.Version}}"], capture_output=True, text=True,
                            check=True).stdout.strip()
    print(f"engine: Docker {engine} at {os.environ.get('DOCKER_HOST', 'the default socket')}; CLI {DOCKER}",
          flush=True)
    from envgen.config import load_config

    prefix = f"envgen-bench-{os.getpid()}-"
    tags: list[str] = []
    with tempfile.TemporaryDirectory(prefix="envgen-bench-") as tmp:
        home = Path(tmp)
        (home / "profiles").mkdir()
        (home / "config.yaml").write_text(f"state_dir: {home / 'state'}\n")
        os.environ["ENVGEN_CONFIG"] = str(home / "config.yaml")
        os.environ["ENVGEN_PROFILE_PATH"] = str(home / "profiles")
        ca = load_config().ca_bundle
        log = home / "bench.log"
        name = prefix.rstrip("-")
        context, build_args, _ = envgen_context(home, name, None, args.wheelhouse)
        hand = home / "hand"
        shutil.copytree(args.wheelhouse, hand / "wheels")
        (hand / "Dockerfile").write_text(HAND_WRITTEN.format(extra=""))
        cold: dict[str, list[float]] = {"envgen": [], "hand": []}
        try:
            for run in range(args.runs):
                tag = f"{prefix}envgen:{run}"
                tags.append(tag)
                cold["envgen"].append(docker_build(context, tag, ca=ca, no_cache=True, log=log,
                                                   args={**build_args, "ENVGEN_CACHE_ID": f"{prefix}{run}"}))
                tag = f"{prefix}hand:{run}"
                tags.append(tag)
                cold["hand"].append(docker_build(hand, tag, ca=ca, no_cache=True, log=log, args={}))
                print(f"cold run {run + 1}: envgen {cold['envgen'][-1]:.1f}s, hand-written {cold['hand'][-1]:.1f}s",
                      flush=True)
            last = args.runs - 1
            cache_id = {"ENVGEN_CACHE_ID": f"{prefix}{last}"}
            e_tag, h_tag = f"{prefix}envgen:{last}", f"{prefix}hand:{last}"
            e_size, h_size = image_mb(e_tag), image_mb(h_tag)
            warm = {"envgen": docker_build(context, e_tag, ca=ca, no_cache=False, log=log,
                                           args={**build_args, **cache_id}),
                    "hand": docker_build(hand, h_tag, ca=ca, no_cache=False, log=log, args={})}
            context2, build_args2, lock_s = envgen_context(home, name, "colorama==0.4.6", args.wheelhouse)
            (hand / "Dockerfile").write_text(HAND_WRITTEN.format(extra="colorama==0.4.6"))
            small = {"envgen": docker_build(context2, f"{prefix}envgen:small", ca=ca, no_cache=False, log=log,
                                            args={**build_args2, **cache_id}),
                     "hand": docker_build(hand, f"{prefix}hand:small", ca=ca, no_cache=False, log=log, args={})}
            tags += [f"{prefix}envgen:small", f"{prefix}hand:small"]
        finally:
            try:
                _cleanup(home, prefix, tags, log)
            except (OSError, SystemExit) as exc:  # a full disk must not hide the figures measured
                print(f"warning: cleanup failed ({exc}); remove the tags {prefix}* and the uv cache "
                      f"sub-directories {prefix}* yourself", file=sys.stderr)
    e_cold, h_cold = statistics.median(cold["envgen"]), statistics.median(cold["hand"])
    print(f"\n{'cpu-smoke (BuildKit, 2 cores)':34} {'envgen':>10} {'hand-written':>13} {'ratio':>7}")
    rows = [(f"cold build (median of {args.runs})", e_cold, h_cold, "s"),
            ("warm rebuild (no change)", warm["envgen"], warm["hand"], "s"),
            ("rebuild after +1 pip package", small["envgen"], small["hand"], "s"),
            ("image size", e_size, h_size, "MB")]
    for label, e, h, unit in rows:
        print(f"{label:34} {e:>9.1f}{unit} {h:>12.1f}{unit} {e / h:>7.2f}")
    print(f"cold runs: envgen {', '.join(f'{x:.1f}' for x in cold['envgen'])}; "
          f"hand-written {', '.join(f'{x:.1f}' for x in cold['hand'])}")
    print(f"envgen lock after the change (host, before the rebuild): {lock_s:.1f}s")
    cold_ratio, small_share, size_ratio = e_cold / h_cold, small["envgen"] / e_cold, e_size / h_size

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    print(f"goals: cold <= 0.80x hand-written: {cold_ratio:.2f}x {verdict(cold_ratio <= 0.8)}; "
          f"+1 package <= 5% of envgen's cold: {100 * small_share:.1f}% {verdict(small_share <= 0.05)}; "
          f"image <= 0.90x: {size_ratio:.2f}x {verdict(size_ratio <= 0.9)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
