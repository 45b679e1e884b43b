"""The first half of every pipeline: load the profile, check it, render its build context."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from envgen.check import Finding, HostSpec, check_profile
from envgen.config import UserConfig, load_config
from envgen.errors import CheckFailed
from envgen.imageref import parse_ref
from envgen.kb import KnowledgeBase, load_kb
from envgen.profile import Profile, load_profile
from envgen.render import RenderResult, export, render


@dataclass(frozen=True)
class Prepared:
    profile: Profile
    kb: KnowledgeBase
    config: UserConfig
    findings: list[Finding]
    render: RenderResult


def checked_profile(ref: str, kb: KnowledgeBase, host: HostSpec | None = None) -> tuple[Profile, list[Finding]]:
    """Load and check; the first error-level finding stops everything (CheckFailed)."""
    profile = load_profile(ref, kb=kb)
    findings = check_profile(profile, kb, host)
    errors = [f for f in findings if f.severity == "error"]
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more; see `envgen check {ref}`)" if len(errors) > 1 else ""
        raise CheckFailed(f"profile {profile.name!r} fails its check: [{first.code}] {first.message}{more}",
                          fix=first.fix)
    return profile, findings


def prepare(
    ref: str,
    *,
    out: Path | None = None,
    wheelhouse: Path | None = None,
    offline: bool = False,
    check: bool = True,
    env: Mapping[str, str] | None = None,
) -> Prepared:
    config = load_config(env)
    kb = load_kb()
    if check:
        profile, findings = checked_profile(ref, kb)
    else:
        profile, findings = load_profile(ref), []
    target = out if out is not None else Path("build") / profile.name
    result = render(profile, kb, target, config, wheelhouse=wheelhouse, offline=offline)
    return Prepared(profile=profile, kb=kb, config=config, findings=findings, render=result)


def registry_digests(profiles: list[Profile], kb: KnowledgeBase, config: UserConfig) -> dict[str, str]:
    """``registry/profile@sha256:...`` for each profile whose published image the local engine knows
    (pushed or pulled here); profiles without one, or no engine at all, are left out."""
    from envgen.docker import connect, inspect_image
    from envgen.errors import DockerUnavailable
    from envgen.render import render_in_memory

    try:
        client = connect()
    except DockerUnavailable:
        return {}
    found = {}
    try:
        for profile in profiles:
            ctx = render_in_memory(profile, kb, config)
            repo = f"{config.registry.rstrip('/')}/{profile.name}"
            image = inspect_image(client, f"{repo}:{ctx.content_hash[:12]}")
            digest = next((d for d in (image.digests if image else ()) if parse_ref(d).name == repo), None)
            if digest:
                found[profile.name] = digest
    finally:
        client.close()
    return found


def export_profiles(refs: list[str], fmt: str, out: Path, env: Mapping[str, str] | None = None,
                    gpus: int = 1, gpu_route: str | None = None, registry: str | None = None,
                    bootstrap: str = "docker-daemon", runtime: str = "apptainer",
                    array: str | None = None) -> list[Path]:
    from envgen.render.exports import ExportOptions

    config = load_config(env)
    if registry:  # where the user pushes: what the Job, the sbatch script and `Bootstrap: docker` pull
        config = config.model_copy(update={"registry": registry})
    kb = load_kb()
    profiles = [load_profile(ref) for ref in refs]
    images = registry_digests(profiles, kb, config) if fmt == "k8s" else {}
    route = gpu_route or config.gpu_route
    options = ExportOptions(images=images, gpus=gpus, gpu_route="cdi" if route == "cdi" else "runtime",
                            registry=registry, bootstrap="docker" if bootstrap == "docker" else "docker-daemon",
                            runtime=runtime, array=array)  # type: ignore[arg-type]  # the CLI checked runtime
    return export(profiles, kb, fmt, out, config=config, options=options)


# exports that run the image `envgen build` tags on this host (not a registry's)
LOCAL_IMAGE_FORMATS = ("devcontainer", "compose", "apptainer")


def unbuilt_images(refs: list[str], fmt: str, env: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """(profile as given, tag) for each exported profile whose image an export that runs the local image names but the
    engine does not hold yet; empty when the format pulls from a registry or no engine answers."""
    if fmt not in LOCAL_IMAGE_FORMATS:
        return []
    from envgen.docker import connect, inspect_image
    from envgen.errors import DockerUnavailable
    from envgen.render import render_in_memory
    from envgen.render.core import image_tag

    config = load_config(env)
    kb = load_kb()
    try:
        client = connect()
    except DockerUnavailable:
        return []
    missing = []
    try:
        for ref in refs:
            profile = load_profile(ref)
            tag = image_tag(profile.name, render_in_memory(profile, kb, config).content_hash, config.namespace)
            if inspect_image(client, tag) is None:
                missing.append((ref, tag))
    finally:
        client.close()
    return missing
