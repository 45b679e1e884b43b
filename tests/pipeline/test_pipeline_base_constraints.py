"""Issue #32 item 4 / #33: a packages.pip line whose *dependency* needs another version of what a base_provides base
holds. A small "team base" (built by envgen, with network) holds six 1.11.0; a profile on it adds asttokens 2.4.1,
whose wheel says `Requires-Dist: six >=1.12.0` (read from the wheel's METADATA before writing this). Unconstrained,
pip would install six 1.17.0 over the base's copy; constrained by constraints.base.txt the build fails at the extras
step with pip's ResolutionImpossible and envgen's one line naming six and the base's version. The same profile with
a line that needs nothing else of the base (tomli) builds, and the image keeps the base's six."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from envgen.errors import BuildFailed
from envgen.pipeline.build import build
from tests.pipeline.conftest import alias, built_base

if TYPE_CHECKING:
    from docker import DockerClient

pytestmark = pytest.mark.slow

TOP = """\
description: a profile on a team base that holds six 1.11.0
base: {base}
local_base: true
installer: pip
python: "3.11"
gpu: {{required: false}}
base_provides: {{python: /opt/env/bin/python3, packages: {{six: "1.11.0"}}}}
smoke: {{matmul_size: 128, train_steps: 2}}
packages:
  pip: [{pips}]
"""
LINE = ("envgen: a packages.pip line needs another version of six than the base holds (base_provides: six 1.11.0): "
        "asttokens 2.4.1 depends on six>=1.12.0")


@pytest.fixture(scope="module")
def six_base(envgen_home: Path, write_profile: Callable[[str, str], str], cleanup_tags: list[str]) -> str:
    return built_base(write_profile, cleanup_tags, "six-base", '"six==1.11.0"')


def test_a_dependency_on_another_version_of_a_base_package_fails_at_its_step_naming_it(
        six_base: str, write_profile: Callable[[str, str], str], cleanup_tags: list[str]) -> None:
    name = write_profile("six-top-clash", TOP.format(base=six_base, pips='"six==1.11.0", "asttokens==2.4.1"'))
    cleanup_tags.append(alias(name))
    with pytest.raises(BuildFailed) as info:
        outcome = build(name)
        cleanup_tags.append(outcome.tag)
    text = (info.value.tail or "") + info.value.one_line()
    assert "ResolutionImpossible" in text and LINE in text, text
    assert "beside the environment layer" not in text, text  # extras.sh's own explanation is not added
    assert "extras.sh" in text, text  # the extras step


def test_the_same_profile_without_the_line_builds_and_keeps_the_bases_version(
        six_base: str, write_profile: Callable[[str, str], str], cleanup_tags: list[str],
        docker_client: DockerClient) -> None:
    name = write_profile("six-top", TOP.format(base=six_base, pips='"six==1.11.0", "tomli==2.0.1"'))
    outcome = build(name)
    cleanup_tags.extend([outcome.tag, alias(name)])
    out = docker_client.containers.run(alias(name), ["python", "-m", "pip", "list", "--format=freeze"], remove=True)
    listed = set(out.decode().split())
    assert {"six==1.11.0", "tomli==2.0.1"} <= listed, listed
