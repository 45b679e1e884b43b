"""Regressions from the compatibility-check review: each test failed before its fix."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from envgen.check import Finding, HostSpec, check_profile, format_findings
from envgen.check.findings import parse_driver
from envgen.errors import InputError
from envgen.kb import KnowledgeBase
from envgen.plan.image import plan_image
from envgen.plan.packages import cudnn_sources
from envgen.profile import Profile, load_profile
from envgen.profile.loader import deep_merge


def pip_profile(**changes: Any) -> Profile:
    """A pip profile on an nvidia/cuda base (CUDA 11.8, Python 3.10 of ubuntu22.04), no cudnn field."""
    data: dict[str, Any] = {
        "name": "review",
        "base": "nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04",
        "installer": "pip",
        "cuda": "11.8",
        "python": "3.10",
    }
    return Profile.model_validate(deep_merge(data, changes))


def variant(name: str, **changes: Any) -> Profile:
    base = load_profile(name).model_dump(mode="json", exclude={"extends"})
    return Profile.model_validate(deep_merge(base, changes))


def codes(findings: list[Finding], severity: str | None = None) -> set[str]:
    return {f.code for f in findings if severity is None or f.severity == severity}


# 1. a cuDNN known only by its major (from the image tag) is "minor unknown", not "too old"


def test_major_only_cudnn_from_tag_is_a_warning_not_an_error(kb: KnowledgeBase) -> None:
    findings = check_profile(pip_profile(frameworks={"tensorflow": "2.12.0"}), kb)
    assert "tf-cudnn-too-old" not in codes(findings), format_findings(findings)
    assert codes(findings, "error") == set(), format_findings(findings)
    vague = [f for f in findings if f.code == "tf-cudnn-minor-unknown"]
    assert vague and vague[0].severity == "warning"
    assert "cannot be told from the tag" in vague[0].message and "cuDNN 8 " in vague[0].message
    assert "`cudnn:" in vague[0].fix and vague[0].source.startswith("tensorflow.yaml#2.12")


def test_stated_cudnn_minor_settles_it_either_way(kb: KnowledgeBase) -> None:
    good = check_profile(pip_profile(cudnn="8.9", frameworks={"tensorflow": "2.12.0"}), kb)
    assert not codes(good) & {"tf-cudnn-minor-unknown", "tf-cudnn-too-old"}, format_findings(good)
    old = check_profile(pip_profile(cudnn="8.1", frameworks={"tensorflow": "2.12.0"}), kb)
    assert "tf-cudnn-too-old" in codes(old, "error"), format_findings(old)


def test_major_only_cuda_source_is_not_an_older_minor(kb: KnowledgeBase) -> None:
    profile = variant("modern-a100", packages={"conda": ["cudatoolkit=11"]})
    assert "tf-cuda-older-minor" not in codes(check_profile(profile, kb))


def test_release_numbers_compare_like_pip(kb: KnowledgeBase) -> None:
    # "2.1" is 2.1.0 for pip: neither a torchaudio mismatch nor an NGC framework difference
    torch = variant("modern-a100", frameworks={"pytorch": "2.1.0+cu118", "torchvision": "0.16.0", "torchaudio": "2.1"})
    assert "torchaudio-mismatch" not in codes(check_profile(torch, kb))
    ngc = variant("ngc-tensorflow", frameworks={"tensorflow": "2.14"})
    assert "ngc-framework-differs" not in codes(check_profile(ngc, kb))


# 2. a bare -cudnn- tag (CUDA >= 12.4) carries cuDNN 9


def test_bare_cudnn_tag_is_cudnn9(kb: KnowledgeBase) -> None:
    profile = pip_profile(base="nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04", cuda="12.4", cudnn="9.1")
    findings = check_profile(profile, kb)
    assert "base-no-cudnn" not in codes(findings), format_findings(findings)
    sources = cudnn_sources(profile, kb, profile.pip_pins)
    assert [(s.version, s.cuda_major) for s in sources] == [("9.1", 12)]
    unstated = pip_profile(base="nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04", cuda="12.4")
    assert [s.version for s in cudnn_sources(unstated, kb, unstated.pip_pins)] == ["9"]
    cudnn8 = pip_profile(base="nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04", cuda="12.4", cudnn="8.9")
    assert "base-cudnn-mismatch" in codes(check_profile(cudnn8, kb), "error")


# 3. a GPU profile with a CPU build of torch


def test_gpu_profile_with_cpu_torch_is_an_error(kb: KnowledgeBase) -> None:
    profile = pip_profile(frameworks={"pytorch": "2.1.2+cpu"}, gpu={"targets": ["A100"]})
    bad = [f for f in check_profile(profile, kb) if f.code == "torch-cpu-build"]
    assert bad and bad[0].severity == "error", format_findings(check_profile(profile, kb))
    assert "2.1.2+cpu" in bad[0].message and '"2.1.2+cu118"' in bad[0].fix
    assert bad[0].source.startswith("pytorch.yaml#2.1.2+cpu")
    cpu_only = variant("cpu-smoke")
    assert "torch-cpu-build" not in codes(check_profile(cpu_only, kb))


# 4. torchvision/torchaudio +tag must be the torch variant's tag


def test_companion_tag_must_match_torch_variant(kb: KnowledgeBase) -> None:
    profile = pip_profile(frameworks={"pytorch": "2.1.2", "torchvision": "0.16.2+cu121"})
    assert plan_image(profile, kb).pip[:2] == ["torch==2.1.2+cu118", "torchvision==0.16.2+cu121"]
    bad = [f for f in check_profile(profile, kb) if f.code == "torchvision-variant-mismatch"]
    assert bad and bad[0].severity == "error"
    assert "+cu121" in bad[0].message and "2.1.2+cu118" in bad[0].message
    assert '"0.16.2"' in bad[0].fix and "0.16.2+cu118" in bad[0].fix
    audio = pip_profile(frameworks={"pytorch": "2.1.2", "torchaudio": "2.1.2+cpu"})
    assert "torchaudio-variant-mismatch" in codes(check_profile(audio, kb), "error")
    same = pip_profile(frameworks={"pytorch": "2.1.2", "torchvision": "0.16.2+cu118", "torchaudio": "2.1.2+cu118"})
    assert not {c for c in codes(check_profile(same, kb)) if "variant" in c}


def test_old_torchaudio_has_no_tagged_builds(kb: KnowledgeBase) -> None:
    profile = variant("legacy-maxwell", frameworks={"torchaudio": "0.7.2+cu101"})
    bad = [f for f in check_profile(profile, kb) if f.code == "torchaudio-variant-mismatch"]
    assert bad and "0.8" in bad[0].message and '"0.7.2"' in bad[0].fix


# 5. a bare digit run is a compute capability only when plausible


def test_gpu_model_numbers_are_not_compute_capabilities(kb: KnowledgeBase) -> None:
    findings = check_profile(pip_profile(), kb, HostSpec(gpus=["4090", "1080"]))
    text = format_findings(findings)
    assert "409.0" not in text and "108.0" not in text and "sm_4090" not in text, text


# 6. a driver that is not a version is an input error, not a fabricated driver-too-old


@pytest.mark.parametrize("value", ["latest", "535.x", "", "535", "v535.104.05", "535.104.05.1.2"])
def test_bad_driver_is_an_input_error(value: str) -> None:
    with pytest.raises(InputError) as info:
        HostSpec(gpus=["A100"], driver=value)
    assert info.value.exit_code == 2
    assert "--driver" in info.value.message and repr(value) in info.value.message
    assert "535.104.05" in info.value.message


def test_good_driver_is_kept() -> None:
    assert HostSpec(driver=" 535.104.05 ").driver == "535.104.05"
    assert HostSpec(driver="418.87").driver == "418.87" and HostSpec().driver is None
    assert parse_driver(None) is None


def test_parse_driver_names_the_option() -> None:
    with pytest.raises(InputError, match="--host-driver"):
        parse_driver("latest", "--host-driver")


def test_cli_driver_latest_exits_2() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "envgen", "check", "modern-a100", "--driver", "latest", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert "driver-too-old" not in result.stdout
    assert "--driver" in result.stderr and "'latest'" in result.stderr and "535.104.05" in result.stderr
    assert result.stdout.strip() == ""
