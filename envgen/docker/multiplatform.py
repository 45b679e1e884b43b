"""Multi-platform builds: one ``docker buildx build --platform linux/amd64,linux/arm64`` pushed as one manifest
list (an OCI index) to a registry, each platform's image then run by its own manifest digest.

The platforms the host's CPU cannot run are run by QEMU through binfmt_misc: the kernel hands every foreign ELF to
the interpreter registered for its machine. Registered with the F flag, the interpreter is opened at registration
(from the host), so containers need no QEMU inside them (scripts/host-setup registers Debian's qemu-user-static so).
BuildKit's docker driver builds for several platforms only with the engine's containerd image store (Docker >= 24
with ``containerd-snapshotter``; scripts/engine-current starts one), and its FROM resolves in that store: the base
must hold every platform (scripts/engine-current arm64-base joins the local debootstrap bases into one index).
"""

from __future__ import annotations

import json
import os
import platform as host
import re
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from envgen.errors import BuildFailed, HostIncompatible, InputError, RegistryError
from envgen.imageref import parse_ref

if TYPE_CHECKING:  # the build's modules load only for a build: `envgen run` and `pull` read platforms from here
    from envgen.docker.builder import BuilderInfo
    from envgen.docker.progress import ProgressSink

BINFMT_DIR = Path("/proc/sys/fs/binfmt_misc")
# Docker's platform architectures and the machine names the kernel (uname -m) and QEMU's binfmt entries use
MACHINES = {"amd64": "x86_64", "arm64": "aarch64"}
_PLATFORM = re.compile(r"^linux/(amd64|arm64)$")


@dataclass(frozen=True)
class PlatformImage:
    platform: str  # "linux/arm64"
    digest: str  # that platform's manifest digest in the index


@dataclass(frozen=True)
class MultiPlatformResult:
    ref: str  # registry/repo:tag the index was pushed as
    index_digest: str
    images: tuple[PlatformImage, ...]
    duration_s: float
    log_path: Path

    def by_digest(self, image: PlatformImage) -> str:
        """``registry/repo@sha256:...`` of one platform's image."""
        return f"{parse_ref(self.ref).name}@{image.digest}"


def host_platform() -> str:
    """The platform this machine runs natively ("linux/amd64" on x86-64)."""
    machine = host.machine()
    arch = next((a for a, m in MACHINES.items() if m == machine), machine)
    return f"linux/{arch}"


def check_platforms(platforms: Sequence[str]) -> tuple[str, ...]:
    """The platforms, checked: ``linux/amd64`` or ``linux/arm64``, each once; InputError otherwise."""
    seen: list[str] = []
    for value in platforms:
        if not _PLATFORM.match(value):
            raise InputError(f"platform {value!r} is not one envgen builds",
                             fix="use linux/amd64 and/or linux/arm64")
        if value not in seen:
            seen.append(value)
    if not seen:
        raise InputError("no platform to build for", fix="give linux/amd64 and/or linux/arm64")
    return tuple(seen)


def emulation_problem(platform: str, binfmt_dir: Path = BINFMT_DIR) -> str | None:
    """Why ``platform``'s binaries cannot run on this host (None: natively, or through QEMU registered with F)."""
    if platform == host_platform():
        return None
    machine = MACHINES[platform.split("/", 1)[1]]
    entry = binfmt_dir / f"qemu-{machine}"
    if not (binfmt_dir / "register").exists():
        return f"binfmt_misc is not mounted at {binfmt_dir}, so {platform} binaries cannot run here"
    try:
        text = entry.read_text(encoding="utf-8")
    except OSError:
        return f"no binfmt_misc entry {entry}: nothing runs {machine} binaries"
    flags = next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("flags:")), "")
    if not text.startswith("enabled"):
        return f"the binfmt_misc entry {entry} is disabled"
    if "F" not in flags:
        return f"the binfmt_misc entry {entry} lacks the F flag (flags {flags or '-'}): containers cannot open QEMU"
    return None


def require_emulation(platforms: Sequence[str], binfmt_dir: Path = BINFMT_DIR) -> None:
    """HostIncompatible naming the first platform this host can neither run nor emulate."""
    for platform in platforms:
        problem = emulation_problem(platform, binfmt_dir)
        if problem:
            raise HostIncompatible(f"cannot build for {platform}: {problem}",
                                   fix="sudo scripts/host-setup (installs qemu-user-static and registers it with "
                                       "binfmt's F flag)")


def multiplatform_command(builder: BuilderInfo, context_dir: Path, dockerfile: str, platforms: Sequence[str],
                          ref: str, metadata: Path, secrets: Mapping[str, Path], build_args: Mapping[str, str],
                          labels: Mapping[str, str], no_cache: bool = False) -> list[str]:
    """``docker buildx build --platform A,B`` exporting one index pushed as ``ref``. Provenance attestations are
    off: the index holds the platforms' images alone (envgen signs its validations itself)."""
    from envgen.docker.build import input_options

    if builder.kind != "buildx" or builder.cli is None:
        raise InputError(f"a multi-platform build needs the buildx plugin; the builder here is {builder.kind}",
                         fix="install docker-buildx, or use scripts/engine-current (Docker 26 with buildx)")
    cmd = [builder.cli, "buildx", "build", "--platform", ",".join(platforms), "--provenance=false",
           f"--output=type=image,name={ref},push=true", "--metadata-file", str(metadata), "--progress=plain",
           "-f", str(context_dir / dockerfile)]
    return cmd + input_options(context_dir, secrets, build_args, labels, no_cache)


def build_multiplatform(context_dir: Path, *, builder: BuilderInfo, platforms: Sequence[str], ref: str,
                        log_path: Path, dockerfile: str = "Dockerfile", secrets: Mapping[str, Path] | None = None,
                        build_args: Mapping[str, str] | None = None, labels: Mapping[str, str] | None = None,
                        env: Mapping[str, str] | None = None, no_cache: bool = False,
                        progress: ProgressSink | None = None) -> MultiPlatformResult:
    """Build ``context_dir`` for every platform and push one index as ``ref``; the index's digest and each
    platform's manifest digest, read back from the registry. BuildFailed names the failing step."""
    from envgen.docker.progress import NullSink

    platforms = check_platforms(platforms)
    require_emulation(platforms)
    sink = progress or NullSink()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    sink.start(f"building {context_dir / dockerfile} for {', '.join(platforms)} with buildx")
    with tempfile.TemporaryDirectory(prefix="envgen-mp-") as tmp, \
            open(log_path, "w", encoding="utf-8", errors="replace") as log:
        metadata = Path(tmp) / "metadata.json"
        cmd = multiplatform_command(builder, context_dir, dockerfile, platforms, ref, metadata, secrets or {},
                                    build_args or {}, labels or {}, no_cache)
        try:
            _run_logged(cmd, dict(os.environ if env is None else env), context_dir / dockerfile, log, sink)
        except BuildFailed as exc:
            sink.finish(False, exc.message)
            raise
        pushed = _pushed_digest(metadata)
    index_digest, images = read_index(ref, platforms)
    if pushed and pushed != index_digest:
        raise RegistryError(f"the registry serves {ref} as {index_digest}, the build pushed {pushed}",
                            fix="another push replaced the tag meanwhile: build again")
    missing = sorted(set(platforms) - {i.platform for i in images})
    if missing:
        raise RegistryError(f"the index pushed as {ref} lacks {', '.join(missing)}", fix=f"see {log_path}")
    sink.finish(True, f"{ref} {index_digest[:19]} ({', '.join(platforms)})")
    return MultiPlatformResult(ref, index_digest, images, time.monotonic() - started, log_path)


def _run_logged(cmd: list[str], environ: dict[str, str], dockerfile: Path, log: IO[str], sink: ProgressSink) -> None:
    """Run the CLI, its output into ``log`` and the step events into ``sink``; BuildFailed when it fails."""
    from envgen.docker.build import _failure, stream_cli
    from envgen.docker.buildlog import BuildkitPlainParser, stage_labels

    environ.pop("BUILDKIT_PROGRESS", None)
    parser = BuildkitPlainParser(sink.step, stage_labels(dockerfile.read_text(encoding="utf-8", errors="replace")))
    rc = stream_cli(cmd, environ, parser, log, sink, "install docker.io and docker-buildx")
    if rc != 0:
        if not parser.error and parser.recent:
            parser.error = parser.recent[-1].strip()
        raise _failure(parser, Path(log.name), f"docker buildx exited with code {rc}")


def _pushed_digest(metadata: Path) -> str | None:
    """The index digest buildx reports in its metadata file (``containerimage.digest``)."""
    try:
        data = json.loads(metadata.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    digest = data.get("containerimage.digest") if isinstance(data, dict) else None
    return digest if isinstance(digest, str) else None


def read_index(ref: str, built_for: Sequence[str] = ()) -> tuple[str, tuple[PlatformImage, ...]]:
    """(digest, platform images) of the index ``ref`` names in its registry. A build for one platform pushes a plain
    manifest: that is the image of ``built_for``'s one platform; RegistryError for one where an index was meant."""
    from envgen.docker.oci import image_manifest

    digest, body = image_manifest(ref)
    data = json.loads(body)
    if "manifests" not in data:
        if len(built_for) == 1:
            return digest, (PlatformImage(built_for[0], digest),)
        raise RegistryError(f"{ref} is a single-platform image, not an index", fix="build it with --platform A,B")
    return digest, index_images(data)


def index_images(index: Mapping[str, Any]) -> tuple[PlatformImage, ...]:
    """The platform images an index (its parsed JSON) lists, attestation manifests left out."""
    images = []
    for entry in index.get("manifests") or []:
        plat = entry.get("platform") or {}
        if plat.get("os") == "unknown":  # an attestation manifest, not an image
            continue
        images.append(PlatformImage(f"{plat.get('os')}/{plat.get('architecture')}", str(entry["digest"])))
    return tuple(images)


def image_platform(attrs: Mapping[str, Any]) -> str:
    """``os/architecture`` of an image from the engine's inspect answer ("linux/arm64"); "" where it names none."""
    arch = str(attrs.get("Architecture") or "")
    return f"{attrs.get('Os') or 'linux'}/{arch}" if arch else ""
