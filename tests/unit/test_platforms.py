"""The profile's ``platforms`` (issue #43): linux/amd64 and linux/arm64 only, each once; a profile that leaves it
out (or names linux/amd64 alone) keeps the identity and hash it had before the field existed."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from envgen.errors import ProfileError
from envgen.profile import load_profile
from envgen.profile.model import Profile
from envgen.render.hashing import profile_hash

ROOT = Path(__file__).resolve().parents[2]
GOOD = """\
name: demo
base: debian:bookworm-slim
python: "3.11"
gpu: {required: false}
"""


def load(tmp_path: Path, extra: str = "") -> Profile:
    path = tmp_path / "demo.yaml"
    path.write_text(textwrap.dedent(GOOD) + extra, encoding="utf-8")
    return load_profile(str(path))


def test_left_out_means_amd64_and_the_hash_is_unchanged(tmp_path: Path) -> None:
    plain = load(tmp_path)
    explicit = load(tmp_path, "platforms: [linux/amd64]\n")
    assert plain.platforms == explicit.platforms == ["linux/amd64"]
    assert "platforms" not in plain.identity()
    assert profile_hash(plain) == profile_hash(explicit)


def test_arm64_is_part_of_the_identity(tmp_path: Path) -> None:
    plain = load(tmp_path)
    both = load(tmp_path, "platforms: [linux/amd64, linux/arm64]\n")
    assert both.identity()["platforms"] == ["linux/amd64", "linux/arm64"]
    assert profile_hash(both) != profile_hash(plain)


@pytest.mark.parametrize(("value", "said"), [
    ("[linux/arm/v7]", "'linux/arm/v7' is not a platform envgen builds for: use linux/amd64 or linux/arm64"),
    ("[linux/arm64, linux/arm64]", "must name each platform once"),
    ("[]", "at least 1 item"),
    ("linux/arm64", "valid list"),
])
def test_a_bad_value_is_one_line_naming_it(tmp_path: Path, value: str, said: str) -> None:
    with pytest.raises(ProfileError) as info:
        load(tmp_path, f"platforms: {value}\n")
    line = info.value.one_line()
    assert "\n" not in line and "platforms" in line and said in line, line
