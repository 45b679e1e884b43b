"""Lock format 2: the base digest, apt pins, uv's wheel, the target; wheel choice from uv's pylock.toml;
what `check` says about locks; renders refuse locks for another platform. No network, no engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from envgen.check import check_profile
from envgen.errors import InputError
from envgen.kb.knowledge import KnowledgeBase
from envgen.lock.lock_base import apt_script, parse_simulation
from envgen.lock.lock_uv import choose_wheels, image_tags, uv_platform, uv_serves
from envgen.lock.wheels import manylinux_platforms
from envgen.plan.image import plan_image
from envgen.plan.lockfile import format_lock, parse_lock
from envgen.profile import load_profile
from envgen.render.core import render_in_memory

H1, H2, H3, H4 = "1" * 64, "2" * 64, "3" * 64, "4" * 64
DIGEST = "sha256:" + "d" * 64

PROFILE = """\
name: pinned
description: lock format 2 test profile
base: {base}
local_base: {local}
installer: pip
python: "3.11"
gpu: {{required: false}}
packages:
  pip: [six==1.16.0]
"""

LOCK = f"""\
# format: envgen.lock/2
# python: 3.11
# framework-pins: -
# extra-pins: six==1.16.0
# base: {{base}}
# apt-pins: {{apt}}
# envgen: 0.1.0
# target: {{target}}
# uv-wheel: https://files.example/uv-0.13.9-py3-none-manylinux_2_17_x86_64.whl
# source-date-epoch: 1700000000
# {{base_field}}: {DIGEST}
# [environment] nothing
# [extras] packages.pip
six==1.16.0 --hash=sha256:{H1}
# [tools] uv and pip
pip==26.3 --hash=sha256:{H2}
uv==0.13.9 --hash=sha256:{H3}
# [apt] runtime apt
python3=3.11.2-1+b1
python3.11-minimal=3.11.2-6+deb12u9
libssl3=3.0.22-1~deb12u2
"""

# Recorded from `apt-get install -s --no-install-recommends python3` in debian:bookworm-slim (2026-11-30).
SIMULATION = """\
NOTE: This is only a simulation!
      apt-get needs root privileges for real execution.
Reading package lists...
Building dependency tree...
The following NEW packages will be installed:
  libexpat1 libpython3-stdlib python3 python3-minimal python3.11-minimal
Inst libexpat1 (2.5.0-1+deb12u5 Debian-Security:12/stable-security [amd64])
Inst python3.11-minimal (3.11.2-6+deb12u9 Debian-Security:12/stable-security [amd64])
Inst python3-minimal (3.11.2-1+b1 Debian:12.12/stable [amd64])
Inst libssl3 [3.0.17-1~deb12u2] (3.0.22-1~deb12u2 Debian-Security:12/stable-security [amd64])
Inst python3 (3.11.2-1+b1 Debian:12.12/stable [amd64])
Conf libexpat1 (2.5.0-1+deb12u5 Debian-Security:12/stable-security [amd64])
"""


def _write(tmp: Path, *, base: str = "debian:bookworm-slim", local: bool = True, target: str | None = None,
           base_field: str | None = None, apt: str = "python3") -> Path:
    (tmp / "pinned.yaml").write_text(PROFILE.format(base=base, local=str(local).lower()), encoding="utf-8")
    lock = LOCK.format(base=base, target=target or "cp311-manylinux_2_36_x86_64",
                       base_field=base_field or ("base-image-id" if local else "base-digest"), apt=apt)
    (tmp / "pinned.lock.txt").write_text(lock, encoding="utf-8")
    return tmp / "pinned.yaml"


def test_format_2_round_trips_with_base_apt_and_tools() -> None:
    lock = parse_lock(LOCK.format(base="debian:bookworm-slim", target="cp311-manylinux_2_36_x86_64",
                                  base_field="base-image-id", apt="python3"))
    assert lock.base_image_id == DIGEST and lock.base_digest is None
    assert [e.line for e in lock.apt][:2] == ["python3=3.11.2-1+b1", "python3.11-minimal=3.11.2-6+deb12u9"]
    assert lock.uv is not None and lock.uv.version == "0.13.9" and lock.uv_wheel
    assert lock.source_date_epoch == "1700000000"
    assert lock.inputs.base == "debian:bookworm-slim" and lock.inputs.apt == ("python3",)
    again = parse_lock(format_lock(lock, profile_name="pinned", extra_fields=lock.fields[6:]))
    assert again.apt == tuple(sorted(lock.apt, key=lambda e: e.name)) and again.tools == lock.tools
    assert again.inputs == lock.inputs and again.base_image_id == DIGEST


@pytest.mark.parametrize(("bad", "message"), [
    ("python3=3.11.2-1+b1", "python3=3.11 ; rm -rf /"),
    (f"# base-image-id: {DIGEST}", "# base-image-id: latest"),
])
def test_format_2_rejects_smuggled_apt_lines_and_bad_digests(bad: str, message: str) -> None:
    text = LOCK.format(base="debian:bookworm-slim", target="t", base_field="base-image-id", apt="python3")
    text = text.replace(bad, message)
    with pytest.raises(InputError):
        parse_lock(text, "x.lock.txt")


def test_apt_simulation_gives_every_new_package_at_its_version() -> None:
    entries = parse_simulation(SIMULATION)
    assert [e.line for e in entries] == [
        "libexpat1=2.5.0-1+deb12u5", "libssl3=3.0.22-1~deb12u2", "python3=3.11.2-1+b1",
        "python3-minimal=3.11.2-1+b1", "python3.11-minimal=3.11.2-6+deb12u9"]
    script = apt_script(["python3"], "http://mirror.example/debian")
    assert "apt-get install -s --no-install-recommends python3" in script and "mirror.example" in script


def test_uv_wheel_choice_follows_the_images_tags() -> None:
    tags = {H1: "cp39-abi3-manylinux_2_28_x86_64", H2: "cp311-abi3-manylinux_2_34_x86_64",
            H3: "cp311-abi3-manylinux_2_38_x86_64", H4: "cp311-abi3-macosx_11_0_arm64"}
    wheels = [{"url": f"https://f.example/cryptography-50.0.2-{tag}.whl", "hashes": {"sha256": digest}}
              for digest, tag in tags.items()]
    pylock = {"packages": [{"name": "Cryptography", "version": "50.0.2", "wheels": wheels}]}
    debian12 = choose_wheels(pylock, image_tags("3.11", manylinux_platforms("2.36")))
    assert debian12.entries["cryptography"].sha256 == (H2,)  # manylinux_2_38 needs a newer glibc than 2.36
    ubuntu22 = choose_wheels(pylock, image_tags("3.11", manylinux_platforms("2.31")))
    assert ubuntu22.entries["cryptography"].sha256 == (H1,)
    with pytest.raises(InputError, match="no wheel of cryptography==50.0.2 fits"):
        choose_wheels(pylock, image_tags("3.11", manylinux_platforms("2.17")))
    assert uv_platform("2.36") == "x86_64-manylinux_2_36" and uv_serves("3.8") and not uv_serves("3.7")


def test_a_registry_base_is_rendered_by_the_locks_digest(tmp_path: Path, kb: KnowledgeBase) -> None:
    path = _write(tmp_path, base="python:3.11-slim-bookworm", local=False, apt="-",
                  target="cp311-manylinux_2_36_x86_64")  # python:3.11-slim-bookworm: Debian 12, glibc 2.36
    files = render_in_memory(plan_image(load_profile(str(path)), kb)).files
    for name in ("Dockerfile", "Dockerfile.classic"):
        text = files[name].decode()
        assert f"ARG BASE_IMAGE=python:3.11-slim-bookworm@{DIGEST}\n" in text and "FROM ${BASE_IMAGE} AS" in text


def test_a_local_base_keeps_its_tag_and_the_apt_pins(tmp_path: Path, kb: KnowledgeBase) -> None:
    path = _write(tmp_path)
    files = render_in_memory(plan_image(load_profile(str(path)), kb)).files
    dockerfile = files["Dockerfile"].decode()
    assert "ARG BASE_IMAGE=debian:bookworm-slim\n" in dockerfile and "FROM ${BASE_IMAGE} AS system" in dockerfile
    assert "python3.11-minimal=3.11.2-6+deb12u9" in dockerfile and "libssl3=3.0.22-1~deb12u2" in dockerfile
    assert "ARG SOURCE_DATE_EPOCH=1700000000" in dockerfile
    assert f"uv-0.13.9-py3-none-manylinux_2_17_x86_64.whl\" \\\n        {H3}" in dockerfile
    classic = files["Dockerfile.classic"].decode()
    assert "python3=3.11.2-1+b1 python3-venv" in classic  # build stage: locked packages pinned, tools by name
    assert f"pip==26.3 --hash=sha256:{H2}" in files["requirements.lock"].decode()


def test_a_lock_for_another_target_is_refused_before_building(tmp_path: Path, kb: KnowledgeBase) -> None:
    path = _write(tmp_path, target="cp310-manylinux_2_35_x86_64")
    with pytest.raises(InputError, match="was made for cp310-manylinux_2_35_x86_64; this image is "
                                         "cp311-manylinux_2_36_x86_64") as caught:
        render_in_memory(plan_image(load_profile(str(path)), kb))
    assert f"envgen lock {path}" in caught.value.one_line()  # as it was loaded: a path (issue 32 item 1)


def test_a_lock_for_another_base_or_apt_set_is_stale(tmp_path: Path, kb: KnowledgeBase) -> None:
    path = _write(tmp_path)
    lock = tmp_path / "pinned.lock.txt"
    lock.write_text(lock.read_text().replace("# base: debian:bookworm-slim", "# base: debian:bookworm"))
    with pytest.raises(InputError, match="was made for base debian:bookworm; the profile now has debian:bookworm-slim"):
        render_in_memory(plan_image(load_profile(str(path)), kb))
    path = _write(tmp_path)
    lock.write_text(lock.read_text().replace("# apt-pins: python3", "# apt-pins: curl python3"))
    with pytest.raises(InputError, match="apt packages curl python3; the image now needs python3"):
        render_in_memory(plan_image(load_profile(str(path)), kb))


def test_check_warns_on_a_missing_or_stale_lock_naming_the_command(tmp_path: Path, kb: KnowledgeBase) -> None:
    path = _write(tmp_path)
    codes = {f.code: f for f in check_profile(load_profile(str(path)), kb)}
    assert "lock-missing" not in codes and "lock-stale" not in codes
    path.write_text(path.read_text().replace("six==1.16.0", "six==1.17.0"))
    stale = {f.code: f for f in check_profile(load_profile(str(path)), kb)}["lock-stale"]
    assert stale.severity == "warning" and "six==1.16.0" in stale.message and f"envgen lock {path}" in stale.fix
    (tmp_path / "pinned.lock.txt").unlink()
    missing = {f.code: f for f in check_profile(load_profile(str(path)), kb)}["lock-missing"]
    assert missing.severity == "warning" and f"envgen lock {path}" in missing.fix
