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
    it beside the image in the registry; where it went."""
    from envgen.docker.oci import image_manifest
    from envgen.docker.oci import push_attestation as store_beside
    from envgen.pipeline.attest import PREDICATE_TYPE, sign, statement
    from envgen.pipeline.keys import signing_key

    digest, manifest = image_manifest(where)
    key = signing_key(state_dir)
    envelope = sign(statement(image.id, image.layers, facts, {MANIFEST_SUBJECT: digest}), key.private, key.keyid)
    return store_beside(where, digest, manifest, json.dumps(envelope, sort_keys=True).encode(), PREDICATE_TYPE)


def verified_remote(state_dir: Path, remote: str) -> tuple[str, str, list[dict[str, Any]]]:
    """(manifest digest, config digest, envelopes) of ``remote`` when a trusted key's statement names exactly
    that manifest and its config; ImageNotValidated naming why not. Nothing is pulled before this."""
    from envgen.docker.oci import fetch_attestations, image_manifest
    from envgen.pipeline.attest import verify
    from envgen.pipeline.keys import trusted_keys

    digest, body = image_manifest(remote)
    config_digest = str((json.loads(body).get("config") or {}).get("digest") or "")
    envelopes = fetch_attestations(remote, digest)
    verdict = verify(envelopes, trusted_keys(state_dir), config_digest, (), {MANIFEST_SUBJECT: digest})
    if not config_digest or not verdict.validated:
        reason = verdict.reason if envelopes else "the registry holds no signed validation beside it"
        raise ImageNotValidated(f"{remote} ({digest[:19]}) is not validated, so it was not pulled: {reason}",
                                fix="trust the key of the host that validated and pushed it (`envgen key trust "
                                    "FILE`, the file its `envgen key export` wrote), or build it here")
    return digest, config_digest, envelopes


def pull(ref: str, *, registry: str | None = None, smoke: bool = True, gpus: str | None = None,
         env: Mapping[str, str] | None = None, session: Session | None = None) -> str:
    session = Session.of(session, env)
    env, config = session.env, session.config
    profile = load_profile(ref, env, kb=session.kb)
    tag, content_hash = profile_tag(profile, session=session)
    remote = remote_ref(registry_to_use(registry, config), tag)
    # The same registry mirrors the base images take (mirrors.registries) serve envgen's own images.
    mirrored = mirror_ref(remote, merge_mirrors(profile.mirrors, config.mirrors).registries)
    remote = mirrored.ref if mirrored is not None else remote
    client = connect()
    try:
        digest, config_digest, envelopes = verified_remote(config.state_dir, remote)
        existed = inspect_image(client, config_digest) is not None
        image_id = pull_image(client, f"{split_ref(remote)[0]}@{digest}")
    except RegistryError as exc:
        if mirrored is None:
            raise
        raise mirror_failure(mirrored, exc, "the image") from None
    image = inspect_image(client, image_id)
    labels = image.labels if image else {}
    if labels.get(LABEL_CONTENT_HASH) != content_hash or labels.get(LABEL_PROFILE) != profile.name:
        if not existed:
            remove_image(client, image_id, force=True)
        raise ImageMismatch(
            f"{remote} does not match the local profile {profile.name!r}: its content hash is "
            f"{labels.get(LABEL_CONTENT_HASH, 'missing')[:12]}, the profile renders to {content_hash[:12]}; "
            "the image was removed",
            fix="update envgen or the profile to the version the image was built from, or build it locally",
        )
    from envgen.pipeline.attest import AttestationStore

    AttestationStore(config.state_dir).add(image_id, envelopes)
    lines = [f"pulled {remote} ({digest[:19]}); its signed validation names this digest; labels match the profile"]
    if smoke:
        lines += _smoke_pulled(client, profile, image_id, content_hash, config, env, gpus, remote, tag)
    else:
        lines.append("smoke test: not run yet; `envgen run` will refuse the image until `envgen smoke` passes")
    # Tagged only now, both together: the local tags never point at an image that failed here or is unsigned.
    tag_all(client, image_id, [tag, alias_ref(config, profile.name)])
    lines.append(f"tagged {tag} and :latest")
    return "\n".join(lines)


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
