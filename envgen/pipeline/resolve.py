"""Turn what the user typed (a profile name, a profile file, an image reference) into an image."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from envgen.config import load_config
from envgen.docker import ImageSummary, inspect_image
from envgen.errors import ImageNotValidated, InputError, ProfileNotFound
from envgen.pipeline.session import Session

if TYPE_CHECKING:
    from envgen.docker.socket_engine import Engine
    from envgen.profile import Profile


def profile_tag(profile: Profile, env: Mapping[str, str] | None = None,
                session: Session | None = None) -> tuple[str, str]:
    """(image tag, content hash) the profile renders to now, without writing anything (rendered in memory, or
    kept from a render of the same inputs: ``envgen.pipeline.tagkey``)."""
    from envgen.pipeline.naming import image_ref
    from envgen.pipeline.tagkey import content_hash

    session = Session.of(session, env)
    made = content_hash(profile, session)
    return image_ref(session.config, profile.name, made), made


def _refuse_failed(name: str, tag: str, content_hash: str, target: str, env: Mapping[str, str] | None) -> None:
    """ImageNotValidated where this profile's image was built and failed its smoke test: building it again fails the
    same way, so the line says what to do instead."""
    from envgen.pipeline.state import ValidationStore

    record = ValidationStore(load_config(env).state_dir).last_for(name, content_hash)
    if record is None or record.passed:
        return
    failed = [c for c in record.report.get("checks", []) if c.get("status") == "fail"]
    first = failed[0] if failed else {}
    what = f" ({first.get('name')}: {first.get('message')})" if first else ""
    fix = ((first.get("diagnosis") or {}).get("fix") if first else None) or "read its smoke report"
    short = record.image_id.replace("sha256:", "")[:12]
    raise ImageNotValidated(
        f"profile {name!r} has no image {tag}: its build {short} failed its smoke test{what} on "
        f"{record.checked_at[:19]}, so it was not tagged, and `envgen build {target}` would fail the same way",
        fix=f"{fix}; change the profile accordingly and build again (`envgen smoke {short}` shows the report; "
            f"`envgen run --force {short}` starts the untagged image to look inside)")


def resolve_image(client: Engine, target: str, env: Mapping[str, str] | None = None,
                  session: Session | None = None) -> ImageSummary:
    """An image reference that exists wins; otherwise ``target`` is a profile, and its current tag is
    looked up (the image built from exactly this profile and envgen version)."""
    found = inspect_image(client, target)
    if found is not None:
        return found
    from envgen.profile.cache import load_profile_cached

    session = Session.of(session, env)
    try:  # from the profile cache `envgen check` keeps (its YAML, extends and the KB unchanged); loading reads no
        kb_key = session.kb_key  # KB (its framework names are their own file): an entry is found by the KB's key
        profile = load_profile_cached(target, session.cache_dir if kb_key else None, None, kb_key, session.env)
    except ProfileNotFound:
        raise InputError(f"{target!r} is neither an image on this engine nor a profile",
                         fix="give an image reference from `envgen images`, or a profile name") from None
    tag, content_hash = profile_tag(profile, session=session)
    session.resolved[profile.name] = profile
    found = inspect_image(client, tag)
    if found is None:
        _refuse_failed(profile.name, tag, content_hash, target, env)
        raise InputError(f"profile {profile.name!r} has no image {tag} on this engine",
                         fix=f"run `envgen build {target}` or `envgen pull {target}`")
    return found
