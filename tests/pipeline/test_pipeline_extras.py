"""packages.pip (the extras layer) is constrained by the environment's own resolved set; the venv's own tools named
in packages.pip are the environment's, installed with it; a misspelt extra is told as such."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from docker import DockerClient

from envgen.errors import BuildFailed
from envgen.pipeline.build import build
from tests.pipeline.conftest import alias, minimal_profile

# The venv Debian 12's python3.11 makes holds setuptools 66.1.1 (python3-setuptools-whl); 65.5.0 is another.
# Issue 38 item 6: a venv tool pinned in packages.pip is installed by the environment's pip (plan.requirements
# VENV_TOOLS), not as an extra constrained by the venv's own version, so the pin builds instead of failing.
TOOL = "setuptools==65.5.0"


def test_a_pinned_venv_tool_is_installed_by_the_environment(
        envgen_home: Path, write_profile: Callable[[str, str], str], cleanup_tags: list[str],
        docker_client: DockerClient) -> None:
    name = write_profile("pipe-venv-tool", minimal_profile(f'"{TOOL}"'))
    outcome = build(name)
    cleanup_tags.extend([outcome.tag, alias(name)])
    out = docker_client.containers.run(outcome.tag, ["sh", "-c", "ls -d /opt/env/lib/python3*/site-packages/"
                                                     "setuptools-*.dist-info /opt/extras/lib/python3*/site-packages/"
                                                     "setuptools-*.dist-info 2>/dev/null; true"], remove=True)
    assert out.decode().split() == ["/opt/env/lib/python3.11/site-packages/setuptools-65.5.0.dist-info"], out


def test_a_misspelt_extra_is_not_called_a_constraint_clash(
        envgen_home: Path, write_profile: Callable[[str, str], str], cleanup_tags: list[str]) -> None:
    """Issue 32 item 3: built with --no-check, a misspelt package fails with pip's `No matching distribution found
    for reqeusts==2.32.3`; envgen added "packages.pip cannot be installed beside the environment layer's own
    versions ... pin the environment's version" to every pip failure of that step. Now it says what fits."""
    name = write_profile("pipe-extras-typo", minimal_profile('"reqeusts==2.32.3"'))
    cleanup_tags.append(alias(name))
    with pytest.raises(BuildFailed) as info:
        outcome = build(name, check=False)
        cleanup_tags.append(outcome.tag)
    text = info.value.tail + info.value.one_line()
    assert "No matching distribution found for reqeusts==2.32.3" in text, text
    assert "beside the environment layer" not in text, text
    assert "no release that a packages.pip line asks for" in text, text
    assert "interrupted" not in text, text
