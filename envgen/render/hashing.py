"""Canonical JSON and the two hashes: the profile's identity and the rendered build context."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from envgen.config import DEFAULT_NAMESPACE
from envgen.profile.model import Profile


def canonical_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def pretty_json(data: Any) -> str:
    """Stable, readable JSON for files: sorted keys, two-space indent, trailing newline."""
    return json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def profile_hash(profile: Profile) -> str:
    """sha256 of the canonical JSON of ``profile.identity()`` (mirrors excluded)."""
    return hashlib.sha256(canonical_json(profile.identity()).encode("utf-8")).hexdigest()


def content_hash(files: Mapping[str, bytes]) -> str:
    """sha256 over every file's path and bytes, in path order (length-prefixed: no ambiguity)."""
    digest = hashlib.sha256()
    for path in sorted(files):
        name = path.encode("utf-8")
        data = files[path]
        digest.update(len(name).to_bytes(8, "big") + name + len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def image_tag(profile_name: str, chash: str, namespace: str = DEFAULT_NAMESPACE) -> str:
    """``<namespace>/<profile>:<hash12>``: the default namespace in rendered files and labels (so the hash
    does not depend on it), the user's namespace for what is built, pulled, loaded or exported."""
    return f"{namespace}/{profile_name}:{chash[:12]}"
