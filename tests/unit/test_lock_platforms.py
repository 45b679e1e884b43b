"""Locks per platform (issue #43): a lock's sections stay linux/amd64's and every reader of before reads a lock with a
linux/arm64 block unchanged; the block round-trips; uv resolves the arm64 set for aarch64-manylinux wheels (a real
`uv pip compile` against PyPI: the wheel kept is the aarch64 one, its sha256 PyPI's)."""

from __future__ import annotations

import os
from pathlib import Path

from envgen.kb import KnowledgeBase
from envgen.lock.lock_uv import Resolved, uv_platform, uv_resolve
from envgen.lock.platforms import platform_findings, resolve_platform, wheel_tags
from envgen.plan.image import plan_image
from envgen.plan.lock_platforms import PlatformSet, format_block, locked_platforms, parse_blocks
from envgen.plan.lockfile import LockEntry, parse_lock
from envgen.profile import load_profile

ROOT = Path(__file__).resolve().parents[2]
NUMPY_ARM64 = LockEntry("numpy", "1.26.4", ("7ab55401287bfec946ced39700c053796e7cc0e3acbef09993a9ad2adba6ca6e",))


def test_a_lock_with_an_arm64_block_reads_as_before_and_the_block_round_trips(tmp_path: Path) -> None:
    amd64 = (ROOT / "profiles" / "cpu-minimal.lock.txt").read_text(encoding="utf-8")
    found = PlatformSet("linux/arm64", "cp311-manylinux_2_36_aarch64", (), (NUMPY_ARM64,),
                        "uv 0.13.9 (uv pip compile) --python-platform aarch64-manylinux_2_36")
    text = amd64 + format_block(found)
    assert parse_lock(text) == parse_lock(amd64)  # the amd64 sections, fields and entries: the same
    assert parse_blocks(text) == {"linux/arm64": found}
    assert parse_blocks(amd64) == {}
    path = tmp_path / "x.lock.txt"
    path.write_text(text, encoding="utf-8")
    assert locked_platforms(path) == ("linux/amd64", "linux/arm64")


def test_the_arm64_tags_and_uv_platform() -> None:
    assert wheel_tags("2.36", "linux/arm64")[0] == "manylinux_2_36_aarch64"
    assert "manylinux2014_aarch64" in wheel_tags("2.36", "linux/arm64")
    assert uv_platform("2.36", "aarch64") == "aarch64-manylinux_2_36"
    assert uv_platform("2.36") == "x86_64-manylinux_2_36"  # the amd64 route as before


def test_uv_resolves_the_arm64_set_for_aarch64_wheels() -> None:
    env = dict(os.environ)
    urls: list[str] = []

    def resolve(pins: list[str], arch: str, tags: tuple[str, ...]) -> Resolved:
        done = uv_resolve(pins, "3.11", "2.36", tags, find_links=[], index_urls=[], index_url=None, env=env,
                          arch=arch)
        urls.extend(done.urls.values())
        return done

    found = resolve_platform("linux/arm64", [], ["numpy==1.26.4"], "3.11", "2.36", resolve, "uv")
    assert found.extras == (NUMPY_ARM64,) and found.environment == ()
    assert found.target == "cp311-manylinux_2_36_aarch64" and "aarch64-manylinux_2_36" in found.note
    assert urls and all("aarch64" in url for url in urls), urls


def test_check_resolves_the_arm64_set_and_names_a_package_without_an_aarch64_wheel(kb: KnowledgeBase,
                                                                                     tmp_path: Path) -> None:
    path = tmp_path / "arm.yaml"
    path.write_text("name: arm\nbase: debian:bookworm-slim\nlocal_base: true\npython: \"3.11\"\n"
                    "gpu: {required: false}\nplatforms: [linux/amd64, linux/arm64]\n"
                    "packages:\n  pip: [\"numpy==1.26.4\", \"nvidia-cudnn-cu11==8.6.0.163\"]\n", encoding="utf-8")
    plan = plan_image(load_profile(str(path)), kb)
    found = platform_findings(plan, dict(os.environ), tmp_path)
    assert [(f.code, f.severity, f.platform) for f in found] == [("resolve-no-wheel", "error", "linux/arm64")]
    assert "nvidia-cudnn-cu11" in found[0].message and "aarch64-manylinux_2_36" in found[0].message
    assert platform_findings(plan, dict(os.environ), tmp_path, offline=True) == found  # kept in the cache dir
    path.write_text(path.read_text(encoding="utf-8").replace(', "nvidia-cudnn-cu11==8.6.0.163"', ""), encoding="utf-8")
    ok = platform_findings(plan_image(load_profile(str(path)), kb), dict(os.environ), None)
    assert [(f.code, f.platform) for f in ok] == [("resolve-ok", "linux/arm64")]
