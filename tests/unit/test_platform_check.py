"""`envgen check` per platform (issue #43): a GH200 profile (linux/arm64) whose torch release has no aarch64 CUDA
wheel on PyPI is an error naming the platform and the nearest releases that have one (platform_wheels.yaml, read
from the wheels); Jetson is refused with the reason; a profile of two platforms names the platform of every finding;
a lock without a block for one of the profile's platforms is a warning naming it."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from envgen.check import Finding, check_profile, findings_to_json, format_findings
from envgen.kb import KnowledgeBase
from envgen.profile import load_profile
from envgen.profile.model import Profile

ROOT = Path(__file__).resolve().parents[2]
GH200 = """\
name: gh200
base: debian:bookworm-slim
local_base: true
python: "3.11"
cuda: "{cuda}"
platforms: [linux/arm64]
frameworks:
  pytorch: "{torch}"
gpu:
  targets: [{gpu}]
"""


def gh200(tmp_path: Path, torch: str, cuda: str = "13.0", gpu: str = "GH200") -> Profile:
    path = tmp_path / "gh200.yaml"
    path.write_text(GH200.format(torch=torch, cuda=cuda, gpu=gpu), encoding="utf-8")
    return load_profile(str(path))


def coded(findings: list[Finding], code: str) -> list[Finding]:
    return [f for f in findings if f.code == code]


def test_gh200_torch_without_an_aarch64_cuda_wheel_is_an_error_with_what_exists(kb: KnowledgeBase,
                                                                                  tmp_path: Path) -> None:
    findings = check_profile(gh200(tmp_path, "2.10.0", cuda="12.8"), kb)
    bad = coded(findings, "platform-no-wheel")
    assert len(bad) == 1 and bad[0].severity == "error" and bad[0].platform == "linux/arm64", format_findings(findings)
    assert "torch==2.10.0" in bad[0].message and "not a CUDA build" in bad[0].message
    assert "torch/version.py" in bad[0].message  # how it is known: read from the aarch64 wheel
    assert "pin torch==2.11.0 for linux/arm64" in bad[0].fix and "2.11.0 (CUDA 13.0)" in bad[0].fix
    assert bad[0].source.startswith("platform_wheels.yaml#torch==2.10.0@linux/arm64: https://pypi.org/simple/torch/")
    assert "[platform-no-wheel] linux/arm64: torch==2.10.0" in format_findings(findings)


def test_gh200_torch_with_an_aarch64_cuda_wheel_passes_that_rule(kb: KnowledgeBase, tmp_path: Path) -> None:
    findings = check_profile(gh200(tmp_path, "2.11.0"), kb)
    assert coded(findings, "platform-no-wheel") == [], format_findings(findings)
    row = next(r for r in kb.platform_wheels if r.key == "torch==2.11.0@linux/arm64")
    assert row.cuda == "13.0" and row.wheel and "aarch64" in row.wheel and row.sha256 and len(row.sha256) == 64


def test_the_same_release_on_amd64_alone_is_not_judged_for_arm64(kb: KnowledgeBase, tmp_path: Path) -> None:
    path = tmp_path / "x86.yaml"
    path.write_text(GH200.format(torch="2.10.0", cuda="12.8", gpu="H100").replace(
        "platforms: [linux/arm64]", "platforms: [linux/amd64]").replace("name: gh200", "name: x86"), encoding="utf-8")
    findings = check_profile(load_profile(str(path)), kb)
    assert coded(findings, "platform-no-wheel") == []
    assert all(f.platform == "" and "platform" not in f.to_json() for f in findings)


@pytest.mark.parametrize("gpu", ["Jetson AGX Orin", "jetson orin nano"])
def test_jetson_is_refused_with_the_reason(kb: KnowledgeBase, tmp_path: Path, gpu: str) -> None:
    bad = coded(check_profile(gh200(tmp_path, "2.11.0", gpu=f'"{gpu}"'), kb), "gpu-refused")
    assert bad and bad[0].severity == "error" and "JetPack (L4T)" in bad[0].message
    assert "gpu_refusals.yaml#Jetson" in bad[0].source and "developer.nvidia.com/cuda-gpus" in bad[0].source


def test_gb10_is_a_known_gpu(kb: KnowledgeBase) -> None:
    model = kb.gpu("DGX Spark")
    assert model is not None and model.name == "GB10" and model.compute_capability == "12.1"


def test_two_platforms_name_the_platform_of_every_finding(kb: KnowledgeBase, tmp_path: Path) -> None:
    path = tmp_path / "both.yaml"
    text = (ROOT / "profiles" / "cpu-minimal.yaml").read_text(encoding="utf-8")
    path.write_text(text.replace("name: cpu-minimal", "name: both") + "platforms: [linux/amd64, linux/arm64]\n",
                    encoding="utf-8")
    findings = check_profile(load_profile(str(path)), kb)
    assert findings and all(f.platform for f in findings), format_findings(findings)
    assert all(item["platform"] for item in findings_to_json(findings))


def test_a_lock_without_the_arm64_set_is_named(kb: KnowledgeBase, tmp_path: Path) -> None:
    path = tmp_path / "both.yaml"
    text = (ROOT / "profiles" / "cpu-minimal.yaml").read_text(encoding="utf-8")
    path.write_text(text.replace("name: cpu-minimal", "name: both") + "platforms: [linux/amd64, linux/arm64]\n",
                    encoding="utf-8")
    shutil.copy(ROOT / "profiles" / "cpu-minimal.lock.txt", tmp_path / "both.lock.txt")  # an amd64 lock
    missing = coded(check_profile(load_profile(str(path)), kb), "lock-platform-missing")
    assert [f.platform for f in missing] == ["linux/arm64"] and "holds linux/amd64" in missing[0].message
    block = textwrap.dedent("""\
        # platform linux/arm64: target cp311-manylinux_2_36_aarch64; uv --python-platform aarch64-manylinux_2_36
        # platform linux/arm64 [environment]: 0 package(s)
        # platform linux/arm64 [extras]: 1 package(s)
        #   numpy==1.26.4 --hash=sha256:7ab55401287bfec946ced39700c053796e7cc0e3acbef09993a9ad2adba6ca6e
        """)
    with (tmp_path / "both.lock.txt").open("a", encoding="utf-8") as lock:
        lock.write(block)
    assert coded(check_profile(load_profile(str(path)), kb), "lock-platform-missing") == []


def test_show_names_what_each_platform_installs() -> None:
    from typer.testing import CliRunner

    from envgen.cli import app

    result = CliRunner().invoke(app, ["show", "gh200-pypi"])
    assert result.exit_code == 0, result.output
    line = next(x for x in result.output.splitlines() if x.startswith("# platform linux/arm64: torch==2.11.0"))
    assert "manylinux_2_28_aarch64.whl" in line and "CUDA 13.0" in line
    both = CliRunner().invoke(app, ["show", "cpu-minimal", "--platform", "linux/arm64"])
    assert "# platform linux/arm64: numpy==1.26.4: not in platform_wheels.yaml" in both.output
    plain = CliRunner().invoke(app, ["show", "cpu-minimal"])
    assert "# platform" not in plain.output  # a linux/amd64 profile shows as before
    bad = CliRunner().invoke(app, ["show", "cpu-minimal", "--platform", "linux/arm/v7"])
    assert bad.exit_code != 0 and "linux/amd64 or linux/arm64" in bad.output


def test_the_gh200_example_passes_and_its_older_torch_fails(kb: KnowledgeBase) -> None:
    profile = load_profile("gh200-pypi")
    assert profile.platforms == ["linux/arm64"]
    assert [f for f in check_profile(profile, kb) if f.severity == "error"] == []


def test_the_aarch64_build_has_no_kernel_for_an_older_gpu(kb: KnowledgeBase, tmp_path: Path) -> None:
    bad = coded(check_profile(gh200(tmp_path, "2.11.0", gpu="T4"), kb), "platform-no-kernel")
    assert bad and bad[0].platform == "linux/arm64" and "sm_75" in bad[0].message and "sm_80" in bad[0].message
    assert "read from the wheel's fat binaries: torch-2.11.0-" in bad[0].source and "aarch64" in bad[0].source
    for gpu in ("GH200", "GB200", "GB10"):  # 9.0 and 10.0 exact, 12.1 by sm_120 (same major, lower minor)
        assert coded(check_profile(gh200(tmp_path, "2.11.0", gpu=gpu), kb), "platform-no-kernel") == [], gpu
