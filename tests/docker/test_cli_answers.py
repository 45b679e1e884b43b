"""What a Docker CLI says of itself, kept between renders (envgen.docker.cli_answers): asked once per executable
and plugin set, asked again when either changes, and the builder found from kept answers is the one found by
asking."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NoReturn

from envgen.docker.builder import DEBIAN_CLI, _run, detect_builder
from envgen.docker.cli_answers import Answer, ask


def _counting(calls: list[list[str]]) -> Callable[[list[str], Mapping[str, str]], Answer]:
    def run(cmd: list[str], env: Mapping[str, str]) -> Answer:
        calls.append(cmd)
        return _run(cmd, env)
    return run


def test_the_real_cli_is_asked_once_until_a_plugin_appears(tmp_path: Path,
                                                          unavailable: Callable[[str], NoReturn]) -> None:
    if not os.path.exists(DEBIAN_CLI):
        unavailable(f"no docker CLI at {DEBIAN_CLI} (scripts/host-setup installs one)")  # fails under CI=true
    env = {**os.environ, "DOCKER_CONFIG": str(tmp_path / "docker-config")}
    calls: list[list[str]] = []
    first = ask(DEBIAN_CLI, env, _counting(calls), tmp_path / "cache")
    again = ask(DEBIAN_CLI, env, _counting(calls), tmp_path / "cache")
    assert first == again == (_run([DEBIAN_CLI, "--version"], env), _run([DEBIAN_CLI, "buildx", "version"], env))
    assert len(calls) == 2  # --version and buildx version, the first time only
    plugin = tmp_path / "docker-config" / "cli-plugins" / "docker-buildx"  # a buildx plugin installed since
    plugin.parent.mkdir(parents=True)
    plugin.write_text("#!/bin/sh\necho 'github.com/docker/buildx v0.14.0 abc'\n")
    plugin.chmod(plugin.stat().st_mode | stat.S_IXUSR)
    ask(DEBIAN_CLI, env, _counting(calls), tmp_path / "cache")
    assert len(calls) == 4
    ask(DEBIAN_CLI, {**env, "DOCKER_CLI_HINTS": "false"}, _counting(calls), tmp_path / "cache")
    assert len(calls) == 6  # the DOCKER_* environment is part of the key


def test_kept_answers_give_the_builder_asking_gives(tmp_path: Path) -> None:
    asked = detect_builder()
    assert detect_builder(cache=tmp_path) == asked  # fills the cache
    assert list(tmp_path.glob("docker-cli-*.json"))
    assert detect_builder(cache=tmp_path) == asked  # from it


def test_an_answer_without_an_exit_status_is_not_kept(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-docker")
    calls: list[list[str]] = []
    for _ in range(2):
        (rc, _), _ = ask(missing, os.environ, _counting(calls), tmp_path / "cache")
        assert rc == -1
    assert len(calls) == 4
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").iterdir())


def test_answers_not_written_for_a_month_are_pruned_when_one_is_written(tmp_path: Path) -> None:
    import time

    cache = tmp_path / "cache"
    cache.mkdir()
    stale, fresh = cache / "docker-cli-stale.json", cache / "docker-cli-fresh.json"
    for kept in (stale, fresh):
        kept.write_text('[[0, "Docker version 1"], [1, ""]]', encoding="utf-8")
    month_ago = time.time() - 31 * 86400
    os.utime(stale, (month_ago, month_ago))
    ask(DEBIAN_CLI, os.environ, _run, cache)  # asks the real CLI, keeps its answers, prunes
    assert not stale.exists() and fresh.exists() and len(list(cache.glob("docker-cli-*.json"))) == 2
