"""`envgen run`: start a container from a validated image, after checking the host against it."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from envgen.errors import ImageNotValidated
from envgen.layout import WORKSPACE
from envgen.pipeline.session import Session
from envgen.pipeline.state import ValidationStore
from envgen.vocabulary import LABEL_GPU_REQUIRED, LABEL_PROFILE, TIER_LIBRARIES

if TYPE_CHECKING:  # the engine's client, the bundle, the smoke runner: imported where a run reaches them
    from envgen.docker import ImageSummary
    from envgen.docker.socket_engine import Engine
    from envgen.host.route import GpuRoute
    from envgen.pipeline.state import Validation


def _first_run_smoke(client: Engine, image: ImageSummary, gpus: str | None, store: ValidationStore,
                     out: Callable[[str], object], session: Session) -> Validation | None:
    """The tiers this host can run (the library tier alone without a usable GPU), recorded for the image."""
    from envgen.docker.socket_engine import sdk
    from envgen.pipeline.smoke import run_planned, smoke_kwargs
    from envgen.pipeline.tiers import host_plan

    client = sdk(client)  # the smoke run reads the image's files through the SDK
    out("smoke test: this image came from a bundle and has not been validated on this host; running it first\n")
    gpu_required = image.labels.get(LABEL_GPU_REQUIRED) != "false"
    run_planned(client, image.id, host_plan(gpu_required, session.env, gpus),
                **smoke_kwargs(client, image.id, image.labels, store))
    return store.get(image.id)


def _validated(client: Engine, image: ImageSummary, target: str, gpus: str | None, store: ValidationStore,
               out: Callable[[str], object], session: Session) -> Validation:
    """The image's passed record on this host, signed by a trusted key; ImageNotValidated otherwise. An image
    from an offline bundle (sealed where it was built, not validated here) is smoke-tested here first."""
    state_dir = session.config.state_dir
    record = store.get(image.id)
    if record is None:
        from envgen.pipeline.bundle import loaded_from_bundle  # a bundle's modules: for an image with no record

        if loaded_from_bundle(state_dir, image.id) is not None:
            record = _first_run_smoke(client, image, gpus, store, out, session)
    name = image.tags[0] if image.tags else image.id[:19]
    if record is None or not record.passed:
        state = "failed" if record else "has not passed"
        damaged = store.damaged(image.id) if record is None else None
        raise ImageNotValidated(
            f"image {name} " + (damaged if damaged else f"{state} its smoke test on this host"),
            fix=f"run `envgen smoke {target}` " + ("to validate it again (the record is rewritten)" if damaged
                                                   else "first") + ", or pass --force to run it anyway",
        )
    from envgen.pipeline.validity import image_verdict

    verdict = image_verdict(state_dir, image)  # the record must be one a trusted key signed
    if not verdict.validated:
        raise ImageNotValidated(f"image {name} ({image.id[:19]}) is not validated: {verdict.reason}",
                                fix=f"run `envgen smoke {target}` to validate and sign it here, or pass --force "
                                    "to run it anyway")
    return record


def who_and_where(workdir: Path | None, as_root: bool, env: Mapping[str, str] | None,
                  out: Callable[[str], object]) -> tuple[str | None, Path | None]:
    """The container's user (``uid:gid``; None: the image's own) and the host directory at /workspace (None: none).
    Run as root, the image's user unless ``as_root``; from ``/`` or the home directory without ``--workdir``, nothing
    mounted: the whole host root, or every key and config in the home, would be writable in the container."""
    user: str | None = f"{os.getuid()}:{os.getgid()}"
    if os.getuid() == 0 and not as_root:
        user = None
        out("envgen: warning: envgen runs as root here: the container runs as the image's own user, not uid 0; "
            "pass --as-root to run as root\n")
    if workdir is None:
        here = Path.cwd().resolve()
        home = Path((os.environ if env is None else env).get("HOME") or Path.home()).resolve()
        if here in (Path("/"), home):
            out(f"envgen: warning: the current directory is {'/' if here == Path('/') else 'your home ' + str(here)}: "
                f"it is not mounted at {WORKSPACE} (all of it would be writable in the container); pass --workdir DIR "
                "to mount a directory\n")
            return user, None
        return user, here
    return user, workdir


def run(target: str, *, command: list[str], gpus: str | None = None, workdir: Path | None = None, force: bool = False,
        out: Callable[[str], object] = print, env: Mapping[str, str] | None = None, as_root: bool = False,
        session: Session | None = None) -> int:
    from envgen.docker.socket_engine import open_engine
    from envgen.pipeline.resolve import resolve_image

    session = Session.of(session, env)
    env, config = session.env, session.config
    client = open_engine()  # over the engine's Unix socket without the SDK, else the SDK's client
    image = resolve_image(client, target, env, session)
    store = ValidationStore(config.state_dir)
    name = image.tags[0] if image.tags else image.id[:19]
    platform_line = platform_of(client, image, name, target, force, config.state_dir)  # another platform: refused
    record = None if force else _validated(client, image, target, gpus, store, out, session)
    if platform_line:
        out(platform_line)
    from envgen.pipeline.gpus import gpus_for, start_container

    gpus = gpus_for(image.labels, gpus)
    route = None
    if gpus == "none" and image.labels.get(LABEL_GPU_REQUIRED) == "true":
        out(f"envgen: warning: {image.labels.get(LABEL_PROFILE, target)} is a GPU profile and --gpus none "
            "gives its container no GPU: the frameworks run on the CPU without an error (torch.cuda.is_available() "
            "is False, TensorFlow lists no GPU); leave --gpus out to get the GPUs its profile needs\n")
    if gpus != "none":
        route = _gate_and_route(image.labels, gpus, config.gpu_route, session)
        if not force and record is not None and record.tier == TIER_LIBRARIES:
            gpu_tier_first(client, image.id, image.labels, gpus, store, out, route)
    user, mounted = who_and_where(workdir, as_root, env, out)
    result = start_container(
        client, image.id, command or None, gpus=gpus, route=route, workdir=mounted, user=user,
        on_output=lambda line: None if out(line + "\n") else None,
        # the image's preflight runs before the command, unless --gpus none was asked (warned about above)
        preflight=gpus != "none",
    )
    return result.exit_code


def platform_of(client: Engine, image: ImageSummary, name: str, target: str, force: bool,
                state_dir: Path) -> str:
    """`envgen run` starts this host's platform: another platform's image is refused (with --force it runs under
    emulation); the line to say once the image is cleared to run: the emulation, or the platform of a multi-platform
    build's image (its signed validation names a platform); "" for any other image."""
    from envgen.docker.images import image_attrs
    from envgen.docker.multiplatform import host_platform, image_platform
    from envgen.errors import HostIncompatible

    found, host = image_platform(image_attrs(client, image.id) or {}), host_platform()
    if found and found != host:
        if not force:
            profile = image.labels.get(LABEL_PROFILE, target)
            raise HostIncompatible(f"image {name} is a {found} image and this host runs {host}",
                                   fix=f"`envgen pull {profile}` takes this host's image of a multi-platform build; "
                                       "--force runs this one under emulation (CPU code only)")
        return f"envgen: warning: running the {found} image {name} under emulation on this {host} host\n"
    if platforms_signed(state_dir, image.id):
        return f"envgen: running the {found} image of {name} (this host's platform)\n"
    return ""


def platforms_signed(state_dir: Path, image_id: str) -> set[str]:
    """The platforms the statements known for an image name (a multi-platform build's), unverified."""
    from envgen.pipeline.attest import AttestationStore, signed_statement

    known = (signed_statement(e).get("predicate") or {} for e in AttestationStore(state_dir).get(image_id))
    return {str(p["platform"]) for p in known if isinstance(p, dict) and p.get("platform")}


def _gate_and_route(labels: Mapping[str, str], gpus: str, gpu_route: str, session: Session) -> GpuRoute | None:
    """The host checked against the image's profile (the doctor's rules), and the route its GPUs take:
    None for the NVIDIA runtime (or a host whose facts could not be read: the engine's answer decides)."""
    from envgen.pipeline.doctor import gate_image
    from envgen.pipeline.tiers import host_facts, route_for

    facts = host_facts(session.env, session.kb)
    gate_image(labels, session, facts=facts)  # the profile its tag was looked up for, or the one its label names
    route = route_for(gpus, facts, gpu_route)
    return route if route is not None and route.route == "cdi" else None


def gpu_tier_first(client: Engine, image_id: str, labels: Mapping[str, str], gpus: str, store: ValidationStore,
                   out: Callable[[str], object], route: GpuRoute | None = None) -> None:
    """An image validated at the library tier only, about to get a GPU: run both tiers once here (the
    result is recorded against the image ID), and refuse the run if they fail."""
    from envgen.docker.socket_engine import sdk
    from envgen.pipeline.smoke import run_smoke, smoke_kwargs

    client = sdk(client)  # the smoke run reads the image's files through the SDK
    out("envgen: this image was validated at the library tier only (built without a GPU); running the GPU "
        "tier on this host once before first use\n")
    report = run_smoke(client, image_id, gpus=gpus, tier="all", route=route,
                       **smoke_kwargs(client, image_id, labels, store))
    if not report.passed:
        failure = report.failures[0]
        fix = failure.diagnosis.fix if failure.diagnosis else "read the smoke report above"
        raise ImageNotValidated(f"image {image_id[:19]} passed the library tier but failed the GPU tier on this "
                                f"host ({failure.name}: {failure.message}); not started", fix=fix
                                ).with_tail(report.table())
    out(f"envgen: GPU tier passed on this host (validated: {report.tier})\n")
