"""Find out which image builder the installed Docker CLI(s) offer, rather than assuming one.

Order: a CLI with the buildx plugin (``docker buildx build``); else a CLI older than 23, whose
``DOCKER_BUILDKIT=1 docker build`` still uses BuildKit; else the classic builder through the SDK.
On Podman's API socket (envgen.docker.engine): ``podman --url SOCKET build`` (buildah: build secrets and
cache mounts, which the compat API's classic /build lacks), else the classic builder through the compat API.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from envgen.docker.cli_answers import ask
from envgen.docker.engine import EngineInfo
from envgen.errors import InputError

BuilderKind = Literal["buildx", "buildkit-legacy", "podman", "classic"]
BuilderChoice = Literal["auto", "buildkit", "classic"]

DEBIAN_CLI = "/usr/bin/docker"
LEGACY_BUILDKIT_BEFORE = 23  # CLIs from 23.0 on need the buildx plugin for BuildKit
# Docker 26 embeds BuildKit 0.13, the first with the exporters' rewrite-timestamp option (BuildKit 0.13 release
# notes; seen here: ../shared/field-notes.md, "Identical images on a current engine")
REWRITE_TIMESTAMP_ENGINE = 26
_VERSION = re.compile(r"version v?(\d+)\.(\d+)(?:\.(\d+))?(\S*)", re.IGNORECASE)


@dataclass(frozen=True)
class BuilderInfo:
    kind: BuilderKind
    cli: str | None  # the docker (or podman) executable to run (None for the classic SDK builder)
    version: str | None  # that CLI's version ("20.10.24+dfsg1"), or the buildx version for buildx
    reason: str  # why this builder was chosen, for `envgen doctor` and logs
    # buildx on an engine with BuildKit >= 0.13 (Docker >= 26) and the containerd image store (the OCI exporter
    # is not supported with the classic store): export an OCI archive with every file's time set to
    # SOURCE_DATE_EPOCH (rewrite-timestamp) and load it, so two clean builds give identical layers
    oci_rewrite: bool = False
    compression: str = "gzip"  # the layers' compression (build.with_compression: zstd only with oci_rewrite)

    @property
    def uses_buildkit(self) -> bool:
        return self.kind != "classic"


@dataclass(frozen=True)
class _Cli:
    path: str
    version: str | None
    major: int | None
    buildx: str | None  # `docker buildx version` output, when the plugin works


def docker_executables(env: Mapping[str, str] | None = None,
                       extra: Sequence[str] = (DEBIAN_CLI,)) -> list[str]:
    """Every distinct ``docker`` executable on PATH, in PATH order, then ``extra`` (Debian's CLI)."""
    return _executables("docker", env, extra)


def _executables(name: str, env: Mapping[str, str] | None, extra: Sequence[str]) -> list[str]:
    environ = os.environ if env is None else env
    found: list[str] = []
    seen: set[str] = set()
    dirs = [d for d in environ.get("PATH", "").split(os.pathsep) if d]
    for candidate in [os.path.join(d, name) for d in dirs] + list(extra):
        if not (os.path.isfile(candidate) and os.access(candidate, os.X_OK)):
            continue
        real = os.path.realpath(candidate)
        if real in seen:
            continue
        seen.add(real)
        found.append(candidate)
    return found


def _run(cmd: list[str], env: Mapping[str, str]) -> tuple[int, str]:
    """``cmd``'s exit status and output; -1 and why when it could not start or timed out (no status to keep)."""
    try:
        proc = subprocess.run(cmd, env=dict(env), capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return -1, str(exc)
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def parse_cli_version(text: str) -> tuple[str, int] | None:
    """``"Docker version 20.10.24+dfsg1, build 297e128"`` -> ``("20.10.24+dfsg1", 20)``."""
    match = _VERSION.search(text)
    if not match:
        return None
    major, minor, patch, suffix = match.groups()
    version = f"{major}.{minor}" + (f".{patch}" if patch else "") + suffix.rstrip(",")
    return version, int(major)


def _probe(path: str, env: Mapping[str, str], cache: Path | None) -> _Cli:
    (rc, out), (rc_bx, out_bx) = ask(path, env, _run, cache)
    parsed = parse_cli_version(out) if rc == 0 else None
    buildx = out_bx.splitlines()[0] if rc_bx == 0 and out_bx else None
    return _Cli(path, parsed[0] if parsed else None, parsed[1] if parsed else None, buildx)


def detect_builder(env: Mapping[str, str] | None = None, choice: BuilderChoice = "auto", *,
                   extra_clis: Sequence[str] = (DEBIAN_CLI,), engine: EngineInfo | None = None,
                   cache: Path | None = None) -> BuilderInfo:
    """The builder to use, probing every ``docker`` on ``env["PATH"]`` and ``extra_clis`` (``podman`` when
    ``engine`` is Podman; default: a Docker engine that does not rewrite timestamps). ``cache``: a directory where
    what each CLI says of itself is kept, keyed by its executable and plugins (``cli_answers``).

    ``choice="buildkit"`` raises InputError when no CLI offers BuildKit (on Podman: no podman CLI);
    ``choice="classic"`` always gives the SDK's classic builder."""
    if choice not in ("auto", "buildkit", "classic"):
        raise InputError(f"unknown builder {choice!r}", fix="use one of: buildkit, classic")
    if choice == "classic":
        return BuilderInfo("classic", None, None, "classic builder requested")
    environ = dict(os.environ if env is None else env)
    if engine is not None and engine.kind == "podman":
        return _podman_builder(environ, choice)
    clis = [_probe(path, environ, cache) for path in docker_executables(environ, extra_clis)]
    for cli in clis:
        if cli.buildx:
            rewrite = engine is not None and engine.major >= REWRITE_TIMESTAMP_ENGINE and engine.containerd_store
            return BuilderInfo("buildx", cli.path, cli.buildx,
                               f"{cli.path} has the buildx plugin ({cli.buildx})"
                               + ("; OCI export with rewrite-timestamp" if rewrite else ""), rewrite)
    for cli in clis:
        if cli.major is not None and cli.major < LEGACY_BUILDKIT_BEFORE:
            return BuilderInfo(
                "buildkit-legacy", cli.path, cli.version,
                f"{cli.path} {cli.version} < {LEGACY_BUILDKIT_BEFORE}: DOCKER_BUILDKIT=1 docker build",
            )
    seen = ", ".join(f"{c.path} {c.version or '?'}" for c in clis) or "no docker CLI on PATH"
    why = f"no CLI offers BuildKit ({seen}; none has buildx, none is older than {LEGACY_BUILDKIT_BEFORE})"
    if choice == "buildkit":
        raise InputError(
            f"BuildKit was asked for but {why}.",
            fix="install the buildx plugin (apt-get install docker-buildx) or use --builder classic",
        )
    return BuilderInfo("classic", None, None, f"{why}: classic builder through the SDK")


def _podman_builder(env: Mapping[str, str], choice: BuilderChoice) -> BuilderInfo:
    """``podman --url SOCKET build`` where a podman CLI is on PATH, else the compat API's classic builder."""
    for path in _executables("podman", env, ()):
        rc, out = _run([path, "--version"], env)
        if rc == 0:
            version = out.split()[-1] if out else None
            return BuilderInfo("podman", path, version,
                               f"the engine is Podman: {path} {version} builds through its socket "
                               "(build secrets, cache mounts)")
    why = "the engine is Podman and no podman CLI is on PATH"
    if choice == "buildkit":
        raise InputError(f"build secrets were asked for but {why}.",
                         fix="install podman (apt-get install podman) or use --builder classic")
    return BuilderInfo("classic", None, None, f"{why}: classic builder through the compat API")
