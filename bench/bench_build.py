"""Build figures for `cpu-smoke` or `a100-pypi`: envgen's Dockerfile against a hand-written one, with ratios.

For each: the median of N cold builds (default 3, interleaved envgen/hand-written so that load on the
shared machine hits both alike), a warm rebuild (nothing changed), a rebuild after one extra pip
package, the image size and each image's layers. Both build with BuildKit (`DOCKER_BUILDKIT=1 docker
build`) on the same local base image. The hand-written Dockerfiles (bench/reference/<profile>.Dockerfile)
are the common pattern: one stage, apt then one `pip install --no-cache-dir` layer, the same pins.

The wheels: one shared wheelhouse outside both images (--wheelhouse, default ~/.cache/envgen-bench/wheels, kept
between runs), filled before anything is timed with every wheel of the bench profile's lock (`pip download
--require-hashes`, on the host) and seeded with the wheels no index here serves (--seed, /opt/wheels: the +cpu
torch). Each run links the wheels of its lock and of the +1 package into a directory of its own, and both sides'
contexts hold those only (profile_wheels). envgen builds it offline (`--wheelhouse DIR --offline`: the context's
wheels/, bind-mounted); the hand-written one bind-mounts the same files with `pip --no-index --find-links`. Neither
downloads in a timed build, and neither image keeps a wheel (the reference before #44 COPYed wheels/ into a layer of
its image).

"Cold" without touching anyone else's build cache (the engine is shared: the global cache is never
pruned): every cold build runs with `--no-cache` (no layer is reused) and, for envgen, a fresh
`ENVGEN_CACHE_ID` build arg, which points uv's cache at an empty sub-directory of its cache mount;
the hand-written Dockerfile has no cache mounts. Those sub-directories are removed at the end by a
small build that mounts the same cache. Images are tagged in a namespace of the test suite's kind
(`envgen-test-<hex>/bench-...`, tests/isolation.py) and removed at the end (--keep leaves them for
`envgen images --size`, printed).

    python bench/bench_build.py [--profile cpu-smoke|a100-pypi] [--runs 3] [--wheelhouse DIR] [--seed DIR]
                                [--docker CLI] [--keep] [--top N]

On another engine: `eval "$(sudo scripts/engine-current start)"` (Docker 26: DOCKER_HOST, and its CLI with the
buildx plugin first on PATH), then `python bench/bench_build.py --docker docker`; the engine's name and version are
printed with the figures.

Needs a running engine with BuildKit (scripts/host-setup) and, the first time, PyPI (the download). Slow: cpu-smoke
about 20-30 minutes on 2 cores, a100-pypi (2.4 GB of wheels, 5 GB images) longer. The envgen rebuild after +1
package needs a new lock first (`envgen lock`, timed and printed separately: it resolves on the host, the build
itself resolves nothing).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCKER = "/usr/bin/docker"
PROFILES = ("cpu-smoke", "a100-pypi")
# Free space the engine's data root needs for one run, in GB (measured 2026-12-04: envgen's image, uv's cache mount
# holding the unpacked wheels beside it, the reference's image and its +1 rebuild): both runs died on a full disk.
NEEDS_GB = {"cpu-smoke": 12, "a100-pypi": 24}
EXTRA = "colorama==0.4.6"  # the +1 package
LOCKED = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*==\S+ --hash=sha256:[0-9a-f]{64}")

CLEANUP = """\
FROM debian:bookworm-slim
ARG PREFIX
RUN --mount=type=cache,target=/root/.cache/uv rm -rf /root/.cache/uv/"$PREFIX"*
"""


@dataclass
class Bench:
    """One bench run's places and what it built."""

    profile: str
    home: Path
    wheelhouse: Path
    namespace: str
    ca: Path | None
    log: Path
    tags: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)  # every image built: a rebuild under the same tag leaves the old one

    def tag(self, side: str, label: str) -> str:
        self.tags.append(f"{self.namespace}/bench-{side}:{label}")
        return self.tags[-1]


def docker_build(context: Path, tag: str, *, ca: Path | None, args: dict[str, str], no_cache: bool,
                 log: Path, ids: list[str] | None = None) -> float:
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
    if ids is not None:  # untagged by a later build of the same tag, it would stay behind (5 GB for a100-pypi)
        ids.append(subprocess.run([DOCKER, "image", "inspect", "-f", "{{.Id}}", tag], capture_output=True, text=True,
                                  check=False).stdout.strip())
    return elapsed


# BuildKit's plain progress: a step's name ("#9 [runtime 1/7] RUN ..."), its end ("#9 DONE 17.0s"), the export, and
# the lines of a step that say where its time went (uv's phases, the leave-out, the bytecode)
STEP_NAME = re.compile(r"^#(\d+) (\[[^\]]+\] .*)$")
STEP_DONE = re.compile(r"^#(\d+) DONE (\d+\.\d+)s$")
EXPORT = re.compile(r"^#\d+ exporting layers (\d+\.\d+)s done$")
PHASE = re.compile(r"^#(\d+) (\d+\.\d+) ((?:Prepared|Installed|Bytecode compiled) .*|envgen: (?:left out|bytecode).*)$")


def step_times(text: str, least_s: float = 0.2) -> list[tuple[float, str]]:
    """One build's steps from its plain progress output, in the order they ended: (seconds, the step shortened) for
    steps of ``least_s`` or more and the export of the layers, each step followed by its phase lines (uv's prepare,
    install and compile, the leave-out, compile.sh) as (seconds into the step, "at Ns: the line")."""
    names: dict[str, str] = {}
    phases: dict[str, list[tuple[float, str]]] = {}
    rows: list[tuple[float, str]] = []
    for line in text.splitlines():
        if (named := STEP_NAME.match(line)) is not None:
            names[named[1]] = short_step(named[2])
        elif (phase := PHASE.match(line)) is not None:
            phases.setdefault(phase[1], []).append((float(phase[2]), f"at {phase[2]}s: {phase[3]}"))
        elif (done := STEP_DONE.match(line)) is not None and float(done[2]) >= least_s and done[1] in names:
            rows += [(float(done[2]), names[done[1]]), *phases.get(done[1], [])]
        elif (export := EXPORT.match(line)) is not None:
            rows.append((float(export[1]), "exporting layers"))
    return rows


def image_mb(tag: str) -> float:
    out = subprocess.run([DOCKER, "image", "inspect", "-f", "{{.Size}}", tag], capture_output=True, text=True,
                         check=True).stdout
    return int(out.strip()) / 1e6


def layers(tag: str, least_mb: float = 1.0) -> list[tuple[float, str]]:
    """The image's layers of at least ``least_mb`` MB, bottom first: (MB, the step that made it, shortened)."""
    out = subprocess.run([DOCKER, "history", "--no-trunc", "--human=false", "--format", "{{.Size}}\t{{.CreatedBy}}",
                          tag], capture_output=True, text=True, check=True).stdout
    rows = []
    for line in reversed(out.splitlines()):
        size, _, step = line.partition("\t")
        if int(size) / 1e6 >= least_mb:
            rows.append((int(size) / 1e6, short_step(step)))
    return rows


def short_step(step: str) -> str:
    """A history line without BuildKit's mount options and comments: what the step ran, 90 characters at most."""
    step = re.sub(r"^RUN \|\d+ (?:\S+=\S*\s+)*", "RUN ", step)  # the build args BuildKit records
    step = re.sub(r"--mount=\S+\s*", "", step).replace("/bin/sh -c ", "")
    step = re.sub(r"\s+", " ", step).strip()
    return step if len(step) <= 90 else step[:87] + "..."


# The N largest files, and directories under /opt/env's site-packages (3 levels) and the system's, of an image: what
# its size is made of (issue #44's measurement), read by `du`/`find` in a container of the image.
LARGEST = """find / -xdev -type f -printf '%s F %p\\n' 2>/dev/null | sort -rn | head -n "$1"
du -xb --max-depth=3 /opt/env/lib/python3.11/site-packages /usr/lib /usr/share 2>/dev/null \\
    | awk -F '\\t' '$2 !~ /(site-packages|^.usr.lib|^.usr.share)$/ {print $1 " D " $2}' | sort -rn | head -n "$1"
"""


def largest(tag: str, count: int) -> list[tuple[str, float, str]]:
    """The ``count`` largest files and directories of ``tag``: ("file" or "dir", MB, path), each kind largest first."""
    out = subprocess.run([DOCKER, "run", "--rm", "--user", "0:0", "--entrypoint", "sh", tag, "-c", LARGEST, "sh",
                          str(count)], capture_output=True, text=True, check=False).stdout
    rows = []
    for line in out.splitlines():
        size, kind, path = line.split(" ", 2)
        rows.append(("file" if kind == "F" else "dir", int(size) / 1e6, path))
    return rows


def locked_lines(lock_text: str) -> list[str]:
    """The `name==version --hash=sha256:...` lines of a lock's pip sets: environment, extras and [tools] (pip, which
    requirements.lock installs too, and uv's wheel)."""
    lines = []
    for line in lock_text.splitlines():
        if line.startswith("# [apt]"):
            break
        if LOCKED.match(line):
            lines.append(line)
    return lines


def fill_wheelhouse(wheelhouse: Path, lock_file: Path, log: Path) -> float:
    """Download every wheel of the lock's pip sets into the wheelhouse (what is there already is kept); seconds."""
    requirements = lock_file.with_suffix(".bench-requirements.txt")
    requirements.write_text("\n".join(locked_lines(lock_file.read_text(encoding="utf-8"))) + "\n", encoding="utf-8")
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--require-hashes",
               "--find-links", str(wheelhouse), "-r", str(requirements), "-d", str(wheelhouse)]
    start = time.perf_counter()
    with log.open("a", encoding="utf-8") as out:
        out.write(f"\n=== {' '.join(command)}\n")
        out.flush()
        done = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, check=False)
    if done.returncode != 0:
        raise SystemExit(f"pip download into {wheelhouse} failed (exit {done.returncode}); see {log}")
    return time.perf_counter() - start


def envgen_context(bench: Bench, name: str, extra: str | None) -> tuple[Path, dict[str, str], float, float]:
    """Write the bench profile (the profile under another name, + ``extra``), lock it, fill the wheelhouse with its
    wheels, render it offline from there; the lock and the download times."""
    from envgen.kb import load_kb
    from envgen.lock.lock import lock
    from envgen.plan.image import plan_image
    from envgen.profile import load_profile
    from envgen.render.core import render

    text = (ROOT / "profiles" / f"{bench.profile}.yaml").read_text(encoding="utf-8")
    text = text.replace(f"name: {bench.profile}", f"name: {name}")
    if extra:
        text = text.replace("    - numpy==1.23.5", f"    - numpy==1.23.5\n    - {extra}")
    profile_file = bench.home / "profiles" / f"{name}.yaml"
    profile_file.write_text(text, encoding="utf-8")
    started = time.perf_counter()
    lock(name, wheelhouse=bench.wheelhouse)
    lock_s = time.perf_counter() - started
    download_s = fill_wheelhouse(bench.wheelhouse, profile_file.with_name(f"{name}.lock.txt"), bench.log)
    out = bench.home / "contexts" / name
    wheels = profile_wheels(bench, profile_file.with_name(f"{name}.lock.txt"))  # the first call's lock: with +1
    result = render(plan_image(load_profile(name), load_kb()), out, wheelhouse=wheels, offline=True)
    return out, dict(result.build_args), lock_s, download_s


def profile_wheels(bench: Bench, lock_file: Path) -> Path:
    """The wheels of the profile's lock and of the +1 package, hard-linked (copied where links fail) out of the shared
    wheelhouse into a directory of the run's own, made once: both sides' contexts hold these and no other. The shared
    wheelhouse holds every profile's wheels, and BuildKit copies a whole context into its cache (a100-pypi's 2.4 GB
    in each cpu-smoke context filled the shared disk, 2026-12-04, and was timed in every cold build)."""
    view = bench.home / "wheels"
    if view.is_dir():
        return view
    view.mkdir()
    pins = {wheel_key(line.split()[0]) for line in [*locked_lines(lock_file.read_text(encoding="utf-8")), EXTRA]}
    for wheel in bench.wheelhouse.iterdir():
        if wheel.is_file() and wheel.suffix == ".whl" and wheel_key(wheel.name) in pins:
            try:
                os.link(wheel, view / wheel.name)
            except OSError:
                shutil.copyfile(wheel, view / wheel.name)
    return view


def hand_context(bench: Bench) -> Path:
    """The hand-written reference's context: its Dockerfile and the run's wheels (profile_wheels, hard links where
    the file system allows) under wheels/, bind-mounted by its pip step."""
    hand = bench.home / "hand"
    (hand / "wheels").mkdir(parents=True)
    shutil.copyfile(ROOT / "bench" / "reference" / f"{bench.profile}.Dockerfile", hand / "Dockerfile")
    for wheel in (bench.home / "wheels").iterdir():
        try:
            os.link(wheel, hand / "wheels" / wheel.name)
        except OSError:
            shutil.copyfile(wheel, hand / "wheels" / wheel.name)
    return hand


def wheel_key(pin_or_wheel: str) -> tuple[str, str]:
    """(canonical name, normalised version) of ``name==version`` or of a wheel's file name."""
    from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
    from packaging.version import Version

    if "==" in pin_or_wheel:
        name, _, version = pin_or_wheel.partition("==")
        return canonicalize_name(name), str(Version(version))
    try:
        parsed = parse_wheel_filename(pin_or_wheel)
    except InvalidWheelFilename:
        return "", ""
    return parsed[0], str(parsed[1])


def disk_check(profile: str) -> None:
    """Refuse to start when the engine's data root has less free space than a run of ``profile`` needs."""
    root = subprocess.run([DOCKER, "info", "-f", "{{.DockerRootDir}}"], capture_output=True, text=True,
                          check=True).stdout.strip()
    free_gb = shutil.disk_usage(root if Path(root).exists() else "/").free / 1e9
    if free_gb < NEEDS_GB[profile]:
        raise SystemExit(f"only {free_gb:.1f} GB free under {root}; the {profile} bench needs about "
                         f"{NEEDS_GB[profile]} GB (two images, uv's cache mount, the +1 rebuild): free some space "
                         "or pass --no-disk-check")


def seed(wheelhouse: Path, source: Path | None) -> None:
    """Put the wheels of ``source`` (wheels no index here serves, /opt/wheels) into the wheelhouse."""
    wheelhouse.mkdir(parents=True, exist_ok=True)
    if source is None or not source.is_dir():
        return
    for wheel in source.glob("*.whl"):
        if not (wheelhouse / wheel.name).exists():
            shutil.copyfile(wheel, wheelhouse / wheel.name)


def _cleanup(bench: Bench, prefix: str, keep: bool) -> None:
    """Remove the uv cache sub-directories the cold builds filled (a small build that mounts the same cache) and,
    unless ``keep``, the bench's image tags; keep the log."""
    shutil.copyfile(bench.log, Path(tempfile.gettempdir()) / f"{prefix}bench.log")  # first: the disk may be full
    try:
        clean = bench.home / "cleanup"
        clean.mkdir()
        (clean / "Dockerfile").write_text(CLEANUP)
        docker_build(clean, bench.tag("cleanup", "0"), ca=None, no_cache=True, log=bench.log, ids=bench.ids,
                     args={"PREFIX": prefix})
    finally:  # the images go even where the cleanup build could not run (a full disk)
        for tag in bench.tags if not keep else bench.tags[-1:]:
            subprocess.run([DOCKER, "rmi", tag], capture_output=True, check=False)
        kept = {subprocess.run([DOCKER, "image", "inspect", "-f", "{{.Id}}", tag], capture_output=True, text=True,
                               check=False).stdout.strip() for tag in bench.tags} if keep else set()
        for image_id in sorted(set(filter(None, bench.ids)) - kept):  # those a rebuild of their tag left untagged
            subprocess.run([DOCKER, "rmi", image_id], capture_output=True, check=False)
    shutil.copyfile(bench.log, Path(tempfile.gettempdir()) / f"{prefix}bench.log")


def measure(bench: Bench, runs: int, prefix: str, top: int = 0) -> dict[str, object]:
    """Cold builds, a warm rebuild and a rebuild after +1 package of both sides; sizes, layers and the ``top``
    largest files and directories."""
    name = prefix.rstrip("-")
    # The +1 package's wheel goes into the wheelhouse first: the context's wheels/ (bind-mounted by every install
    # layer, part of their cache keys) is then the same before and after the change, as a user's wheelhouse is.
    download_s = envgen_context(bench, name, EXTRA)[3]
    context, build_args, _, more_s = envgen_context(bench, name, None)
    print(f"wheelhouse {bench.wheelhouse}: filled in {download_s + more_s:.1f}s (not part of any build)", flush=True)
    hand = hand_context(bench)
    cold: dict[str, list[float]] = {"envgen": [], "hand": []}
    steps: dict[str, list[list[tuple[float, str]]]] = {"envgen": [], "hand": []}
    for run in range(runs):
        for side, where, args in (("envgen", context, {**build_args, "ENVGEN_CACHE_ID": f"{prefix}{run}"}),
                                  ("hand", hand, {})):
            offset = bench.log.stat().st_size
            cold[side].append(docker_build(where, bench.tag(side, str(run)), ca=bench.ca, no_cache=True,
                                           log=bench.log, ids=bench.ids, args=args))
            with bench.log.open(encoding="utf-8") as logged:
                logged.seek(offset)
                steps[side].append(step_times(logged.read()))
        print(f"cold run {run + 1}: envgen {cold['envgen'][-1]:.1f}s, hand-written {cold['hand'][-1]:.1f}s",
              flush=True)
        print_steps({side: rows[-1] for side, rows in steps.items()})
    last = runs - 1
    cache_id = {"ENVGEN_CACHE_ID": f"{prefix}{last}"}
    e_tag, h_tag = f"{bench.namespace}/bench-envgen:{last}", f"{bench.namespace}/bench-hand:{last}"
    found: dict[str, object] = {"cold": cold, "size": {"envgen": image_mb(e_tag), "hand": image_mb(h_tag)},
                                "layers": {"envgen": layers(e_tag), "hand": layers(h_tag)},
                                "images": {"envgen": e_tag, "hand": h_tag},
                                "largest": {"envgen": largest(e_tag, top), "hand": largest(h_tag, top)} if top else {}}
    size = found["size"]
    assert isinstance(size, dict)  # printed now: a later build that fails (a full disk) must not lose it
    print(f"image size: envgen {size['envgen']:.1f} MB, hand-written {size['hand']:.1f} MB "
          f"({size['envgen'] / size['hand']:.2f}x)", flush=True)
    found["warm"] = {"envgen": docker_build(context, e_tag, ca=bench.ca, no_cache=False, log=bench.log, ids=bench.ids,
                                            args={**build_args, **cache_id}),
                     "hand": docker_build(hand, h_tag, ca=bench.ca, no_cache=False, log=bench.log, ids=bench.ids,
                                          args={})}
    context2, build_args2, lock_s, _ = envgen_context(bench, name, EXTRA)
    found["lock_s"] = lock_s
    found["small"] = {"envgen": docker_build(context2, bench.tag("envgen", "small"), ca=bench.ca, no_cache=False,
                                             log=bench.log, ids=bench.ids, args={**build_args2, **cache_id}),
                      "hand": docker_build(hand, bench.tag("hand", "small"), ca=bench.ca, no_cache=False,
                                           log=bench.log, ids=bench.ids, args={"EXTRA": EXTRA})}
    return found


def report(profile: str, runs: int, found: dict[str, object]) -> None:
    cold, warm, small, size = (found[k] for k in ("cold", "warm", "small", "size"))
    assert isinstance(cold, dict) and isinstance(warm, dict) and isinstance(small, dict) and isinstance(size, dict)
    e_cold, h_cold = statistics.median(cold["envgen"]), statistics.median(cold["hand"])
    print(f"\n{profile + ' (BuildKit, 2 cores)':34} {'envgen':>10} {'hand-written':>13} {'ratio':>7}")
    rows = [(f"cold build (median of {runs})", e_cold, h_cold, "s"),
            ("warm rebuild (no change)", warm["envgen"], warm["hand"], "s"),
            ("rebuild after +1 pip package", small["envgen"], small["hand"], "s"),
            ("image size", size["envgen"], size["hand"], "MB")]
    for label, e, h, unit in rows:
        print(f"{label:34} {e:>9.1f}{unit} {h:>12.1f}{unit} {e / h:>7.2f}")
    print(f"cold runs: envgen {', '.join(f'{x:.1f}' for x in cold['envgen'])}; "
          f"hand-written {', '.join(f'{x:.1f}' for x in cold['hand'])}")
    print(f"envgen lock after the change (host, before the rebuild): {found['lock_s']:.1f}s")
    layer_rows = found["layers"]
    assert isinstance(layer_rows, dict)
    for side in ("envgen", "hand"):
        print(f"layers of {side} >= 1 MB (MB, bottom first):")
        for mb, step in layer_rows[side]:
            print(f"  {mb:>9.1f}  {step}")
    print_largest(found.get("largest"))
    cold_ratio, small_share, size_ratio = e_cold / h_cold, small["envgen"] / e_cold, size["envgen"] / size["hand"]

    def verdict(ok: bool) -> str:
        return "met" if ok else "NOT met"

    print(f"goals (#44): cold <= 0.50x hand-written: {cold_ratio:.2f}x {verdict(cold_ratio <= 0.5)}; "
          f"+1 package <= 5% of envgen's cold: {100 * small_share:.1f}% {verdict(small_share <= 0.05)}; "
          f"image <= 0.80x: {size_ratio:.2f}x {verdict(size_ratio <= 0.8)}")


def print_steps(steps: dict[str, list[tuple[float, str]]]) -> None:
    """Where each side's cold build spent its time: BuildKit's steps (seconds, the step), the phases within them."""
    for side, rows in steps.items():
        print(f"  steps of {side} (s):")
        for seconds, step in rows:
            print(f"            {step}" if step.startswith("at ") else f"    {seconds:>6.1f}  {step}")


def print_largest(largest_rows: object) -> None:
    """The largest files and directories of each image (--top)."""
    assert isinstance(largest_rows, dict | None)
    for side, rows in (largest_rows or {}).items():
        for kind in ("file", "dir"):
            print(f"largest {kind}s of {side} (MB):")
            for _, mb, path in (row for row in rows if row[0] == kind):
                print(f"  {mb:>9.1f}  {path}")


def main() -> int:
    global DOCKER
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--profile", choices=PROFILES, default="cpu-smoke")
    parser.add_argument("--runs", type=int, default=3, help="cold builds of each (median reported)")
    parser.add_argument("--wheelhouse", type=Path, default=Path.home() / ".cache" / "envgen-bench" / "wheels",
                        help="the shared wheelhouse, filled on the first run and kept")
    parser.add_argument("--seed", type=Path, default=Path("/opt/wheels"),
                        help="wheels no index here serves, copied into the wheelhouse")
    parser.add_argument("--docker", default=DOCKER, help="the docker CLI to build with (default: Debian's 20.10 "
                        "CLI; `docker` for the one on PATH); it talks to $DOCKER_HOST")
    parser.add_argument("--keep", action="store_true", help="keep the last cold images (printed) for inspection")
    parser.add_argument("--top", type=int, default=30, help="list the N largest files and directories of each image "
                        "(0: none)")
    parser.add_argument("--no-disk-check", action="store_true", help="start even with less free space than needed")
    args = parser.parse_args()
    DOCKER = shutil.which(args.docker) or args.docker
    if not args.no_disk_check:
        disk_check(args.profile)
    engine = subprocess.run([DOCKER, "version", "--format", "{{.Server.Version}}"], capture_output=True, text=True,
                            check=True).stdout.strip()
    print(f"engine: Docker {engine} at {os.environ.get('DOCKER_HOST', 'the default socket')}; CLI {DOCKER}",
          flush=True)
    from envgen.config import load_config

    namespace = f"envgen-test-{uuid.uuid4().hex[:10]}"  # the test suite's kind (tests/isolation.new_namespace)
    prefix = f"envgen-bench-{os.getpid()}-"
    seed(args.wheelhouse, args.seed)
    with tempfile.TemporaryDirectory(prefix="envgen-bench-") as tmp:
        home = Path(tmp)
        (home / "profiles").mkdir()
        (home / "config.yaml").write_text(f"state_dir: {home / 'state'}\n")
        # UV_CACHE_DIR: the locks' uv cache is the run's own, gone with it. In the shared one each lock left an
        # unpacked copy of every wheel it read from the run's fresh wheelhouse path (2.4-5 GB a lock, 36 GB of the
        # host's uv cache after this morning's runs, 2026-12-04).
        os.environ.update(ENVGEN_CONFIG=str(home / "config.yaml"), ENVGEN_PROFILE_PATH=str(home / "profiles"),
                          ENVGEN_NAMESPACE=namespace, UV_CACHE_DIR=str(home / "uv-cache"))
        bench = Bench(args.profile, home, args.wheelhouse.absolute(), namespace, load_config().ca_bundle,
                      home / "bench.log")
        try:
            found = measure(bench, args.runs, prefix, args.top)
        finally:
            try:
                _cleanup(bench, prefix, args.keep)
            except (OSError, SystemExit) as exc:  # a full disk must not hide the figures measured
                print(f"warning: cleanup failed ({exc}); remove the tags {namespace}/* and the uv cache "
                      f"sub-directories {prefix}* yourself", file=sys.stderr)
    report(args.profile, args.runs, found)
    if args.keep:
        print(f"kept: {' '.join(bench.tags[:-1])} (remove them with docker rmi)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
