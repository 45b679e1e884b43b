"""packages.pip (the extras layer) is constrained by the environment's own resolved set: an extra that needs
another version of a package the environment holds fails the build naming the package and both versions,
instead of leaving two versions side by side in the image (and a wrong requirements.freeze.txt)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from envgen.errors import BuildFailed, CheckFailed
from envgen.pipeline.build import build
from tests.pipeline.conftest import alias, minimal_profile

# The venv Debian 12's python3.11 makes holds setuptools 66.1.1 (python3-setuptools-whl); 65.5.0 is another.
CLASH = "setuptools==65.5.0"


def test_extra_that_changes_an_environment_package_fails_naming_both(
        envgen_home: Path, write_profile: Callable[[str, str], str], cleanup_tags: list[str]) -> None:
    name = write_profile("pipe-extras-clash", minimal_profile(f'"{CLASH}"'))
    cleanup_tags.append(alias(name))
    with pytest.raises(CheckFailed):  # check says it first (extra-moves-env-tool) ...
        build(name)
    with pytest.raises(BuildFailed) as info:  # ... and the build's own guard holds without the check
        outcome = build(name, check=False)
        cleanup_tags.append(outcome.tag)
    text = info.value.tail + info.value.one_line()
    assert "setuptools" in text and "65.5.0" in text and "66.1.1" in text, text


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
