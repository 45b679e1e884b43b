"""A locked pip profile against the real engine: `envgen lock` resolves it (uv against PyPI, apt against
the Debian archive inside the base image, the base's image ID from the engine), the BuildKit build installs
exactly the lock with uv (--require-hashes --no-deps) and pins every apt package, and a wrong hash in the
lock fails the build with uv's hash-mismatch message naming the package and both hashes.
About 1-2 minutes (two small image builds, one apt resolution)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from envgen.errors import BuildFailed
from envgen.lock.lock import lock
from envgen.pipeline.build import build
from envgen.plan.lockfile import parse_lock
from tests.pipeline.conftest import alias, minimal_profile

if TYPE_CHECKING:
    from docker import DockerClient

NAME = "pipe-lock"


@pytest.fixture(scope="module")
def locked(envgen_home: Path, write_profile: Callable[[str, str], str], cleanup_tags: list[str]) -> Path:
    write_profile(NAME, minimal_profile('"six==1.16.0"'))
    outcome = lock(NAME)
    assert outcome.path == envgen_home / "profiles" / f"{NAME}.lock.txt"
    return outcome.path


def test_lock_pins_base_apt_pip_and_uv(locked: Path, docker_client: DockerClient) -> None:
    parsed = parse_lock(locked.read_text())
    assert [e.pin for e in parsed.extras] == ["six==1.16.0"] and parsed.environment == ()
    assert parsed.base_image_id == docker_client.images.get("debian:bookworm-slim").id  # local base: image ID
    assert "python3" in {e.name for e in parsed.apt} and parsed.inputs.apt == ("python3",)
    assert parsed.uv is not None and parsed.uv_wheel and parsed.uv_wheel.endswith(".whl")
    assert {t.name for t in parsed.tools} == {"pip", "uv"}
    assert parsed.field("resolver", ).startswith("uv ")  # type: ignore[union-attr]


def test_lock_build_installs_exactly_the_lock(locked: Path, envgen_home: Path, cleanup_tags: list[str],
                                              docker_client: DockerClient) -> None:
    parsed = parse_lock(locked.read_text())
    lines: list[str] = []
    outcome = build(NAME, echo=lines.append)
    cleanup_tags += [outcome.tag, alias(NAME)]
    assert not any("unlocked build" in line for line in lines)
    assert outcome.smoke is not None and outcome.smoke.passed
    context = envgen_home / "state" / "contexts" / NAME
    assert f"six==1.16.0 --hash=sha256:{parsed.extras[0].sha256[0]}" in (context / "requirements.extra.txt").read_text()
    assert outcome.log_path is not None
    log = outcome.log_path.read_text()
    if outcome.builder == "classic":
        assert "--require-hashes --no-deps --prefix /opt/extras -r requirements.extra.txt" in log
        return
    assert "uv.sh pip install --python /opt/env/bin/python --require-hashes --no-deps" in log
    # apt round trip: every package the lock pins is installed at exactly that version
    out = docker_client.containers.run(outcome.tag, ["dpkg-query", "-W", "-f", "${Package}=${Version}\\n"],
                                       remove=True, user="0:0").decode()
    installed = set(out.split())
    assert {e.line for e in parsed.apt} <= installed
    frozen = json.loads(docker_client.containers.run(outcome.tag, ["python", "-m", "pip", "list", "--format=json"],
                                                     remove=True).decode())
    assert {(p["name"].lower(), p["version"]) for p in frozen} >= {("six", "1.16.0"), ("pip", parsed.tools[0].version)}


def test_the_classic_builder_installs_the_same_lock_with_pip(locked: Path, cleanup_tags: list[str],
                                                              docker_client: DockerClient) -> None:
    from envgen.docker import remove_image

    parsed = parse_lock(locked.read_text())
    for tag in cleanup_tags:  # the BuildKit image has the same content hash: without this it would be reused
        remove_image(docker_client, tag, force=True)
    outcome = build(NAME, builder="classic")
    cleanup_tags += [outcome.tag, alias(NAME)]
    assert outcome.builder == "classic" and outcome.smoke is not None and outcome.smoke.passed
    assert outcome.log_path is not None
    assert "--require-hashes --no-deps --prefix /opt/extras -r requirements.extra.txt" in outcome.log_path.read_text()
    out = docker_client.containers.run(outcome.tag, ["dpkg-query", "-W", "-f", "${Package}=${Version}\\n"],
                                       remove=True, user="0:0").decode()
    assert {e.line for e in parsed.apt} <= set(out.split())


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
    right = re.search(r"six==1\.16\.0 --hash=sha256:([0-9a-f]{64})", good)
    assert right is not None
    if "DO NOT MATCH THE HASHES" in text:  # pip (classic builder)
        assert "six==1.16.0" in text, text[-3000:]
    else:  # uv: "Hash mismatch for `six==1.16.0`", the expected and the computed hash
        assert "Hash mismatch for `six==1.16.0`" in text, text[-3000:]
        assert "0" * 64 in text and right.group(1) in text
