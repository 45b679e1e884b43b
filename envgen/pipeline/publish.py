"""`envgen push` and `envgen pull`: prebuilt images, accepted only when their labels match the
local profile's content hash, and smoke-tested on this host before first use."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from envgen.config import UserConfig, load_config, merge_mirrors
from envgen.docker import connect, inspect_image, pull_image, push_image, remove_image
from envgen.docker.images import split_ref, tag_all
from envgen.errors import ImageMismatch, ImageNotValidated, InputError, RegistryError
from envgen.mirrors import mirror_ref
from envgen.pipeline.mirrors import mirror_failure
from envgen.pipeline.resolve import profile_tag
from envgen.pipeline.state import ValidationStore
from envgen.pipeline.tiers import host_plan
from envgen.profile import Profile, load_profile
from envgen.vocabulary import LABEL_CONTENT_HASH, LABEL_PROFILE, LABEL_SMOKE, LABEL_SMOKE_TIER, TIER_LIBRARIES

if TYPE_CHECKING:
    from docker import DockerClient


def remote_ref(registry: str, local_tag: str) -> str:
    """``<namespace>/<profile>:<hash>`` published as ``<registry>/<profile>:<hash>`` (the local
    namespace is not part of the published name)."""
    repo, tag = split_ref(local_tag)
    return f"{registry.rstrip('/')}/{repo.rsplit('/', 1)[-1]}:{tag}"


def push_tag(client: DockerClient, local_tag: str, profile: Profile, registry: str) -> str:
    ref = remote_ref(registry, local_tag)
    tag_all(client, local_tag, [ref])
    try:
        digest = push_image(client, ref)
    except BaseException:
        remove_image(client, ref)  # no registry tag left behind for a push that did not happen
        raise
    return f"{ref}@{digest}"


def registry_to_use(registry: str | None, config: UserConfig) -> str:
    """``--registry``, else the config's; envgen has no default registry (it owns none of the user's)."""
    chosen = registry or config.registry
    if not chosen:
        raise InputError("no registry given: envgen has no default registry",
                         fix="pass --registry HOST[:PORT][/PATH] (such as localhost:5000/team), or set `registry:` in "
                             "the envgen config (~/.config/envgen/config.yaml or $ENVGEN_CONFIG)")
    return chosen


def push(ref: str, *, registry: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """Push the profile's current image; only a validated image (smoke report sealed in) is pushed."""
    config = load_config(env)
    profile = load_profile(ref, env)
    tag, _ = profile_tag(profile, env)
    client = connect()
    image = inspect_image(client, tag)
    if image is None:
        raise InputError(f"profile {profile.name!r} has no image {tag} here", fix=f"run `envgen build {ref}`")
    if image.labels.get(LABEL_SMOKE) != "pass":
        raise ImageNotValidated(f"{tag} carries no passing smoke report, so it is not pushed",
                                fix=f"run `envgen build {ref}` (without --no-smoke)")
    tier = image.labels.get(LABEL_SMOKE_TIER) or "unknown (sealed before the tiers)"
    pushed = "pushed " + push_tag(client, tag, profile, registry_to_use(registry, config)) + f" (validated: {tier})"
    if tier == TIER_LIBRARIES:
        pushed += "; the GPU tier runs on the first `envgen pull` or `envgen run` on a GPU host"
    return pushed


def pull(ref: str, *, registry: str | None = None, smoke: bool = True, gpus: str | None = None,
         env: Mapping[str, str] | None = None) -> str:
    config = load_config(env)
    profile = load_profile(ref, env)
    tag, content_hash = profile_tag(profile, env)
    remote = remote_ref(registry_to_use(registry, config), tag)
    # The same registry mirrors the base images take (mirrors.registries) serve envgen's own images.
    mirrored = mirror_ref(remote, merge_mirrors(profile.mirrors, config.mirrors).registries)
    client = connect()
    if mirrored is not None:
        try:
            image_id = pull_image(client, mirrored.ref)
        except RegistryError as exc:
            raise mirror_failure(mirrored, exc, "the image") from None
        remote = mirrored.ref
    else:
        image_id = pull_image(client, remote)
    image = inspect_image(client, image_id)
    labels = image.labels if image else {}
    if labels.get(LABEL_CONTENT_HASH) != content_hash or labels.get(LABEL_PROFILE) != profile.name:
        remove_image(client, remote, force=True)
        raise ImageMismatch(
            f"{remote} does not match the local profile {profile.name!r}: its content hash is "
            f"{labels.get(LABEL_CONTENT_HASH, 'missing')[:12]}, the profile renders to {content_hash[:12]}; "
            "the image was removed",
            fix="update envgen or the profile to the version the image was built from, or build it locally",
        )
    lines = [f"pulled {remote} ({image_id[:19]}); labels match the profile"]
    if smoke:
        from envgen.pipeline.smoke import run_planned

        plan = host_plan(profile.gpu.required, env, gpus)
        report, plan = run_planned(client, image_id, plan, profile_name=profile.name, content_hash=content_hash,
                                   store=ValidationStore(config.state_dir), timeout_s=profile.smoke.timeout_s)
        lines.append(f"smoke test on this host: {report.status} ({report.mode})"
                     + (f", validated: {report.tier}" if report.passed else ""))
        if plan.reason:
            lines.append(f"the GPU tier did not run: {plan.reason}")
        if not report.passed:
            raise ImageNotValidated(f"{remote} failed its smoke test on this host; {tag} was not tagged",
                                    fix="read the diagnosis above").with_tail(report.table())
    else:
        lines.append("smoke test: not run yet; `envgen run` will refuse the image until `envgen smoke` passes")
    # Tagged only now: the local tag never points at an image that failed here.
    tag_all(client, image_id, [tag])
    lines.append(f"tagged {tag}")
    return "\n".join(lines)
