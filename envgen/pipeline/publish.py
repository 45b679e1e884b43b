"""`envgen push` and `envgen pull`: prebuilt images with their signed validation beside them in the registry,
accepted only when a trusted key's statement names exactly the manifest and config pulled and their labels match
the local profile's content hash, and smoke-tested on this host before first use."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envgen.config import UserConfig, merge_mirrors
from envgen.docker import connect, inspect_image, pull_image, push_image, remove_image
from envgen.docker.images import split_ref, tag_all
from envgen.errors import ImageMismatch, ImageNotValidated, InputError, RegistryError
from envgen.imageref import parse_ref
from envgen.mirrors import mirror_ref
from envgen.pipeline.mirrors import mirror_failure
from envgen.pipeline.naming import alias_ref
from envgen.pipeline.resolve import profile_tag
from envgen.pipeline.session import Session
from envgen.pipeline.state import ValidationStore
from envgen.pipeline.tiers import host_plan
from envgen.profile import Profile, load_profile
from envgen.vocabulary import LABEL_CONTENT_HASH, LABEL_PROFILE, TIER_LIBRARIES

if TYPE_CHECKING:
    from docker import DockerClient

    from envgen.docker import ImageSummary


def remote_ref(registry: str, local_tag: str) -> str:
    """``<namespace>/<profile>:<hash>`` published as ``<registry>/<profile>:<hash>`` (the local
    namespace is not part of the published name)."""
    repo, tag = split_ref(local_tag)
    return f"{registry.rstrip('/')}/{repo.rsplit('/', 1)[-1]}:{tag}"


def push_tag(client: DockerClient, local_tag: str, registry: str) -> str:
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


MANIFEST_SUBJECT = "image-manifest"  # the subject a pushed image's statement names its registry manifest by


def push(ref: str, *, registry: str | None = None, env: Mapping[str, str] | None = None,
         session: Session | None = None) -> str:
    """Push the profile's current image with its signed validation beside it; only an image a trusted key's
    statement names (``pipeline/validity.py``) is pushed."""
    session = Session.of(session, env)
    env, config = session.env, session.config
    profile = load_profile(ref, env, kb=session.kb)
    tag, _ = profile_tag(profile, session=session)
    client = connect()
    image = inspect_image(client, tag)
    if image is None:
        raise InputError(f"profile {profile.name!r} has no image {tag} here", fix=f"run `envgen build {ref}`")
    pushed, tier = publish_validated(client, config.state_dir, image, tag, ref, registry_to_use(registry, config))
    pushed = f"pushed {pushed}"
    if tier == TIER_LIBRARIES:
        pushed += "; the GPU tier runs on the first `envgen pull` or `envgen run` on a GPU host"
    return pushed


def publish_validated(client: DockerClient, state_dir: Path, image: ImageSummary, tag: str, target: str,
                      registry: str) -> tuple[str, str]:
    """Push ``tag`` (``image``) and its signed validation; (``ref@digest (validated: …; signed attestation: …)``,
    tier). ImageNotValidated, before anything is pushed, when no trusted statement names the image."""
    from envgen.pipeline.validity import require_validated

    verdict = require_validated(state_dir, image, tag, target, "pushed")
    where = push_tag(client, tag, registry)
    stored = push_attestation(state_dir, image, verdict.predicate, where)
    return f"{where} (validated: {verdict.tier or 'unknown'}; signed attestation: {stored})", verdict.tier


def push_attestation(state_dir: Path, image: ImageSummary, facts: Mapping[str, Any], where: str) -> str:
    """Sign the validation's predicate about the pushed manifest (and the image's config and layers), and store
    it beside the image in the registry; where it went. The config is named by the pushed manifest's digest of it:
    the image ID on Docker 20.10, but not on the containerd image store (Docker >= 26: the ID is the manifest's)."""
    from envgen.docker.oci import image_manifest
    from envgen.docker.oci import push_attestation as store_beside
    from envgen.pipeline.attest import PREDICATE_TYPE, sign, statement
    from envgen.pipeline.keys import signing_key

    digest, manifest = image_manifest(where)
    config = str((json.loads(manifest).get("config") or {}).get("digest") or image.id)
    key = signing_key(state_dir)
    envelope = sign(statement(config, image.layers, facts, {MANIFEST_SUBJECT: digest}), key.private, key.keyid)
    return store_beside(where, digest, manifest, json.dumps(envelope, sort_keys=True).encode(), PREDICATE_TYPE)


def verified_remote(state_dir: Path, remote: str,
                    platform: str | None = None) -> tuple[str, str, list[dict[str, Any]], dict[str, Any]]:
    """(manifest digest, config digest, envelopes, the statement's predicate) of ``remote`` when a trusted key's
    statement names exactly that manifest and its config (and, where it names a platform, ``platform``);
    ImageNotValidated naming why not. Nothing is pulled before this."""
    from envgen.docker.oci import fetch_attestations, image_manifest
    from envgen.pipeline.attest import verify
    from envgen.pipeline.keys import trusted_keys

    digest, body = image_manifest(remote)
    config_digest = str((json.loads(body).get("config") or {}).get("digest") or "")
    envelopes = fetch_attestations(remote, digest)
    verdict = verify(envelopes, trusted_keys(state_dir), config_digest, (), {MANIFEST_SUBJECT: digest})
    what = f"{remote} ({digest[:19]}{', ' + platform if platform else ''})"
    if not config_digest or not verdict.validated:
        reason = verdict.reason if envelopes else "the registry holds no signed validation beside it"
        raise ImageNotValidated(f"{what} is not validated, so it was not pulled: {reason}",
                                fix="trust the key of the host that validated and pushed it (`envgen key trust "
                                    "FILE`, the file its `envgen key export` wrote), or build it here")
    signed = verdict.predicate.get("platform")
    if platform and signed and signed != platform:
        raise ImageNotValidated(f"{what} is not validated for {platform}: its signed validation is about {signed}",
                                fix=f"pull the platform it was validated for (--platform {signed}), or build and "
                                    f"push the profile for {platform}")
    return digest, config_digest, envelopes, verdict.predicate


def platform_remote(remote: str, platform: str) -> tuple[str, bool]:
    """What to verify and pull for ``platform``: the index's image for it by digest (True), or ``remote`` itself
    when it is one image (False: the pulled image's platform is checked). ImageNotValidated naming the platform and
    the fix when the index holds no image for it."""
    from envgen.docker.multiplatform import index_images
    from envgen.docker.oci import image_manifest

    digest, body = image_manifest(remote)
    data = json.loads(body)
    if "manifests" not in data:
        return remote, False
    images = index_images(data)
    chosen = next((image for image in images if image.platform == platform), None)
    if chosen is None:
        held = ", ".join(image.platform for image in images) or "no image"
        other = f"; or fetch another platform's image with --platform {images[0].platform}" if images else ""
        raise ImageNotValidated(f"{remote} ({digest[:19]}) holds {held} and no {platform} image, so there is no "
                                f"validated image for {platform} to pull",
                                fix=f"build the profile for {platform} (platforms: [..., {platform}]) and push it"
                                    + other)
    return f"{parse_ref(remote).name}@{chosen.digest}", True


def pull(ref: str, *, registry: str | None = None, smoke: bool = True, gpus: str | None = None,
         env: Mapping[str, str] | None = None, session: Session | None = None, platform: str | None = None) -> str:
    """Pull the profile's image for ``platform`` (default: this host's; from a manifest list, that platform's
    image), accepted only where a trusted key's statement names its digest; smoke-tested here when it is this
    host's platform, tagged ``TAG-ARCH`` for export otherwise."""
    from envgen.docker.multiplatform import check_platforms, host_platform

    session = Session.of(session, env)
    env, config = session.env, session.config
    wanted = check_platforms([platform or host_platform()])[0]
    profile = load_profile(ref, env, kb=session.kb)
    tag, content_hash = profile_tag(profile, session=session)
    remote = remote_ref(registry_to_use(registry, config), tag)
    # The same registry mirrors the base images take (mirrors.registries) serve envgen's own images.
    mirrored = mirror_ref(remote, merge_mirrors(profile.mirrors, config.mirrors).registries)
    remote = mirrored.ref if mirrored is not None else remote
    client = connect()
    try:
        chosen, indexed = platform_remote(remote, wanted)
        digest, config_digest, envelopes, _ = verified_remote(config.state_dir, chosen, wanted)
        existed = inspect_image(client, config_digest) is not None
        image_id = pull_image(client, f"{split_ref(remote)[0]}@{digest}", platform=wanted if indexed else None)
    except RegistryError as exc:
        if mirrored is None:
            raise
        raise mirror_failure(mirrored, exc, "the image") from None
    _require_match(client, image_id, existed, remote, profile.name, content_hash, wanted)
    from envgen.pipeline.attest import AttestationStore

    AttestationStore(config.state_dir).add(image_id, envelopes)
    lines = [f"pulled {remote} ({digest[:19]}{', ' + wanted if indexed else ''}); its signed validation names "
             "this digest; labels match the profile"]
    if wanted != host_platform():
        return "\n".join(lines + _tag_foreign(client, image_id, tag, wanted))
    if smoke:
        lines += _smoke_pulled(client, profile, image_id, content_hash, config, env, gpus, remote, tag)
    else:
        lines.append("smoke test: not run yet; `envgen run` will refuse the image until `envgen smoke` passes")
    # Tagged only now, both together: the local tags never point at an image that failed here or is unsigned.
    tag_all(client, image_id, [tag, alias_ref(config, profile.name)])
    lines.append(f"tagged {tag} and :latest")
    return "\n".join(lines)


def _require_match(client: DockerClient, image_id: str, existed: bool, remote: str, profile: str,
                   content_hash: str, platform: str) -> None:
    """ImageMismatch, the pulled image removed (unless it was here before), when its labels are not the local
    profile's or it is not an image of ``platform``."""
    from envgen.docker.multiplatform import image_platform

    image = inspect_image(client, image_id)
    labels = image.labels if image else {}
    found = image_platform(client.api.inspect_image(image_id))
    found = found or platform  # an engine that names no architecture: the registry's index said which
    if labels.get(LABEL_CONTENT_HASH) == content_hash and labels.get(LABEL_PROFILE) == profile and found == platform:
        return
    if not existed:
        remove_image(client, image_id, force=True)
    if found != platform:
        raise ImageMismatch(f"{remote} is a {found} image, not {platform}; the image was removed",
                            fix=f"build the profile for {platform} and push it, or pull with --platform {found}")
    raise ImageMismatch(
        f"{remote} does not match the local profile {profile!r}: its content hash is "
        f"{labels.get(LABEL_CONTENT_HASH, 'missing')[:12]}, the profile renders to {content_hash[:12]}; "
        "the image was removed",
        fix="update envgen or the profile to the version the image was built from, or build it locally",
    )


def foreign_tag(tag: str, platform: str) -> str:
    """The local tag of another platform's image: ``<namespace>/<profile>:<hash>-<arch>``."""
    return f"{tag}-{platform.rsplit('/', 1)[-1]}"


def _tag_foreign(client: DockerClient, image_id: str, tag: str, platform: str) -> list[str]:
    """Another platform's image, verified: tagged for export, neither smoke-tested nor run here."""
    foreign = foreign_tag(tag, platform)
    tag_all(client, image_id, [foreign])
    return [f"{platform} is not this host's platform: not smoke-tested here (its signed validation is its "
            f"builder's); tagged {foreign} for export (`docker save {foreign}`); `envgen run` takes this host's "
            "platform"]


def _smoke_pulled(client: DockerClient, profile: Profile, image_id: str, content_hash: str, config: UserConfig,
                  env: Mapping[str, str] | None, gpus: str | None, remote: str, tag: str) -> list[str]:
    from envgen.pipeline.smoke import run_planned

    plan = host_plan(profile.gpu.required, env, gpus)
    report, plan = run_planned(client, image_id, plan, profile_name=profile.name, content_hash=content_hash,
                               store=ValidationStore(config.state_dir), timeout_s=profile.smoke.timeout_s)
    lines = [f"smoke test on this host: {report.status} ({report.mode})"
             + (f", validated: {report.tier}" if report.passed else "")]
    if plan.reason:
        lines.append(f"the GPU tier did not run: {plan.reason}")
    if not report.passed:
        raise ImageNotValidated(f"{remote} failed its smoke test on this host; {tag} was not tagged",
                                fix="read the diagnosis above").with_tail(report.table())
    return lines
