"""Build an image from a rendered context with BuildKit (through the CLI) or the classic builder
(through the SDK), streaming step events to a ProgressSink and keeping the full log in a file.

Interrupt safety: the builder only ever produces an image ID (``--iidfile``; no ``-t``); tags are
applied after success, and undone if interrupted half-way. On KeyboardInterrupt the CLI's process
group gets SIGINT, then SIGKILL; classic builds run with ``rm=True, forcerm=True``.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING

from envgen.docker.builder import BuilderInfo
from envgen.docker.buildlog import (
    BuildahParser,
    BuildkitPlainParser,
    ClassicStreamParser,
    StepTracker,
    short_error,
    stage_labels,
)
from envgen.docker.client import connect, engine_url
from envgen.docker.images import tag_all
from envgen.docker.progress import NullSink, ProgressSink
from envgen.errors import BuildFailed, DockerUnavailable, InputError, no_space

if TYPE_CHECKING:
    from docker import DockerClient

_STOP_GRACE_S = 10.0
# the layer compressions a build can ask for (with_compression says where each works)
COMPRESSIONS = ("gzip", "zstd")
_SDE_ARG = re.compile(r"^ARG SOURCE_DATE_EPOCH=(\d+)\s*$", re.MULTILINE)


@dataclass(frozen=True)
class BuildResult:
    image_id: str
    tags: tuple[str, ...]
    duration_s: float
    steps: int
    cached_steps: int
    log_path: Path
    builder: str  # BuilderInfo.kind


def build_image(
    context_dir: Path,
    *,
    builder: BuilderInfo,
    log_path: Path,
    dockerfile: str = "Dockerfile",
    tags: Sequence[str] = (),
    secrets: Mapping[str, Path] | None = None,
    build_args: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    progress: ProgressSink | None = None,
    client: DockerClient | None = None,
    env: Mapping[str, str] | None = None,
    no_cache: bool = False,
    compression: str = "gzip",
) -> BuildResult:
    """Build ``context_dir/dockerfile`` and tag the result with ``tags`` (only after success). ``secrets`` (BuildKit
    only) maps secret ids to files (``ca_bundle`` -> the proxy CA bundle). Raises BuildFailed (failing step, output
    tail, log path), InputError for bad arguments, DockerUnavailable when the engine is down. ``compression``: the
    layers' (``COMPRESSIONS``)."""
    context_dir = Path(context_dir)
    sink = progress or NullSink()
    _check_arguments(context_dir, dockerfile, builder, secrets)
    builder = with_compression(builder, compression)
    client = client or connect()
    log_path = Path(log_path)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    sink.start(f"building {context_dir / dockerfile} with {builder.kind}")
    try:
        return _build_logged(context_dir, dockerfile, builder, log_path, tags, secrets, build_args, labels, sink,
                             client, env, no_cache, started)
    except OSError as exc:  # the log's disk is full: the half-written log is removed, nothing was tagged
        full = no_space(exc, log_path, "the build log (the build stopped; nothing was tagged)")
        if full is None:
            raise
        log_path.unlink(missing_ok=True)
        sink.finish(False, full.message)
        raise full from None


def _build_logged(context_dir: Path, dockerfile: str, builder: BuilderInfo, log_path: Path, tags: Sequence[str],
                  secrets: Mapping[str, Path] | None, build_args: Mapping[str, str] | None,
                  labels: Mapping[str, str] | None, sink: ProgressSink, client: DockerClient,
                  env: Mapping[str, str] | None, no_cache: bool, started: float) -> BuildResult:
    with open(log_path, "w", encoding="utf-8", errors="replace") as log:
        try:
            if builder.uses_buildkit:
                image_id, tracker = _build_cli(context_dir, dockerfile, builder, secrets or {},
                                               build_args or {}, labels or {}, log, sink, env, no_cache,
                                               lambda archive: _load_oci(client, archive, log))
            else:
                image_id, tracker = _build_classic(context_dir, dockerfile, client, build_args or {},
                                                   labels or {}, log, sink, no_cache)
        except BuildFailed as exc:
            sink.finish(False, exc.message)
            raise
        except KeyboardInterrupt:
            log.write("\n[envgen] interrupted; nothing was tagged\n")
            sink.finish(False, "interrupted; nothing was tagged")
            raise
        tag_all(client, image_id, tags)
        log.write(f"\n[envgen] image {image_id} tagged {', '.join(tags) or '(no tags)'}\n")
    duration = time.monotonic() - started
    sink.finish(True, f"{image_id[:19]} ({len(tracker.steps)} steps, {tracker.cached} cached)")
    # steps: the step vertices this build went through (each printed once, cached or run)
    return BuildResult(image_id, tuple(tags), duration, len(tracker.steps), tracker.cached, log_path,
                       builder.kind)


def known_compression(compression: str) -> str:
    """``compression`` when envgen knows it (``COMPRESSIONS``), else one input error naming the choices (asked before
    the engine is: ``envgen build --compression``)."""
    if compression not in COMPRESSIONS:
        raise InputError(f"layer compression {compression!r} is not one envgen knows",
                         fix=f"use one of: {', '.join(COMPRESSIONS)}")
    return compression


def with_compression(builder: BuilderInfo, compression: str) -> BuilderInfo:
    """``builder`` set to compress the image's layers with ``compression``. gzip: every engine and registry client.
    zstd (smaller layers, faster to unpack; BuildKit's ``compression=zstd``) only where the build exports an OCI
    archive (BuilderInfo.oci_rewrite: Docker >= 26 with the containerd image store): the classic store of Docker
    20.10 can neither keep nor pull zstd layers ("failed to register layer: ... invalid tar header"), so whoever
    pulls the image needs Docker >= 23 or containerd >= 1.5. InputError for an unknown name, or zstd on a builder
    that cannot write it."""
    known_compression(compression)
    if compression == "zstd" and not builder.oci_rewrite:
        raise InputError(f"zstd layers need BuildKit's OCI exporter on Docker >= 26 with the containerd image "
                         f"store; this engine's builder is {builder.kind} (Docker 20.10 cannot store or pull them)",
                         fix="build with gzip layers (the default), or on Docker 26: eval \"$(sudo "
                             "scripts/engine-current start)\"")
    return replace(builder, compression=compression)


def _check_arguments(context_dir: Path, dockerfile: str, builder: BuilderInfo,
                     secrets: Mapping[str, Path] | None) -> None:
    """InputError for a Dockerfile that is not there, or secrets the builder cannot mount or that do not exist."""
    if not (context_dir / dockerfile).is_file():
        raise InputError(f"no Dockerfile at {context_dir / dockerfile}")
    if secrets and not builder.uses_buildkit:
        raise InputError(
            f"the classic builder cannot mount build secrets ({', '.join(sorted(secrets))})",
            fix="build the classic Dockerfile variant without secrets, or use BuildKit",
        )
    for name, src in (secrets or {}).items():
        if not Path(src).is_file():
            raise InputError(f"build secret {name!r}: no such file {src}")


def _failure(tracker: StepTracker, log_path: Path, fallback: str) -> BuildFailed:
    tail = tracker.failure_tail()
    if tracker.canceled and tracker.failed is not None and not tracker.step_failed:
        what = f"the build was interrupted during step {tracker.failed.number}/{tracker.total()} " \
            f"`{tracker.failed.name}`"
        return BuildFailed(f"{what}; nothing was tagged", log_path=str(log_path), tail=tail,
                           fix="run the build again")
    if tracker.failed is not None:
        what = f"step {tracker.failed.number}/{tracker.total()} `{tracker.failed.name}` failed"
        reason = short_error(tracker.error or fallback)
    else:
        what = "the build failed before any step ran"
        reason = tracker.error or fallback
    return BuildFailed(f"{what}: {reason}", log_path=str(log_path), tail=tail,
                       fix=f"see the full build log: {log_path}")


# --- BuildKit through the CLI ------------------------------------------------------------------

def cli_command(builder: BuilderInfo, context_dir: Path, dockerfile: str, iidfile: Path,
                secrets: Mapping[str, Path], build_args: Mapping[str, str], labels: Mapping[str, str],
                no_cache: bool = False, env: Mapping[str, str] | None = None, rewrite: bool = True) -> list[str]:
    """The CLI command line (no ``-t``: tagging happens after success); ``env`` gives podman its socket. An OCI
    export (BuilderInfo.oci_rewrite) sets every file's time to SOURCE_DATE_EPOCH when ``rewrite``; zstd: every
    layer recompressed (``force-compression``: the base's and cached ones too) and no provenance attestation (an
    in-toto document in an index, not a layer: the seal's image is one manifest of zstd layers)."""
    assert builder.cli is not None
    if builder.kind == "podman":  # buildah's own output; the engine at DOCKER_HOST stores the image
        cmd = [builder.cli, "--url", engine_url(env=env), "build"]
    else:
        cmd = [builder.cli] + (["buildx", "build"] if builder.kind == "buildx" else ["build"])
        if builder.oci_rewrite:
            zstd = builder.compression == "zstd"
            options = (",rewrite-timestamp=true" if rewrite else "") + \
                (",compression=zstd,force-compression=true" if zstd else "")
            cmd.append(f"--output=type=oci,dest={oci_archive(iidfile)}{options}")
            if zstd:
                cmd.append("--provenance=false")
        elif builder.kind == "buildx":
            cmd.append("--load")
        cmd.append("--progress=plain")
    cmd += ["--iidfile", str(iidfile), "-f", str(context_dir / dockerfile)]
    return cmd + input_options(context_dir, secrets, build_args, labels, no_cache)


def input_options(context_dir: Path, secrets: Mapping[str, Path], build_args: Mapping[str, str],
                  labels: Mapping[str, str], no_cache: bool) -> list[str]:
    """What a build command line takes after its own options: secrets, build arguments, labels, then the context."""
    cmd: list[str] = []
    for name, src in sorted(secrets.items()):
        cmd += ["--secret", f"id={name},src={src}"]
    for key, value in sorted(build_args.items()):
        cmd += ["--build-arg", f"{key}={value}"]
    for key, value in sorted(labels.items()):
        cmd += ["--label", f"{key}={value}"]
    if no_cache:
        cmd.append("--no-cache")
    return cmd + [str(context_dir)]


def oci_archive(iidfile: Path) -> Path:
    """Where an OCI export (BuilderInfo.oci_rewrite) writes its archive: beside the iidfile."""
    return iidfile.parent / "image.oci.tar"


def source_date_epoch(dockerfile_text: str, build_args: Mapping[str, str]) -> dict[str, str]:
    """The build arguments, with SOURCE_DATE_EPOCH from the Dockerfile's ``ARG SOURCE_DATE_EPOCH=N`` when not
    given: BuildKit's exporters read it from the build arguments only, not from an ARG's default."""
    args = dict(build_args)
    match = _SDE_ARG.search(dockerfile_text)
    if match and "SOURCE_DATE_EPOCH" not in args:
        args["SOURCE_DATE_EPOCH"] = match.group(1)
    return args


def _redacted(cmd: list[str]) -> str:
    shown = []
    for i, arg in enumerate(cmd):
        if i and cmd[i - 1] == "--build-arg" and "=" in arg:
            arg = arg.split("=", 1)[0] + "=…"
        shown.append(arg)
    return shlex.join(shown)


def _stop(proc: subprocess.Popen[str]) -> None:
    """SIGINT the CLI's process group (BuildKit cancels the solve), then SIGKILL if it lingers."""
    for sig, wait in ((signal.SIGINT, _STOP_GRACE_S), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue


def stream_cli(cmd: list[str], environ: Mapping[str, str], parser: BuildkitPlainParser | BuildahParser, log: IO[str],
               sink: ProgressSink, fix: str) -> int:
    """Run a builder's CLI to its end: its output into ``log``, the steps ``parser`` reads into ``sink``; its exit
    status. Ctrl-C stops its process group (``_stop``); DockerUnavailable (with ``fix``) when it cannot start."""
    log.write(f"[envgen] {_redacted(cmd)}\n")
    log.flush()
    try:
        proc = subprocess.Popen(cmd, env=dict(environ), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, text=True, errors="replace", bufsize=1,
                                start_new_session=True)
    except OSError as exc:
        raise DockerUnavailable(f"cannot run the docker CLI {cmd[0]}: {exc.strerror or exc}.", fix=fix) from None
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            log.write(line)
            text = parser.feed(line)
            if text is not None:
                sink.output(text)
        rc = proc.wait()
    except BaseException:
        _stop(proc)
        raise
    finally:
        if proc.stdout is not None:
            proc.stdout.close()
    log.flush()
    return rc


def _build_cli(context_dir: Path, dockerfile: str, builder: BuilderInfo, secrets: Mapping[str, Path],
               build_args: Mapping[str, str], labels: Mapping[str, str], log: IO[str], sink: ProgressSink,
               env: Mapping[str, str] | None, no_cache: bool,
               load: Callable[[Path], str]) -> tuple[str, StepTracker]:
    """Build with the CLI; ``load`` loads an OCI archive (BuilderInfo.oci_rewrite) and gives its image ID."""
    environ = dict(os.environ if env is None else env)
    if builder.kind == "buildkit-legacy":
        environ["DOCKER_BUILDKIT"] = "1"
    environ.pop("BUILDKIT_PROGRESS", None)
    dockerfile_text = (context_dir / dockerfile).read_text(encoding="utf-8", errors="replace")
    parser: BuildkitPlainParser | BuildahParser = BuildahParser(sink.step) if builder.kind == "podman" else \
        BuildkitPlainParser(sink.step, stage_labels(dockerfile_text))
    with tempfile.TemporaryDirectory(prefix="envgen-build-") as tmp:
        iidfile = Path(tmp) / "iid"
        rewrite = False
        if builder.oci_rewrite:
            build_args = source_date_epoch(dockerfile_text, build_args)
            rewrite = "SOURCE_DATE_EPOCH" in build_args
            # nothing to rewrite times to: the image as usual (--load, gzip); zstd still needs the OCI export
            if not rewrite and builder.compression == "gzip":
                builder = replace(builder, oci_rewrite=False)
        cmd = cli_command(builder, context_dir, dockerfile, iidfile, secrets, build_args, labels, no_cache,
                          environ, rewrite)
        rc = stream_cli(cmd, environ, parser, log, sink, "install docker.io, or build with --builder classic")
        if rc != 0:
            fallback = "interrupted (the docker CLI was stopped by a signal)" if rc < 0 or rc == 130 else \
                f"docker exited with code {rc}"
            if not parser.error and parser.recent:
                parser.error = parser.recent[-1].strip()
            raise _failure(parser, Path(log.name), fallback)
        if builder.oci_rewrite:
            image_id = load(oci_archive(iidfile))
        else:
            image_id = iidfile.read_text().strip() if iidfile.exists() else ""
    if not image_id:
        raise BuildFailed("the build finished but wrote no image ID", log_path=log.name,
                          fix=f"see the full build log: {log.name}")
    return image_id, parser


def _load_oci(client: DockerClient, archive: Path, log: IO[str]) -> str:
    """``docker load`` of the build's OCI archive; the image ID the engine reports."""
    from envgen.docker.archive import load_archive

    with open(archive, "rb") as data:
        loaded = load_archive(client, data)
    ids = [ref for ref in loaded if ref.startswith("sha256:")]
    log.write(f"[envgen] loaded {archive.name}: {', '.join(loaded) or 'nothing'}\n")
    if not ids:
        raise BuildFailed(f"the build's OCI archive loaded as {loaded or 'nothing'}, not as an image ID",
                          log_path=log.name, fix=f"see the full build log: {log.name}")
    return ids[0]


# --- classic builder through the SDK -----------------------------------------------------------

def _build_classic(context_dir: Path, dockerfile: str, client: DockerClient, build_args: Mapping[str, str],
                   labels: Mapping[str, str], log: IO[str], sink: ProgressSink,
                   no_cache: bool) -> tuple[str, StepTracker]:
    from docker.errors import APIError, BuildError, DockerException

    def line_out(line: str) -> None:
        log.write(line + "\n")
        sink.output(line)

    parser = ClassicStreamParser(sink.step, line_out)
    log.write(f"[envgen] classic build of {context_dir} -f {dockerfile} (Docker SDK)\n")
    stream = None
    try:
        stream = client.api.build(path=str(context_dir), dockerfile=dockerfile, tag=None, rm=True,
                                  forcerm=True, decode=True, buildargs=dict(build_args),
                                  labels=dict(labels), nocache=no_cache, pull=False)
        for chunk in stream:  # to the end: the engine closes the stream after an error
            if not parser.error:
                parser.feed(chunk)
    except (APIError, BuildError) as exc:
        parser.error = parser.error or str(exc)
    except DockerException as exc:
        parser.error = parser.error or str(exc)
    except BaseException:
        # Drop the connection: the engine cancels the build and (forcerm) removes its container.
        client.api.close()
        raise
    finally:
        close = getattr(stream, "close", None)
        if callable(close):
            close()
    log.flush()
    if parser.error:
        raise _failure(parser, Path(log.name), parser.error)
    parser.finish_last()
    if not parser.image_id:
        raise BuildFailed("the classic build ended without an image ID", log_path=log.name,
                          fix=f"see the full build log: {log.name}")
    return parser.image_id, parser
