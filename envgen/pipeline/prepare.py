"""The first half of every pipeline: load the profile, check it, render its build context."""

from __future__ import annotations

import contextlib
import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envgen.config import UserConfig, load_config
from envgen.errors import CheckFailed
from envgen.imageref import parse_ref
from envgen.kb import KnowledgeBase
from envgen.plan.expected import Expected
from envgen.plan.image import ImagePlan, plan_image
from envgen.profile import Profile, load_profile
from envgen.profile.loader import LoadedProfile
from envgen.profile.model import Mirrors
from envgen.render import RenderResult, render

if TYPE_CHECKING:  # check is imported where a profile is checked (render judges it after reading the caches)
    from envgen.check import Finding, HostSpec

if TYPE_CHECKING:
    from docker import DockerClient


# the record types a render validates or dumps: the user config, the profile (its identity hashes its dump), the
# mirrors (merged with the user's), the probe's expectations (written as JSON)
_COMPILED = (UserConfig, LoadedProfile, Mirrors, Expected)


def load_kb() -> KnowledgeBase:
    """The KB read from its YAML files (the loader, and the YAML parser with it, imported here: a render the caches
    serve reads no YAML)."""
    from envgen.kb.loader import load_kb as read

    return read()


@dataclass(frozen=True)
class Prepared:
    profile: Profile
    kb: KnowledgeBase
    config: UserConfig
    findings: Sequence[Any]  # Finding, or a cached verdict's row (code, severity)
    render: RenderResult
    notes: Sequence[str] = ()  # what was repaired on the way (a damaged cache), one line each


def checked_plan(ref: str, kb: KnowledgeBase, host: HostSpec | None = None,
                 offline: bool = False) -> tuple[ImagePlan, list[Finding]]:
    """Load, plan and check the plan, the whole pip set resolved as `envgen check` does (``offline``: its kept
    answer alone); the first error-level finding stops everything (CheckFailed)."""
    from envgen.check import check_profile

    profile = load_profile(ref, kb=kb)
    plan = plan_image(profile, kb)
    findings = [*check_profile(profile, kb, host, plan=plan), *resolved_set(plan, offline=offline)]
    errors = [f for f in findings if f.severity == "error"]
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more; see `envgen check {shlex.quote(ref)}`)" if len(errors) > 1 else ""
        raise CheckFailed(f"profile {profile.name!r} fails its check: [{first.code}] {first.message}{more}",
                          fix=first.fix)
    return plan, findings


def resolved_set(plan: ImagePlan, env: Mapping[str, str] | None = None, offline: bool = False) -> list[Finding]:
    """What `envgen check` says of the whole pip set resolved and judged on its files: the same kept answer
    (``envgen.lock.judged``; ENVGEN_OFFLINE=1 leaves the index alone)."""
    from envgen.kb.cache import cache_dir
    from envgen.lock.judged import set_findings

    environ = os.environ if env is None else env
    return set_findings(plan, environ, cache_dir(environ), offline=offline)


def cached_profile(ref: str, env: Mapping[str, str] | None = None) -> tuple[KnowledgeBase, Profile]:
    """The KB and the loaded profile from the caches `envgen check` keeps (kb/cache.py, profile/cache.py), each
    loaded afresh only when its inputs changed: parsing and validating the KB's YAML was half of a render."""
    kb, profile, _ = _cached(ref, env)
    return kb, profile


def _cached(ref: str, env: Mapping[str, str] | None) -> tuple[KnowledgeBase, Profile, str]:
    from envgen.kb.cache import cache_dir, load_kb_keyed
    from envgen.profile.cache import load_profile_cached

    directory = cache_dir(os.environ if env is None else env)
    kb, kb_key = load_kb_keyed(directory)
    return kb, load_profile_cached(ref, directory if kb_key else None, kb, kb_key, env), kb_key


def _render_verdict(profile: Profile, kb: KnowledgeBase, plan: ImagePlan, kb_key: str,
                    env: Mapping[str, str] | None, notes: list[str]) -> list[Any]:
    """The errors `envgen check` finds in ``profile`` (no host), for render's note: kept in check's cache directory
    under the KB's key, the profile's hash and its lock files, so that a warm render imports no check. A cached
    verdict that cannot be read (cut short, edited) is judged again and rewritten, with a line in ``notes``."""
    import hashlib
    import json
    from types import SimpleNamespace

    from envgen import __version__
    from envgen.files import write_atomically
    from envgen.kb.cache import cache_dir
    from envgen.plan.lockfile import lock_path
    from envgen.profile.loader import profile_source
    from envgen.render.hashing import profile_hash

    source = profile_source(profile)
    locks = [p.read_bytes() for p in ((lock_path(source), lock_path(source, "conda")) if source else ()) if p.is_file()]
    key = hashlib.sha256(b"\0".join([kb_key.encode(), __version__.encode(), profile_hash(profile).encode(), *locks]))
    directory = cache_dir(os.environ if env is None else env)
    target = directory / f"verdict-{key.hexdigest()[:32]}.json" if directory and kb_key else None
    if target is not None and target.is_file():
        try:
            rows = json.loads(target.read_text(encoding="utf-8"))
            return [SimpleNamespace(code=str(row["code"]), severity=str(row["severity"])) for row in rows]
        except (OSError, UnicodeDecodeError, ValueError, TypeError, KeyError) as exc:
            notes.append(f"note: the cached check verdict {target} could not be read ({type(exc).__name__}); "
                         "the profile was checked again and the cache rewritten")
    from envgen.check import check_profile

    errors = [f for f in check_profile(profile, kb, plan=plan) if f.severity == "error"]
    if target is not None:
        with contextlib.suppress(OSError):  # a cache that cannot be written is simply not kept
            write_atomically(target, json.dumps([{"code": f.code, "severity": f.severity} for f in errors]))
    return errors


def prepare(
    ref: str,
    *,
    out: Path | None = None,
    wheelhouse: Path | None = None,
    offline: bool = False,
    check: bool = True,
    env: Mapping[str, str] | None = None,
) -> Prepared:
    from envgen import compiled
    from envgen.kb.cache import cache_dir

    directory = cache_dir(os.environ if env is None else env)
    restored = compiled.restore(directory, _COMPILED)  # a render from the caches then imports no pydantic
    config = load_config(env)
    notes: list[str] = []
    if check:
        kb = load_kb()
        plan, findings = checked_plan(ref, kb)
    else:  # `envgen render`: the KB and the profile as `envgen check` reads them, from the caches when they are
        # fresh; judged all the same, so that what is written can say it (check_notes)
        kb, loaded, kb_key = _cached(ref, env)
        plan = plan_image(loaded, kb)
        findings = _render_verdict(loaded, kb, plan, kb_key, env, notes)
    profile = plan.profile
    target = out if out is not None else Path("build") / profile.name
    result = render(profile, kb, target, config, wheelhouse=wheelhouse, offline=offline, plan=plan)
    if not restored:
        compiled.keep(directory, _COMPILED)
    return Prepared(profile=profile, kb=kb, config=config, findings=findings, render=result, notes=notes)


def check_notes(ref: str, profile: Profile, findings: Sequence[Any]) -> list[str]:
    """What `render` and `export` say when they write a profile that `check` rejects (they write it all the same:
    a context to read or hand-edit), so that nobody learns it first from the build."""
    errors = [f for f in findings if f.severity == "error"]
    if not errors:
        return []
    more = f" and {len(errors) - 1} more" if len(errors) > 1 else ""
    return [f"note: profile {profile.name!r} fails its check ([{errors[0].code}]{more}): `envgen build` refuses it; "
            f"see `envgen check {shlex.quote(ref)}`"]


def unchecked_exports(refs: list[str]) -> list[str]:
    """check_notes of each profile an export wrote."""
    from envgen.check import check_profile

    kb = load_kb()
    notes = []
    for ref in refs:
        profile = load_profile(ref, kb=kb)
        notes += check_notes(ref, profile, check_profile(profile, kb))
    return notes


def registry_digests(profiles: list[Profile], kb: KnowledgeBase, config: UserConfig) -> dict[str, str]:
    """``registry/profile@sha256:...`` for each profile whose published image the local engine knows
    (pushed or pulled here); profiles without one, or no engine at all, are left out."""
    from envgen.docker import connect, inspect_image
    from envgen.errors import DockerUnavailable
    from envgen.render import render_in_memory

    if not config.registry:  # no registry given: the export names the local image
        return {}
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


REGISTRY_FORMATS = ("k8s", "slurm")  # exports that pull the image on another machine


def registry_note(refs: list[str], fmt: str, registry: str | None,
                  env: Mapping[str, str] | None = None) -> str | None:
    """What an export that another machine pulls from says when no registry was given (envgen has no default)."""
    if fmt not in REGISTRY_FORMATS or registry or load_config(env).registry:
        return None
    push = "; ".join(f"envgen push {shlex.quote(ref)} --registry REGISTRY" for ref in refs)
    return ("note: no registry given (--registry, or `registry:` in the envgen config): the export names the local "
            f"image, which only a machine holding it can run; push it ({push}) and export again with --registry "
            "REGISTRY")


def export_profiles(refs: list[str], fmt: str, out: Path, env: Mapping[str, str] | None = None,
                    gpus: int = 1, gpu_route: str | None = None, registry: str | None = None,
                    bootstrap: str = "docker-daemon", force: bool = False, runtime: str = "apptainer",
                    array: str | None = None) -> list[Path]:
    from envgen.render.exports import ExportOptions, export

    config = load_config(env)
    if registry:  # where the user pushes: what the Job, the sbatch script and `Bootstrap: docker` pull
        config = config.model_copy(update={"registry": registry})
    kb = load_kb()
    profiles = [load_profile(ref) for ref in refs]
    images = registry_digests(profiles, kb, config) if fmt == "k8s" else {}
    route = gpu_route or config.gpu_route
    options = ExportOptions(images=images, gpus=gpus, gpu_route="cdi" if route == "cdi" else "runtime",
                            registry=registry, bootstrap="docker" if bootstrap == "docker" else "docker-daemon",
                            project=Path.cwd(), force=force, runtime=runtime,  # type: ignore[arg-type]
                            array=array)  # the CLI checked runtime
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


def check_base_labels(client: DockerClient, profile: Profile, kb: KnowledgeBase) -> None:
    """Before building: a base the engine holds whose labels say envgen built it, under a profile that would make its
    environment anew over the base's /opt/env, is refused (``plan.refusals``: envgen-base-unnamed); its fix names the
    base's interpreter so that the profile layers on it."""
    from envgen.docker import inspect_image
    from envgen.plan.base import labelled_base_refusals
    from envgen.plan.refusals import refuse

    image = inspect_image(client, parse_ref(profile.base).tagged)
    if image is not None:
        refuse(labelled_base_refusals(profile, kb, image.labels))
