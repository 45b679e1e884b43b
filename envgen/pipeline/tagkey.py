"""The content hash a profile renders to, kept in the store (``envgen.cache``) so that `envgen run PROFILE` finds
its image without rendering in memory (importing Jinja and the render code, then rendering: ~0.1-0.2 s).

The key covers everything ``render_in_memory(plan, config)`` reads: the profile and the user config as
objects (every field, nested, and the private state such as the file the profile came from and the keys its mirrors
set: ``facts``), the KB (its store key: data files, row code, Python and pydantic), the files beside the profile file
that start with its name (its locks, whatever installer wrote them), and every file of the installed package but the
KB's data (the plan, render and probe code, the templates, render/data) by content. Any change gives another key,
and the hash is made by rendering as before; a KB read without a cache (no key) keeps nothing.
"""

from __future__ import annotations

import hashlib
import sys
from typing import TYPE_CHECKING, Any

from envgen.cache import Store
from envgen.profile.loader import profile_source
from envgen.records import Record

if TYPE_CHECKING:
    from envgen.pipeline.session import Session
    from envgen.profile import Profile


def facts(value: Any) -> str:
    """A record (or what it holds) as deterministic text: every field and every private value, nested; sets sorted."""
    if isinstance(value, Record):
        state = value.__dict__
        fields = [name for name, _, _ in value.__record_fields__]
        private = sorted(name for name in state if name not in fields)
        inner = ",".join(f"{name}={facts(state[name])}" for name in [*fields, *private])
        return f"{type(value).__module__}.{type(value).__qualname__}({inner})"
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__}[{','.join(facts(item) for item in value)}]"
    if isinstance(value, dict):
        return "{" + ",".join(sorted(f"{facts(k)}:{facts(v)}" for k, v in value.items())) + "}"
    if isinstance(value, (set, frozenset)):
        return "set{" + ",".join(sorted(facts(item) for item in value)) + "}"
    return f"{type(value).__name__}:{value!r}"


def code_digest() -> bytes:
    """Every file of the package that can shape a render (the KB's data is in the KB's key), by content."""
    from envgen.paths import _PACKAGE_DIR, templates_dir

    digest = hashlib.sha256()
    kb_data = _PACKAGE_DIR / "kb" / "data"
    for root in dict.fromkeys([_PACKAGE_DIR, templates_dir()]):
        for path in sorted(root.rglob("*")):
            if "__pycache__" in path.parts or path.is_relative_to(kb_data) or not path.is_file():
                continue
            name = str(path.relative_to(root)).encode()
            data = path.read_bytes()
            digest.update(len(name).to_bytes(8, "big") + name + len(data).to_bytes(8, "big") + data)
    return digest.digest()


def _beside(profile: Profile) -> list[bytes | str]:
    """The files beside the profile's own that start with its name (its lock files), names and bytes."""
    source = profile_source(profile)
    if source is None:
        return ["no file"]
    found: list[bytes | str] = [str(source)]
    for path in sorted(source.parent.glob(f"{source.stem}.*")):
        if path != source and path.is_file():
            found += [path.name, path.read_bytes()]
    return found


def content_hash(profile: Profile, session: Session) -> str:
    """The content hash ``render_in_memory(session.plan_of(profile), session.config)`` gives, from the store when it
    was rendered before from the same inputs."""
    kb_key = session.kb_key  # the KB itself is loaded only to render (a miss)
    store = Store(session.cache_dir if kb_key else None, "tag-", codec="json")
    key = ""
    if store.directory is not None:
        key = store.key(f"{sys.version_info[:3]}", kb_key, facts(profile), facts(session.config), *_beside(profile),
                        code_digest())
    found = store.get(key)
    if isinstance(found, str) and len(found) == 64:
        return found
    from envgen.render.core import render_in_memory

    made = render_in_memory(session.plan_of(profile), session.config).content_hash
    store.put(key, made)
    return made
