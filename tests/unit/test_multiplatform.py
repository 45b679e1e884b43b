"""envgen.docker.multiplatform without an engine: the platforms it accepts, what it reads of binfmt_misc (entries
written as the kernel shows them: /proc/sys/fs/binfmt_misc/qemu-aarch64 on this Debian 12 host after
`apt-get install qemu-user-static`), and the buildx command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from envgen.docker.builder import BuilderInfo
from envgen.docker.multiplatform import (
    check_platforms,
    emulation_problem,
    host_platform,
    multiplatform_command,
    require_emulation,
)
from envgen.errors import HostIncompatible, InputError
from envgen.plan.lockfile import LockEntry

# numpy 1.26.4's cp311 manylinux aarch64 wheel on PyPI (its sha256 as `envgen lock` read it, 2026-12-04)
NUMPY_ARM64 = LockEntry("numpy", "1.26.4", ("7ab55401287bfec946ced39700c053796e7cc0e3acbef09993a9ad2adba6ca6e",))

# /proc/sys/fs/binfmt_misc/qemu-aarch64 as read here (qemu-user-static 1:7.2+dfsg-7+deb12u18, binfmt-support)
QEMU_AARCH64 = """enabled
interpreter /usr/libexec/qemu-binfmt/aarch64-binfmt-P
flags: PF
offset 0
magic 7f454c460201010000000000000000000200b700
mask ffffffffffffff00fffffffffffffffffeffffff
"""


def _binfmt(tmp_path: Path, entry: str | None) -> Path:
    (tmp_path / "register").write_text("", encoding="utf-8")
    if entry is not None:
        (tmp_path / "qemu-aarch64").write_text(entry, encoding="utf-8")
    return tmp_path


def test_platforms_are_checked_and_kept_in_order() -> None:
    assert check_platforms(["linux/arm64", "linux/amd64", "linux/arm64"]) == ("linux/arm64", "linux/amd64")
    with pytest.raises(InputError, match="'linux/riscv64' is not one envgen builds"):
        check_platforms(["linux/riscv64"])
    with pytest.raises(InputError, match="no platform"):
        check_platforms([])


@pytest.mark.skipif(host_platform() != "linux/amd64", reason="the binfmt cases are written for an x86-64 host")
def test_arm64_runs_only_through_an_enabled_entry_with_the_f_flag(tmp_path: Path) -> None:
    assert emulation_problem("linux/amd64", tmp_path) is None  # the host's own platform needs nothing
    assert emulation_problem("linux/arm64", _binfmt(tmp_path, QEMU_AARCH64)) is None
    (tmp_path / "qemu-aarch64").write_text(QEMU_AARCH64.replace("flags: PF", "flags: P"), encoding="utf-8")
    assert "lacks the F flag (flags P)" in (emulation_problem("linux/arm64", tmp_path) or "")
    (tmp_path / "qemu-aarch64").write_text(QEMU_AARCH64.replace("enabled", "disabled", 1), encoding="utf-8")
    assert "disabled" in (emulation_problem("linux/arm64", tmp_path) or "")
    (tmp_path / "qemu-aarch64").unlink()
    assert "nothing runs aarch64 binaries" in (emulation_problem("linux/arm64", tmp_path) or "")
    (tmp_path / "register").unlink()
    assert "not mounted" in (emulation_problem("linux/arm64", tmp_path) or "")
    with pytest.raises(HostIncompatible, match="cannot build for linux/arm64") as caught:
        require_emulation(["linux/amd64", "linux/arm64"], tmp_path)
    assert "scripts/host-setup" in (caught.value.fix or "")


def test_the_command_builds_every_platform_into_one_pushed_index(tmp_path: Path) -> None:
    builder = BuilderInfo("buildx", "/usr/bin/docker", "github.com/docker/buildx 0.13.1", "test")
    cmd = multiplatform_command(builder, tmp_path, "Dockerfile", ("linux/amd64", "linux/arm64"),
                                "localhost:5000/ns/p:abc", tmp_path / "meta.json", {"ca_bundle": tmp_path / "ca"},
                                {"HTTPS_PROXY": "http://proxy:3128"}, {"a": "b"})
    assert cmd[:5] == ["/usr/bin/docker", "buildx", "build", "--platform", "linux/amd64,linux/arm64"]
    assert "--output=type=image,name=localhost:5000/ns/p:abc,push=true" in cmd
    assert "--provenance=false" in cmd and cmd[-1] == str(tmp_path)
    assert f"id=ca_bundle,src={tmp_path / 'ca'}" in cmd and "HTTPS_PROXY=http://proxy:3128" in cmd
    legacy = BuilderInfo("buildkit-legacy", "/usr/bin/docker", "20.10", "test")
    with pytest.raises(InputError, match="needs the buildx plugin"):
        multiplatform_command(legacy, tmp_path, "Dockerfile", ("linux/amd64",), "r", tmp_path / "m", {}, {}, {})


def test_options_of_a_one_platform_build_are_refused_by_name() -> None:
    from envgen.pipeline.platforms import refuse_options

    refuse_options(builder="buildkit", wheelhouse=None, offline=False)
    with pytest.raises(InputError, match="--wheelhouse is not available for a profile with several platforms"):
        refuse_options(builder=None, wheelhouse=Path("/opt/wheels"), offline=True)
    with pytest.raises(InputError, match="--builder classic"):
        refuse_options(builder="classic", wheelhouse=None, offline=False)


def test_the_gpu_tier_of_a_foreign_platform_is_said_not_run() -> None:
    from envgen.pipeline.platforms import gpu_tier_note

    note = gpu_tier_note([host_platform(), "linux/arm64" if host_platform() == "linux/amd64" else "linux/amd64"])
    assert "GPU tier not run for" in note and "none is lent here" in note
    assert "GPU tier not run" not in gpu_tier_note([host_platform()])


# An index as BuildKit pushes one with provenance on (its attestation manifest is listed as platform unknown/unknown,
# BuildKit's docs/attestations/attestation-storage.md); digests shortened to what the reader does not check.
INDEX = {"mediaType": "application/vnd.oci.image.index.v1+json", "schemaVersion": 2, "manifests": [
    {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": "sha256:" + "a" * 64, "size": 1,
     "platform": {"architecture": "amd64", "os": "linux"}},
    {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": "sha256:" + "b" * 64, "size": 1,
     "platform": {"architecture": "arm64", "os": "linux"}},
    {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": "sha256:" + "c" * 64, "size": 1,
     "annotations": {"vnd.docker.reference.type": "attestation-manifest"},
     "platform": {"architecture": "unknown", "os": "unknown"}}]}


def test_an_index_lists_its_platform_images_and_leaves_attestations_out() -> None:
    from envgen.docker.multiplatform import PlatformImage, image_platform, index_images

    assert index_images(INDEX) == (PlatformImage("linux/amd64", "sha256:" + "a" * 64),
                                   PlatformImage("linux/arm64", "sha256:" + "b" * 64))
    assert index_images({"manifests": []}) == ()
    assert image_platform({"Os": "linux", "Architecture": "arm64"}) == "linux/arm64"
    assert image_platform({"Os": "linux"}) == ""  # an engine that names none: nothing is refused for it


def test_another_platforms_image_is_tagged_apart_and_its_gpu_tier_said_not_run() -> None:
    from envgen.pipeline.platform_seal import platform_tag
    from envgen.pipeline.platforms import gpu_tier_state
    from envgen.pipeline.publish import foreign_tag

    assert foreign_tag("envgen/two:abc123", "linux/arm64") == "envgen/two:abc123-arm64"
    assert platform_tag("localhost:5000/t/two:abc123", "linux/amd64") == "localhost:5000/t/two:abc123-amd64"
    other = "linux/arm64" if host_platform() == "linux/amd64" else "linux/amd64"
    assert gpu_tier_state(other).startswith(f"not run: no {other} GPU is lent")
    assert "first `envgen pull` or `envgen run` on a GPU host" in gpu_tier_state(host_platform())


def test_a_lock_without_the_other_platforms_set_is_refused_by_name(tmp_path: Path) -> None:
    from envgen.pipeline.platforms import refuse_split_lock
    from envgen.plan.lock_platforms import PlatformSet, format_block
    from envgen.plan.lockfile import read_lock
    from envgen.profile import load_profile

    root = Path(__file__).resolve().parents[2] / "profiles"
    for name in ("cpu-minimal.yaml", "cpu-minimal.lock.txt"):
        (tmp_path / name).write_text((root / name).read_text(encoding="utf-8"), encoding="utf-8")
    profile = load_profile(str(tmp_path / "cpu-minimal.yaml"))
    refuse_split_lock(profile, ["linux/amd64"])  # the lock's sections are linux/amd64's
    with pytest.raises(InputError, match=r"the lock cpu-minimal.lock.txt has no set for linux/arm64 \(it holds "
                                         r"linux/amd64\)") as caught:
        refuse_split_lock(profile, ["linux/amd64", "linux/arm64"])
    assert "envgen lock" in (caught.value.fix or "") and "--platform linux/arm64" in (caught.value.fix or "")
    lock = tmp_path / "cpu-minimal.lock.txt"
    amd64 = read_lock(lock)
    other = PlatformSet("linux/arm64", "cp311-manylinux_2_36_aarch64", amd64.environment, (NUMPY_ARM64,), "test")
    lock.write_text(lock.read_text(encoding="utf-8") + format_block(other), encoding="utf-8")
    # other wheels than amd64's (numpy's aarch64 one): rendered per platform (requirements.arm64.lock), not refused
    refuse_split_lock(profile, ["linux/amd64", "linux/arm64"])
