"""Layering envgen images (issue #28): a team base built by envgen, and a per-project profile on top of it that
names the base's environment (``base_provides: {python: /opt/env/bin/python3}``). The build stage of the second
image made a venv over the base's /opt/env as the base's non-root user and stopped with "Permission denied:
'/opt/env/include'"; now the stages run as root and the project's packages go on top of the base's environment."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from envgen.pipeline.build import build
from envgen.plan.image import plan_image
from envgen.render import render_in_memory
from tests.pipeline.conftest import alias, minimal_profile

if TYPE_CHECKING:
    from docker import DockerClient

pytestmark = pytest.mark.slow

TOP = """\
description: a per-project profile on top of the team base envgen built
base: {base}
local_base: true
installer: pip
python: "3.11"
gpu: {{required: false}}
base_provides: {{python: /opt/env/bin/python3}}
smoke: {{matmul_size: 128, train_steps: 2}}
packages:
  pip: ["colorama==0.4.6"]
"""


@pytest.fixture(scope="module")
def team_base(envgen_home: Path, write_profile: Callable[[str, str], str], cleanup_tags: list[str]):  # type: ignore[no-untyped-def]
    name = write_profile("layer-base", minimal_profile('"six==1.16.0"'))
    outcome = build(name)
    cleanup_tags += [outcome.tag, alias(name)]
    return outcome


def test_a_profile_on_top_of_an_envgen_image_builds_and_passes_its_smoke_test(  # type: ignore[no-untyped-def]
        team_base, write_profile: Callable[[str, str], str], cleanup_tags: list[str],
        docker_client: DockerClient) -> None:
    from envgen.kb import load_kb
    from envgen.profile import load_profile

    name = write_profile("layer-top", TOP.format(base=alias("layer-base")))
    kb = load_kb()
    profile = load_profile(name, kb=kb)
    assert kb.base_family(profile).name == "envgen"
    dockerfile = render_in_memory(plan_image(profile, kb)).files["Dockerfile"].decode()
    assert "USER root" in dockerfile and "-m venv" not in dockerfile
    outcome = build(name)
    cleanup_tags += [outcome.tag, alias(name)]
    assert outcome.smoke is not None and outcome.smoke.passed, outcome.smoke
    out = docker_client.containers.run(
        outcome.image_id, ["python", "-c", "import colorama, six; print(six.__version__, colorama.__version__)"],
        remove=True)
    assert out.split() == [b"1.16.0", b"0.4.6"]
    # the image's user is the profile's again, and the base's environment is the image's
    who = docker_client.containers.run(outcome.image_id, ["sh", "-c", "id -u; command -v python"], remove=True)
    assert who.split() == [b"1000", b"/opt/env/bin/python"]


def test_an_envgen_base_the_profile_does_not_name_is_refused_before_building(  # type: ignore[no-untyped-def]
        team_base, write_profile: Callable[[str, str], str]) -> None:
    """Without base_provides the profile would make its environment anew over the base's /opt/env: the build reads
    the base's io.envgen.* labels from the engine and refuses, naming the interpreter to layer on."""
    from envgen.errors import InputError

    body = TOP.format(base=alias("layer-base")).replace("base_provides: {python: /opt/env/bin/python3}\n", "")
    name = write_profile("layer-unnamed", body)
    with pytest.raises(InputError) as err:
        build(name)
    assert "occupies /opt/env" in err.value.message and "base_provides: {python: /opt/env/bin/python3}" in (
        err.value.fix or "")


def test_the_envgen_and_debian_rows_hold_for_the_images(team_base, docker_client: DockerClient) -> None:  # type: ignore[no-untyped-def]
    """The base_families.yaml rows read back from the images themselves: the image envgen built carries the label
    its row matches, leaves a non-root user and holds the paths the row says it occupies; debian:bookworm-slim
    (the built-in profiles' base) has apt and runs as root."""
    from envgen.kb import load_kb

    kb = load_kb()
    attrs = docker_client.images.get(team_base.image_id).attrs["Config"]
    envgen = next(f for f in kb.base_families if f.name == "envgen")
    assert set(envgen.match.labels) <= set(attrs["Labels"])
    assert attrs["User"] not in ("", "0", "root", "0:0") and envgen.user == "non-root"
    probe = "for p in " + " ".join(envgen.occupies) + "; do test -d $p && echo $p; done"
    held = docker_client.containers.run(team_base.image_id, ["sh", "-c", probe], remove=True).split()
    assert [p.decode() for p in held] == envgen.occupies
    debian = kb.base_family("debian:bookworm-slim")
    out = docker_client.containers.run("debian:bookworm-slim", ["sh", "-c", "id -u; command -v apt-get"], remove=True)
    assert out.split() == [b"0", b"/usr/bin/apt-get"] and debian.package_manager == "apt" and debian.user == "root"
