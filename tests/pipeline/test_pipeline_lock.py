"""A locked pip profile against the real engine: `envgen lock` resolves it (PyPI), the build installs
exactly the lock with --require-hashes --no-deps, and a wrong hash in the lock fails the build with
pip's hash-mismatch message naming the package."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from envgen.errors import BuildFailed
from envgen.pipeline.build import build
from envgen.pipeline.lock import lock
from envgen.render.lockfile import parse_lock
from tests.pipeline.conftest import alias, minimal_profile

NAME = "pipe-lock"


@pytest.fixture(scope="module")
def locked(envgen_home: Path, write_profile: Callable[[str, str], str], cleanup_tags: list[str]) -> Path:
    write_profile(NAME, minimal_profile('"six==1.16.0"'))
    outcome = lock(NAME)
    assert outcome.path == envgen_home / "profiles" / f"{NAME}.lock.txt"
    return outcome.path


def test_lock_build_installs_exactly_the_lock(locked: Path, envgen_home: Path, cleanup_tags: list[str]) -> None:
    parsed = parse_lock(locked.read_text())
    assert [e.pin for e in parsed.extras] == ["six==1.16.0"] and parsed.environment == ()
    outcome = build(NAME)
    cleanup_tags += [outcome.tag, alias(NAME)]
    assert outcome.smoke is not None and outcome.smoke.passed
    context = envgen_home / "state" / "contexts" / NAME
    assert f"six==1.16.0 --hash=sha256:{parsed.extras[0].sha256[0]}" in (context / "requirements.extra.txt").read_text()
    assert outcome.log_path is not None
    log = outcome.log_path.read_text()
    assert "--require-hashes --no-deps --prefix /opt/extras -r requirements.extra.txt" in log


def test_wrong_hash_in_the_lock_fails_the_build(locked: Path, cleanup_tags: list[str]) -> None:
    good = locked.read_text()
    wrong = re.sub(r"(six==1\.16\.0 --hash=sha256:)[0-9a-f]{64}", r"\g<1>" + "0" * 64, good)
    assert wrong != good
    locked.write_text(wrong)
    try:
        with pytest.raises(BuildFailed) as caught:
            build(NAME)
    finally:
        locked.write_text(good)
    error = caught.value
    text = error.tail + (Path(error.log_path).read_text() if error.log_path else "")
    assert "DO NOT MATCH THE HASHES" in text and "six==1.16.0" in text, text[-3000:]
