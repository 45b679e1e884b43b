"""``render``: profile -> build context directory (atomically), with hashes, tag and build inputs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import jinja2

from envgen import layout
from envgen.config import UserConfig
from envgen.errors import RenderError
from envgen.plan.image import ImagePlan
from envgen.render.files import ContextFiles, render_files
from envgen.render.hashing import content_hash
from envgen.render.hashing import image_tag as image_tag  # where render's callers import it
from envgen.render.plan import CONTENT_HASH_TOKEN, SHORT_HASH_TOKEN, TemplateInput, render_context
from envgen.render.writer import replace_directory

if TYPE_CHECKING:
    from envgen.docker.builder import BuilderInfo

WHEELHOUSE_SUFFIXES = (".whl", ".tar.gz", ".zip")


@dataclass(frozen=True)
class RenderedContext:
    """The build context in memory, hashes filled in."""

    plan: TemplateInput
    files: Mapping[str, bytes]
    executable: frozenset[str]
    content_hash: str

    @property
    def tag(self) -> str:
        return image_tag(self.plan.profile.name, self.content_hash)


@dataclass(frozen=True)
class RenderResult:
    dir: Path
    files: tuple[str, ...]  # relative paths of the rendered files (wheels not included)
    profile_hash: str
    content_hash: str
    tag: str
    build_args: Mapping[str, str] = field(default_factory=dict)
    secrets: Mapping[str, str] = field(default_factory=dict)  # secret id -> host path
    wheels: tuple[str, ...] = ()  # wheel file names placed in wheels/


def docker_build_command(result: RenderResult, builder: BuilderInfo) -> tuple[str, str | None]:
    """The `docker build` of a rendered context that the Docker CLI found here runs as printed (``builder``, from
    ``envgen.docker.detect_builder``): every build arg (mirrors, proxies, the base through a registry mirror) and,
    with BuildKit, every secret (the proxy's CA bundle, pip.conf); and what the line gives up, if anything. A CLI
    from 23 on without the buildx plugin refuses `--secret` (and `DOCKER_BUILDKIT=1` asks for buildx): there the
    line is the classic one."""
    import shlex
    import shutil

    cli = builder.cli or "docker"
    if shutil.which("docker") == cli:
        cli = "docker"  # the one on PATH: print it as a user types it
    if builder.kind == "buildx":
        words, env, dockerfile = [cli, "buildx", "build", "--load"], [], "Dockerfile"
    elif builder.kind == "buildkit-legacy":
        words, env, dockerfile = [cli, "build"], ["DOCKER_BUILDKIT=1"], "Dockerfile"
    else:
        words, env, dockerfile = [cli, "build"], [], "Dockerfile.classic"
    words += ["-f", str(result.dir / dockerfile), "-t", result.tag]
    for key, value in result.build_args.items():
        words += ["--build-arg", f"{key}={value}"]
    note = None
    if builder.uses_buildkit:
        for key, path in result.secrets.items():
            words += ["--secret", f"id={key},src={path}"]
    else:
        note = (f"classic builder ({builder.reason}): no build secrets, so the proxy's CA bundle and pip.conf do "
                "not reach the build, and pip downloads inside it; `envgen build --builder classic` downloads the "
                "wheels on the host instead")
    from envgen.mirrors import redact  # a login never printed, whatever carried it

    return redact(" ".join([*env, *(shlex.quote(w) for w in [*words, str(result.dir)])])), note


def finish(plan: TemplateInput, rendered: ContextFiles) -> RenderedContext:
    """Hash the files as rendered with placeholders, then put the hash in."""
    chash = content_hash(rendered.files)
    long_token, short_token = CONTENT_HASH_TOKEN.encode(), SHORT_HASH_TOKEN.encode()
    files = {
        path: data.replace(long_token, chash.encode()).replace(short_token, chash[:12].encode())
        for path, data in rendered.files.items()
    }
    return RenderedContext(plan=plan, files=files, executable=rendered.executable, content_hash=chash)


def render_in_memory(
    plan: ImagePlan,
    config: UserConfig | None = None,
    *,
    wheelhouse: Path | None = None,
    offline: bool = False,
    env: jinja2.Environment | None = None,
    use_lock: bool = True,
) -> RenderedContext:
    """The build context of ``plan`` (the command's one plan of the profile), in memory."""
    written = render_context(plan, config, wheelhouse=wheelhouse, offline=offline, use_lock=use_lock)
    return finish(written, render_files(written, env))


def wheelhouse_files(wheelhouse: Path | None) -> list[Path]:
    if wheelhouse is None:
        return []
    if not wheelhouse.is_dir():
        raise RenderError(f"wheelhouse {wheelhouse} is not a directory",
                          fix="point mirrors.wheelhouse at a directory")
    return sorted(p for p in wheelhouse.iterdir() if p.is_file() and p.name.endswith(WHEELHOUSE_SUFFIXES))


def render(
    plan: ImagePlan,
    out_dir: Path,
    config: UserConfig | None = None,
    *,
    wheelhouse: Path | None = None,
    offline: bool = False,
) -> RenderResult:
    """Write the build context of ``plan`` (the command's one plan of the profile) to ``out_dir`` (replaced
    atomically)."""
    return write_context(render_in_memory(plan, config, wheelhouse=wheelhouse, offline=offline),
                         out_dir, (config or UserConfig()).state_dir / "secrets")


def reroute(context: RenderedContext, config: UserConfig, wheelhouse: Path | None,
            offline: bool) -> RenderedContext:
    """The context rendered once, its packages taken from ``wheelhouse`` (a build's --wheelhouse, the classic
    builder's host download) or ``offline``: the same files and hash, other build args and wheels."""
    from envgen.config import merge_mirrors
    from envgen.render.plan import rerouted

    mirrors = merge_mirrors(context.plan.profile.mirrors, config.mirrors)
    return replace(context, plan=rerouted(context.plan, mirrors, wheelhouse, offline))


def write_context(context: RenderedContext, out_dir: Path, secrets_dir: Path | None = None) -> RenderResult:
    """Write a rendered context to ``out_dir`` (replaced atomically), with the wheels of its wheelhouse. The mirrors'
    logins (a netrc, private to the user) go to ``secrets_dir`` (else beside ``out_dir``), never into the context:
    the build reads them as the secret layout.SECRET_NETRC."""
    wheels = wheelhouse_files(context.plan.wheelhouse)
    replace_directory(out_dir, context.files, context.executable, wheels)
    secrets = dict(context.plan.secrets)
    if context.plan.netrc:
        secrets[layout.SECRET_NETRC] = str(write_netrc(context.plan.netrc, secrets_dir or out_dir.parent,
                                                       out_dir.name))
    return RenderResult(
        dir=out_dir.absolute(),
        files=tuple(context.files),
        profile_hash=context.plan.profile_hash,
        content_hash=context.content_hash,
        tag=context.tag,
        build_args=dict(context.plan.build_args),
        secrets=secrets,
        wheels=tuple(w.name for w in wheels),
    )


def write_netrc(text: str, directory: Path, name: str) -> Path:
    """``text`` as ``directory/.NAME.netrc``, readable by the user alone (0600, the directory 0700)."""
    from envgen.files import write_atomically

    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = directory / f".{name}.netrc"
    write_atomically(path, text)  # a temporary file's 0600 kept
    return path.absolute()
