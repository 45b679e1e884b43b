"""Locked profiles of several platforms (issue #43, item 4): each platform's set written into the context as
requirements.<TARGETARCH>.lock and picked by BuildKit's TARGETARCH (uv and pip paths), uv's wheel per platform, an
arm64-only profile whose lock's main sets are arm64's (a real `uv pip compile` against PyPI), `envgen lock
--platform`, and the base's manifest per platform read from a recorded `docker save` of Docker 26's index.

The fixture profile tests/fixtures/profiles/two-platforms-locked.yaml and its lock (written by `envgen lock` on this
host, 2026-12-04) are the golden's input (tests/golden/fixtures/two-platforms-locked)."""

from __future__ import annotations

import io
import os
import re
import shutil
import tarfile
from pathlib import Path

import pytest

from envgen.errors import InputError
from envgen.kb import KnowledgeBase
from envgen.lock.lock_base import saved_platforms
from envgen.lock.platforms import chosen_platforms
from envgen.plan.image import plan_image
from envgen.plan.lock_platforms import locked_platforms, main_platform, parse_blocks, platform_locks
from envgen.plan.lockfile import read_lock
from envgen.profile import load_profile
from envgen.render.files import render_files
from envgen.render.plan import render_context

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "profiles" / "two-platforms-locked"
SAVED = ROOT / "tests" / "fixtures" / "engines" / "docker26-save-bookworm-slim"
NUMPY_AMD64 = "666dbfb6ec68962c033a450943ded891bed2d54e6755e35e5835d63f4f6931d5"
NUMPY_ARM64 = "7ab55401287bfec946ced39700c053796e7cc0e3acbef09993a9ad2adba6ca6e"


def _copy_fixture(tmp_path: Path, name: str = "two-platforms-locked") -> Path:
    for suffix in (".yaml", ".lock.txt"):
        shutil.copyfile(FIXTURE.with_name(FIXTURE.name + suffix), tmp_path / f"{name}{suffix}")
    return tmp_path / f"{name}.yaml"


def test_the_lock_holds_each_platforms_sets_and_uv_for_its_machine() -> None:
    path = FIXTURE.with_name(FIXTURE.name + ".lock.txt")
    assert locked_platforms(path) == ("linux/amd64", "linux/arm64")
    main, arm64 = read_lock(path), parse_blocks(path.read_text(encoding="utf-8"))["linux/arm64"]
    assert [e.sha256[0] for e in main.extras if e.name == "numpy"] == [NUMPY_AMD64]
    assert [e.sha256[0] for e in arm64.extras if e.name == "numpy"] == [NUMPY_ARM64]
    assert "x86_64" in (main.uv_wheel or "") and "aarch64" in arm64.uv_wheel
    assert {e.name for e in arm64.tools} == {"pip", "uv"} and main.uv != next(e for e in arm64.tools if e.name == "uv")
    manifests = dict(pair.split("=") for pair in (main.field("base-manifests") or "").split())
    assert manifests["linux/arm64"] == "-"  # Docker 20.10's local base holds linux/amd64 alone: recorded as it is
    assert manifests["linux/amd64"] == main.base_image_id


def test_the_render_writes_each_platforms_set_and_the_steps_pick_it_by_targetarch(kb: KnowledgeBase) -> None:
    plan = render_context(plan_image(load_profile(str(FIXTURE.with_suffix(".yaml")), env={}), kb))
    files = {k: v.decode("utf-8") for k, v in render_files(plan).files.items() if not k.startswith("envgen/")}
    assert [arch for arch, _ in plan.platform_locks] == ["amd64", "arm64"] and plan.uv_install
    assert f"numpy==1.26.4 --hash=sha256:{NUMPY_ARM64}" in files["requirements.extra.arm64.txt"]
    assert f"numpy==1.26.4 --hash=sha256:{NUMPY_AMD64}" in files["requirements.extra.amd64.txt"]
    assert NUMPY_ARM64 not in files["requirements.extra.amd64.txt"]
    assert files["requirements.extra.txt"] == files["requirements.extra.amd64.txt"].replace(
        "# This file is linux/amd64's set: BuildKit's build of that platform installs it (picked by TARGETARCH).\n",
        "")  # the main file, as before: what the classic Dockerfile installs
    dockerfile = files["Dockerfile"]
    assert dockerfile.count("ARG TARGETARCH") == 2  # the uv stage and the runtime stage
    assert "source=requirements.${TARGETARCH}.lock,target=/tmp/envgen/requirements.lock" in dockerfile
    assert "source=requirements.extra.${TARGETARCH}.txt,target=/tmp/envgen/requirements.extra.txt" in dockerfile
    assert re.search(r'arm64\) wheel="[^"]+aarch64\.whl"', dockerfile)
    assert "--require-hashes" in dockerfile and "TARGETARCH" not in files["Dockerfile.classic"]


def test_the_pip_path_copies_the_platforms_set(kb: KnowledgeBase, tmp_path: Path) -> None:
    """A platform block without uv's wheel (a lock of before): the staged pip path, each stage COPYing the
    TARGETARCH's file under the name its install reads."""
    profile = _copy_fixture(tmp_path)
    lock = tmp_path / "two-platforms-locked.lock.txt"
    text = lock.read_text(encoding="utf-8")
    lock.write_text(re.sub(r"# platform linux/arm64 (uv-wheel: .*|\[tools\].*)\n(#   .*\n)*", "", text),
                    encoding="utf-8")
    plan = render_context(plan_image(load_profile(str(profile), env={}), kb))
    assert not plan.uv_install and len(plan.platform_locks) == 2
    dockerfile = render_files(plan).files["Dockerfile"].decode("utf-8")
    assert "COPY requirements.${TARGETARCH}.lock /tmp/envgen/requirements.lock" in dockerfile
    assert "COPY requirements.extra.${TARGETARCH}.txt /tmp/envgen/requirements.extra.txt" in dockerfile
    assert dockerfile.count("ARG TARGETARCH") == 2  # the build stage and the extras stage


def test_a_lock_missing_a_platform_renders_the_main_set_alone(kb: KnowledgeBase, tmp_path: Path) -> None:
    profile = _copy_fixture(tmp_path)
    lock = tmp_path / "two-platforms-locked.lock.txt"
    lock.write_text(lock.read_text(encoding="utf-8").split("# platform linux/arm64")[0], encoding="utf-8")
    plan = render_context(plan_image(load_profile(str(profile), env={}), kb))
    assert plan.platform_locks == () and "requirements.arm64.lock" not in render_files(plan).files
    assert platform_locks(plan.lock, ["linux/amd64"]) == ()  # one platform: the files of before


def test_main_platform_and_what_lock_resolves(tmp_path: Path) -> None:
    assert main_platform(["linux/arm64", "linux/amd64"]) == "linux/amd64"
    assert main_platform(["linux/arm64"]) == "linux/arm64"
    profile = load_profile(str(_copy_fixture(tmp_path)), env={})
    assert chosen_platforms(profile, []) == ("linux/amd64", "linux/arm64")
    assert chosen_platforms(profile, ["linux/amd64"]) == ("linux/amd64",)
    assert chosen_platforms(profile, ["linux/arm64"]) == ("linux/amd64", "linux/arm64")  # the main set always
    with pytest.raises(InputError, match="--platform linux/s390x is not one of profile 'two-platforms-locked'"):
        chosen_platforms(profile, ["linux/s390x"])


def test_an_arm64_only_lock_has_arm64_main_sets(kb: KnowledgeBase, tmp_path: Path) -> None:
    """A real `envgen lock` (uv against PyPI, no engine) of an arm64-only profile: its sections are arm64's, its
    header says so, and the render takes it (the lock target is aarch64's)."""
    from envgen.lock.lock import lock

    path = tmp_path / "arm.yaml"
    path.write_text(FIXTURE.with_suffix(".yaml").read_text(encoding="utf-8").replace(
        "name: two-platforms-locked", "name: arm").replace("[linux/amd64, linux/arm64]", "[linux/arm64]"),
        encoding="utf-8")
    done = lock(str(path), engine=False, kb=kb, env=dict(os.environ))
    found = read_lock(done.path)
    assert found.field("main-platform") == "linux/arm64" and (found.field("target") or "").endswith("_aarch64")
    assert [e.sha256[0] for e in found.extras if e.name == "numpy"] == [NUMPY_ARM64]
    assert "aarch64" in (found.uv_wheel or "") and parse_blocks(done.path.read_text(encoding="utf-8")) == {}
    assert locked_platforms(done.path) == ("linux/arm64",)
    plan = render_context(plan_image(load_profile(str(path), env={}), kb))
    assert plan.platform_locks == () and NUMPY_ARM64 in render_files(plan).files["requirements.extra.txt"].decode()
    from envgen.check import check_profile

    found = check_profile(load_profile(str(path), env={}), kb)
    assert not [f for f in found if f.code in ("lock-platform-missing", "lock-target")], found  # the lock fits


def _saved(files: dict[str, bytes]) -> io.BytesIO:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    out.seek(0)
    return out


def test_the_base_manifest_per_platform_from_a_saved_index() -> None:
    files = {p.relative_to(SAVED).as_posix(): p.read_bytes() for p in SAVED.rglob("*") if p.is_file()}
    assert saved_platforms(_saved(files)) == {
        "linux/amd64": "sha256:dcc60c77486319758ab2e37adf65a6f083257db8859bcb838df94850ef8c2436",
        "linux/arm64": "sha256:7dadcf5abb266b3d425a3c901c2bb79a446555938e0e3bd998ad6a8f2b55f3e9"}


def test_lock_platform_not_in_the_profile_is_one_line(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from envgen.cli import app

    result = CliRunner().invoke(app, ["lock", str(_copy_fixture(tmp_path)), "--platform", "linux/s390x"])
    assert result.exit_code != 0 and "Traceback" not in result.output
    assert "--platform linux/s390x is not one of profile 'two-platforms-locked'" in result.output
