"""The test suite never touches the user's world (issue #12).

For the whole session every test runs with its own image namespace (``ENVGEN_NAMESPACE``, unique per
session) and its own config and state directory (``ENVGEN_CONFIG`` naming a config in a temp dir),
set in ``os.environ`` by a session-wide autouse fixture in tests/conftest.py, so tests written on
other branches comply without doing anything. Subprocesses (the CLI) inherit it.

Before and after the session it snapshots what belongs to the user:
- every local image tag in the user's namespaces (the default ``envgen`` and the one the user's own
  config names), with or without a registry host in front (``localhost:5000/envgen/x``), and the
  base images the suite builds on (``debian:bookworm-slim``...): tag -> image ID;
- containers started from those images;
- every file under the user's state directories (the default one and the configured one), the
  user's envgen config file, and the user's Docker client config (``~/.docker/config.json``): path ->
  (size, mtime, sha256).
At the end the two snapshots must be equal. The engine is shared with other processes, so only these
exact refs and paths are compared: a developer's own `envgen build` running during the suite would be
reported too (run the suite when you are not building in your default namespace).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_NAMESPACE = "envgen"
BASE_IMAGES = ("debian:bookworm-slim", "debian:bullseye-slim", "debian:bookworm")


def new_namespace() -> str:
    return f"envgen-test-{uuid.uuid4().hex[:10]}"


@dataclass(frozen=True)
class UserWorld:
    """What the suite must leave alone: the user's namespaces and state/config paths."""

    namespaces: tuple[str, ...]
    paths: tuple[Path, ...]


def user_world(env: Mapping[str, str]) -> UserWorld:
    """The user's namespaces and paths, read from their real environment before the suite changes it."""
    from envgen.config import DEFAULT_NAMESPACE as default_ns
    from envgen.config import UserConfig, config_path, load_config
    from envgen.errors import InputError

    namespaces = {default_ns}
    home = Path(env.get("HOME", "~")).expanduser()
    paths = {UserConfig().state_dir, config_path(env), home / ".local" / "state" / "envgen",
             Path(env.get("DOCKER_CONFIG", home / ".docker")) / "config.json"}
    try:
        config = load_config(env)
    except InputError:
        pass
    else:
        namespaces.add(config.namespace)
        paths.add(config.state_dir)
    return UserWorld(tuple(sorted(namespaces)), tuple(sorted(paths)))


def _repo_path(ref: str) -> str:
    """``localhost:5000/envgen/x:tag`` -> ``envgen/x``; ``envgen/x:tag`` -> ``envgen/x``."""
    repo = ref.rpartition(":")[0] if ref.rfind(":") > ref.rfind("/") else ref
    first, _, rest = repo.partition("/")
    if rest and ("." in first or ":" in first or first == "localhost"):
        return rest
    return repo


def guarded_ref(ref: str, namespaces: tuple[str, ...]) -> bool:
    repo = _repo_path(ref)
    return ref in BASE_IMAGES or any(repo.startswith(ns + "/") for ns in namespaces)


@dataclass
class Snapshot:
    images: dict[str, str] = field(default_factory=dict)  # tag -> image ID
    containers: dict[str, str] = field(default_factory=dict)  # container ID -> image
    files: dict[str, tuple[int, int, str]] = field(default_factory=dict)

    def differences(self, after: Snapshot) -> list[str]:
        out = []
        for kind in ("images", "containers", "files"):
            before_map: dict[str, Any] = getattr(self, kind)
            after_map: dict[str, Any] = getattr(after, kind)
            for key in sorted(before_map.keys() | after_map.keys()):
                if key not in after_map:
                    out.append(f"{kind}: {key} was removed")
                elif key not in before_map:
                    out.append(f"{kind}: {key} was created")
                elif before_map[key] != after_map[key]:
                    out.append(f"{kind}: {key} was changed ({before_map[key]} -> {after_map[key]})")
        return out


def _file_facts(path: Path) -> tuple[int, int, str]:
    """Size, mtime and (for small files: records, configs) a content hash."""
    stat = path.stat()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16] if stat.st_size < (1 << 20) else ""
    return stat.st_size, stat.st_mtime_ns, digest


def take_snapshot(world: UserWorld, client: Any | None) -> Snapshot:
    snap = Snapshot()
    for root in world.paths:
        if root.is_file():
            snap.files[str(root)] = _file_facts(root)
        elif root.is_dir():
            for path in sorted(root.rglob("*")):
                if path.is_file() and not path.is_symlink():
                    snap.files[str(path)] = _file_facts(path)
    if client is None:
        return snap
    for row in client.api.images():
        for tag in row.get("RepoTags") or ():
            if tag and tag != "<none>:<none>" and guarded_ref(tag, world.namespaces):
                snap.images[tag] = row["Id"]
    for row in client.api.containers(all=True):
        image = str(row.get("Image", ""))
        if guarded_ref(image, world.namespaces) and image not in BASE_IMAGES:
            snap.containers[row["Id"]] = image
    return snap


def remove_namespace_tags(client: Any, namespace: str) -> list[str]:
    """Remove every local tag in the session's test namespace (any registry host in front)."""
    import contextlib

    from docker.errors import APIError

    removed = []
    for row in client.api.images():
        for tag in row.get("RepoTags") or ():
            if tag and _repo_path(tag).startswith(namespace + "/"):
                with contextlib.suppress(APIError):
                    client.api.remove_image(tag)
                    removed.append(tag)
    return removed


def session_environment(namespace: str, home: Path) -> dict[str, str]:
    """The environment variables the session sets: namespace, config (with its own state dir)."""
    home.mkdir(parents=True, exist_ok=True)
    config = home / "config.yaml"
    config.write_text(f"state_dir: {home / 'state'}\n", encoding="utf-8")
    # the pip set is not resolved against the index (envgen.lock.judged) unless a test asks for it: a test of
    # anything else stays fast and off the network
    return {"ENVGEN_NAMESPACE": namespace, "ENVGEN_CONFIG": str(config), "ENVGEN_OFFLINE": "1"}


