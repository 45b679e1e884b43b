"""Every validation error of a user's profile at once, in file order, each at its own line, with "did you
mean" for unknown keys; an unquoted version is quoted back as written."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from envgen.errors import ProfileError
from envgen.profile import load_profile

TYPOS = """\
name: typo
base: debian:bookworm-slim
installer: pip
pyhton: "3.11"
gpu: {required: false, targts: [A100]}
frmeworks: {}
"""


def test_all_problems_in_file_order_with_did_you_mean(tmp_path: Path) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text(TYPOS)
    with pytest.raises(ProfileError) as info:
        load_profile(str(path))
    lines = [info.value.message, *info.value.more]
    assert [line.split(":")[1] for line in lines] == ["4", "5", "6"]
    assert "did you mean 'python'?" in lines[0] and "'python' is required" in lines[0]
    assert "did you mean 'targets'?" in lines[1]
    assert "did you mean 'frameworks'?" in lines[2]
    assert not any("required field 'python' is missing" in line for line in lines)


def test_unquoted_version_is_quoted_back_as_written(tmp_path: Path) -> None:
    path = tmp_path / "unq.yaml"
    path.write_text(TYPOS.replace('pyhton: "3.11"', "python: 3.10").replace("targts: [A100]", "targets: [A100]")
                    .replace("frmeworks: {}\n", ""))
    with pytest.raises(ProfileError) as info:
        load_profile(str(path))
    assert '("3.10")' in info.value.message and '("3.1")' not in info.value.message


def test_cli_prints_each_problem_on_its_own_line(tmp_path: Path) -> None:
    path = tmp_path / "typo.yaml"
    path.write_text(TYPOS)
    out = subprocess.run([sys.executable, "-m", "envgen", "check", str(path)], capture_output=True, text=True)
    assert out.returncode == 2
    assert len([line for line in out.stderr.splitlines() if line.startswith("error: ")]) == 3


def test_profile_names_get_did_you_mean(tmp_path: Path) -> None:
    from envgen.errors import ProfileNotFound

    with pytest.raises(ProfileNotFound) as info:
        load_profile(str(tmp_path / "modern-a100.yaml"))  # the built-in asked for as a file that is not there
    assert "did you mean the profile `modern-a100`" in (info.value.fix or "")
    with pytest.raises(ProfileNotFound) as typo:
        load_profile("modern-a10")
    assert "did you mean 'modern-a100'?" in typo.value.message


def test_a_missing_field_says_what_to_write(tmp_path: Path) -> None:
    """Issue 32 item 10: `required field 'python' is missing` had no fix."""
    from envgen.errors import ProfileError
    from envgen.profile import load_profile

    path = tmp_path / "np.yaml"
    path.write_text("name: np\nbase: debian:bookworm-slim\ngpu:\n  required: false\n")
    with pytest.raises(ProfileError) as caught:
        load_profile(str(path))
    assert caught.value.message.endswith("required field 'python' is missing; add it: Python version, in quotes: "
                                         '"3.11" (YAML reads 3.10 as 3.1).')
