"""The first half of every pipeline: load the profile, check it, render its build context."""

from __future__ import annotations

import contextlib
import os
import shlex
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envgen.config import UserConfig, load_config
from envgen.errors import CheckFailed
from envgen.imageref import parse_ref
from envgen.kb import KnowledgeBase
from envgen.pipeline.session import Session
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

    from envgen.render.core import RenderedContext


# the record types a render validates or dumps: the user config, the profile (its identity hashes its dump), the
# mirrors (merged with the user's), the probe's expectations (written as JSON)
_COMPILED = (UserConfig, LoadedProfile, Mirrors, Expected)


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
    findings = [*check_profile(profile, kb, host, plan=plan), *resolved_set(plan, kb, offline=offline)]
    errors = [f for f in findings if f.severity == "error"]
    if errors:
        first = errors[0]
        more = f" (and {len(errors) - 1} more; see `envgen check {shlex.quote(ref)}`)" if len(errors) > 1 else ""
        raise CheckFailed(f"profile {profile.name!r} fails its check: [{first.code}] {first.message}{more}",
                          fix=first.fix)
    return plan, findings


def resolved_set(plan: ImagePlan, kb: KnowledgeBase, env: Mapping[str, str] | None = None,
                 offline: bool = False) -> list[Finding]:
    """What `envgen check` says of the whole pip set resolved and judged on its files: the same kept answer
    (``envgen.lock.judged``; ENVGEN_OFFLINE=1 leaves the index alone)."""
    from envgen.cache import cache_dir
    from envgen.lock.judged import set_findings

    environ = os.environ if env is None else env
    return set_findings(plan, kb, environ, cache_dir(environ), offline=offline)


def cached_profile(ref: str, env: Mapping[str, str] | None = None,
                   session: Session | None = None) -> tuple[KnowledgeBase, Profile]:
    """The KB and the loaded profile from the caches `envgen check` keeps (kb/cache.py, profile/cache.py), each
    loaded afresh only when its inputs changed: parsing and validating the KB's YAML was half of a render."""
    session = Session.of(session, env)
    return session.kb, _cached(ref, session)


def _cached(ref: str, session: Session) -> Profile:
    from envgen.profile.cache import load_profile_cached

    kb, kb_key = session.keyed_kb
    return load_profile_cached(ref, session.cache_dir if kb_key else None, kb, kb_key, session.env)


def _render_verdict(profile: Profile, plan: ImagePlan, session: Session, notes: list[str]) -> list[Any]:
    """The errors `envgen check` finds in ``profile`` (no host), for render's note: kept in the store
    (``envgen.cache``) under the KB's key, the profile's hash and its lock files, so that a warm render imports no
    check. A cached verdict that cannot be read (cut short, edited) is judged again and rewritten, with a line in
    ``notes``."""
    from types import SimpleNamespace

    from envgen.cache import MISSING, Store
    from envgen.plan.lockfile import lock_path
    from envgen.profile.loader import profile_source
    from envgen.render.hashing import profile_hash

    source = profile_source(profile)
    locks = [p.read_bytes() for p in ((lock_path(source), lock_path(source, "conda")) if source else ()) if p.is_file()]
    kb, kb_key = session.keyed_kb
    store = Store(session.cache_dir if kb_key else None, "verdict-", codec="json")  # no KB key: not kept
    key = store.key(kb_key, profile_hash(profile), *locks)
    target = store.path(key)
    if target is not None and target.is_file():
        try:
            rows = store.get(key)
            return [SimpleNamespace(code=str(row["code"]), severity=str(row["severity"])) for row in rows]
        except (TypeError, KeyError) as exc:  # MISSING (unreadable, not JSON) or rows of another shape
            notes.append(f"note: the cached check verdict {target} could not be read "
                         f"({'unreadable' if rows is MISSING else type(exc).__name__}); "
                         "the profile was checked again and the cache rewritten")
    from envgen.check import check_profile

    errors = [f for f in check_profile(profile, kb, plan=plan) if f.severity == "error"]
    store.put(key, [{"code": f.code, "severity": f.severity} for f in errors])
    return errors


def prepare(
    ref: str,
    *,
    out: Path | None = None,
    wheelhouse: Path | None = None,
    offline: bool = False,
    check: bool = True,
    env: Mapping[str, str] | None = None,
    session: Session | None = None,
) -> Prepared:
    from envgen import compiled

    session = Session.of(session, env)
    directory = session.cache_dir
    restored = compiled.restore(directory, _COMPILED)  # a render from the caches then imports no pydantic
    config = load_config(session.env)
    notes: list[str] = []
    kb = session.kb
    if check:
        plan, findings = checked_plan(ref, kb)
    else:  # `envgen render`: the KB and the profile as `envgen check` reads them, from the caches when they are
        # fresh; judged all the same, so that what is written can say it (check_notes)
        loaded = _cached(ref, session)
        plan = plan_image(loaded, kb)
        findings = _render_verdict(loaded, plan, session, notes)
    profile = plan.profile
    target = out if out is not None else Path("build") / profile.name
    result = render(plan, target, config, wheelhouse=wheelhouse, offline=offline)
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


@dataclass(frozen=True)
class Exported:
    """What an export wrote, and what it says after: the check notes of the profiles check rejects, and (profile as
    given, tag) of each image an export that runs the local image names but the engine does not hold yet."""
    paths: list[Path]
    notes: list[str]
    unbuilt: list[tuple[str, str]]


def registry_digests(contexts: Sequence[RenderedContext], config: UserConfig,
                     client: DockerClient | None) -> dict[str, str]:
    """``registry/profile@sha256:...`` for each profile whose published image the local engine knows
    (pushed or pulled here); profiles without one, or no engine at all, are left out."""
    from envgen.docker import inspect_image

    if not config.registry or client is None:  # no registry given: the export names the local image
        return {}
    found = {}
    for ctx in contexts:
        name = ctx.plan.profile.name
        repo = f"{config.registry.rstrip('/')}/{name}"
        image = inspect_image(client, f"{repo}:{ctx.content_hash[:12]}")
        digest = next((d for d in (image.digests if image else ()) if parse_ref(d).name == repo), None)
        if digest:
            found[name] = digest
    return found


REGISTRY_FORMATS = ("k8s", "slurm")  # exports that pull the image on another machine
# exports that run the image `envgen build` tags on this host (not a registry's)
LOCAL_IMAGE_FORMATS = ("devcontainer", "compose", "apptainer")


def registry_note(refs: list[str], fmt: str, registry: str | None,
                  env: Mapping[str, str] | None = None, session: Session | None = None) -> str | None:
    """What an export that another machine pulls from says when no registry was given (envgen has no default)."""
    if fmt not in REGISTRY_FORMATS or registry or Session.of(session, env).config.registry:
        return None
    push = "; ".join(f"envgen push {shlex.quote(ref)} --registry REGISTRY" for ref in refs)
    return ("note: no registry given (--registry, or `registry:` in the envgen config): the export names the local "
            f"image, which only a machine holding it can run; push it ({push}) and export again with --registry "
            "REGISTRY")


def export_profiles(refs: list[str], fmt: str, out: Path, env: Mapping[str, str] | None = None,
                    gpus: int = 1, gpu_route: str | None = None, registry: str | None = None,
                    bootstrap: str = "docker-daemon", force: bool = False, runtime: str = "apptainer",
                    array: str | None = None, session: Session | None = None) -> list[Path]:
    return export_planned(refs, fmt, out, Session.of(session, env), gpus=gpus, gpu_route=gpu_route,
                          registry=registry, bootstrap=bootstrap, force=force, runtime=runtime, array=array).paths


def export_planned(refs: list[str], fmt: str, out: Path, session: Session, *, gpus: int = 1,
                   gpu_route: str | None = None, registry: str | None = None, bootstrap: str = "docker-daemon",
                   force: bool = False, runtime: str = "apptainer", array: str | None = None) -> Exported:
    """Write the export of ``refs`` from one plan and one render per profile, which also give the check notes, the
    registry's digests (k8s) and the images not built here (the formats that run the local image)."""
    from envgen.check import check_profile
    from envgen.render import render_in_memory
    from envgen.render.exports import ExportOptions, export

    kb, config = session.kb, session.config
    profiles = [load_profile(ref, session.env, kb=kb) for ref in refs]
    plans = [plan_image(profile, kb) for profile in profiles]
    contexts = [render_in_memory(plan, config) for plan in plans]  # the registry is no part of a render
    if registry:  # where the user pushes: what the Job, the sbatch script and `Bootstrap: docker` pull
        config = config.model_copy(update={"registry": registry})
    with _engine(fmt == "k8s" and bool(config.registry) or fmt in LOCAL_IMAGE_FORMATS) as client:
        images = registry_digests(contexts, config, client) if fmt == "k8s" else {}
        route = gpu_route or config.gpu_route
        options = ExportOptions(images=images, gpus=gpus, gpu_route="cdi" if route == "cdi" else "runtime",
                                registry=registry, bootstrap="docker" if bootstrap == "docker" else "docker-daemon",
                                project=Path.cwd(), force=force, runtime=runtime,  # type: ignore[arg-type]
                                array=array)  # the CLI checked runtime
        paths = export(plans, fmt, out, config=config, options=options, contexts=contexts)
        notes = [line for ref, profile, plan in zip(refs, profiles, plans, strict=True)
                 for line in check_notes(ref, profile, check_profile(profile, kb, plan=plan))]
        unbuilt = _unbuilt(refs, contexts, session.config, client) if fmt in LOCAL_IMAGE_FORMATS else []
    return Exported(paths, notes, unbuilt)


@contextlib.contextmanager
def _engine(wanted: bool) -> Iterator[DockerClient | None]:
    """A client of the local engine for the export's look-ups, or None (not wanted, or no engine answers)."""
    from envgen.docker import connect
    from envgen.errors import DockerUnavailable

    client = None
    if wanted:
        with contextlib.suppress(DockerUnavailable):
            client = connect()
    try:
        yield client
    finally:
        if client is not None:
            client.close()


def _unbuilt(refs: list[str], contexts: Sequence[RenderedContext], config: UserConfig,
             client: DockerClient | None) -> list[tuple[str, str]]:
    """(profile as given, tag) for each exported profile whose image the engine does not hold yet; empty when no
    engine answers."""
    from envgen.docker import inspect_image
    from envgen.render.core import image_tag

    if client is None:
        return []
    tags = [(ref, image_tag(ctx.plan.profile.name, ctx.content_hash, config.namespace))
            for ref, ctx in zip(refs, contexts, strict=True)]
    return [(ref, tag) for ref, tag in tags if inspect_image(client, tag) is None]


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
