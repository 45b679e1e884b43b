"""What a Docker CLI says of itself (`docker --version`, `docker buildx version`), kept in the store
(``envgen.cache``).

Asking costs two runs of a Go binary per CLI found (~0.05 s of CPU for two CLIs, 0.1-0.3 s of wall time on a busy
machine) on every `envgen render`, whose printed `docker build` line depends on the builder. The answers depend only
on the executable and the buildx plugin it finds, so the key is made of what decides them: the executable (its real
path, device, inode, size and modification time); every `docker-buildx` the CLI would look for, by the same stat or
its absence (docker/cli's plugin search, cli-plugins/manager: the config directory's `cli-plugins` ($DOCKER_CONFIG
or ~/.docker), the config file's `cliPluginsExtraDirs`, then /usr/local/lib, /usr/local/libexec, /usr/lib and
/usr/libexec `docker/cli-plugins`); the config file's own stat; and the DOCKER_* environment. Replacing, upgrading or
installing any of them gives another key, so the CLI is asked again. An answer that is no exit status (the CLI could
not start, or timed out) is never kept.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from envgen.cache import Store

Answer = tuple[int, str]  # exit status (negative: no status, e.g. it could not start) and output
Run = Callable[[list[str], Mapping[str, str]], Answer]
SYSTEM_PLUGIN_DIRS = ("/usr/local/lib/docker/cli-plugins", "/usr/local/libexec/docker/cli-plugins",
                      "/usr/lib/docker/cli-plugins", "/usr/libexec/docker/cli-plugins")


def ask(path: str, env: Mapping[str, str], run: Run, cache: Path | None) -> tuple[Answer, Answer]:
    """``path --version`` and ``path buildx version``, each (status, output): from ``cache`` when kept there for
    the same executable and plugins, else run (``run``) and kept. ``cache`` None: always run."""
    store = Store(cache, "docker-cli-", codec="json")
    key = _key(store, path, env) if cache is not None else ""
    try:
        (version_rc, version), (buildx_rc, buildx) = store.get(key)
        return (int(version_rc), str(version)), (int(buildx_rc), str(buildx))
    except (TypeError, ValueError):  # a miss (MISSING does not unpack), or an entry of another shape
        pass
    answers = run([path, "--version"], env), run([path, "buildx", "version"], env)
    if all(rc >= 0 for rc, _ in answers):
        store.put(key, answers)
    return answers


def _stat(path: Path | str) -> str:
    try:
        found = os.stat(path)
    except OSError:
        return "-"
    return f"{found.st_dev}:{found.st_ino}:{found.st_size}:{found.st_mtime_ns}"


def _plugin_dirs(config: Path) -> list[str]:
    try:
        extra = json.loads((config / "config.json").read_text(encoding="utf-8")).get("cliPluginsExtraDirs") or []
    except (OSError, ValueError, AttributeError):
        extra = []
    extra = [str(item) for item in extra] if isinstance(extra, list) else []
    return [str(config / "cli-plugins"), *extra, *SYSTEM_PLUGIN_DIRS]


def _key(store: Store, path: str, env: Mapping[str, str]) -> str:
    config = Path(env.get("DOCKER_CONFIG") or Path(env.get("HOME") or "~").expanduser() / ".docker")
    return store.key(os.path.realpath(path), _stat(path), str(config), _stat(config / "config.json"),
                     *(f"{name}={value}" for name, value in sorted(env.items()) if name.startswith("DOCKER_")),
                     *(f"{folder}:{_stat(Path(folder) / 'docker-buildx')}" for folder in _plugin_dirs(config)))
