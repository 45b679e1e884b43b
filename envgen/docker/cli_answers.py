"""What a Docker CLI says of itself (`docker --version`, `docker buildx version`), kept between runs.

Asking costs two runs of a Go binary per CLI found (~0.05 s of CPU for two CLIs, 0.1-0.3 s of wall time on a busy
machine) on every `envgen render`, whose printed `docker build` line depends on the builder. The answers depend only
on the executable and the buildx plugin it finds, so they are kept in envgen's cache directory under a key made of
what decides them: the executable (its real path, device, inode, size and modification time); every `docker-buildx`
the CLI would look for, by the same stat or its absence (docker/cli's plugin search, cli-plugins/manager: the
config directory's `cli-plugins` ($DOCKER_CONFIG or ~/.docker), the config file's `cliPluginsExtraDirs`, then
/usr/local/lib, /usr/local/libexec, /usr/lib and /usr/libexec `docker/cli-plugins`); the config file's own stat;
and the DOCKER_* environment. Replacing, upgrading or installing any of them gives another key, so the CLI is asked
again. An answer that is no exit status (the CLI could not start, or timed out) is never kept; answers not
written for 30 days are pruned when one is written.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from envgen.files import prune_stale, write_atomically

Answer = tuple[int, str]  # exit status (negative: no status, e.g. it could not start) and output
Run = Callable[[list[str], Mapping[str, str]], Answer]
SYSTEM_PLUGIN_DIRS = ("/usr/local/lib/docker/cli-plugins", "/usr/local/libexec/docker/cli-plugins",
                      "/usr/lib/docker/cli-plugins", "/usr/libexec/docker/cli-plugins")


def ask(path: str, env: Mapping[str, str], run: Run, cache: Path | None) -> tuple[Answer, Answer]:
    """``path --version`` and ``path buildx version``, each (status, output): from ``cache`` when kept there for
    the same executable and plugins, else run (``run``) and kept. ``cache`` None: always run."""
    target = cache / f"docker-cli-{_key(path, env)}.json" if cache is not None else None
    if target is not None:
        with contextlib.suppress(OSError, ValueError, TypeError):
            (version_rc, version), (buildx_rc, buildx) = json.loads(target.read_text(encoding="utf-8"))
            return (int(version_rc), str(version)), (int(buildx_rc), str(buildx))
    answers = run([path, "--version"], env), run([path, "buildx", "version"], env)
    if target is not None and all(rc >= 0 for rc, _ in answers):
        with contextlib.suppress(OSError):  # a cache that cannot be written is simply not kept
            write_atomically(target, json.dumps(answers))
            prune_stale(target, "docker-cli-*.json")
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


def _key(path: str, env: Mapping[str, str]) -> str:
    config = Path(env.get("DOCKER_CONFIG") or Path(env.get("HOME") or "~").expanduser() / ".docker")
    parts = [os.path.realpath(path), _stat(path), str(config), _stat(config / "config.json"),
             *(f"{name}={value}" for name, value in sorted(env.items()) if name.startswith("DOCKER_")),
             *(f"{folder}:{_stat(Path(folder) / 'docker-buildx')}" for folder in _plugin_dirs(config))]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:32]
