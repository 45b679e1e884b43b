"""Messages that said the wrong thing (issue 22): a driver branch, an empty reason, pip's failure called uv's."""

from __future__ import annotations

import pytest

from envgen.check.findings import parse_driver
from envgen.errors import InputError, ResolverUnavailable
from envgen.lock.witness import Platform, verdict

PY37 = Platform("3.7", "2.27", "CPython 3.7, x86_64-manylinux_2_27")
# pip 24's dry run (--only-binary :all: for another platform) when a pin has only an sdist
PIP_NO_WHEEL = ("ERROR: Could not find a version that satisfies the requirement gast==0.2.2 (from versions: none)\n"
                "ERROR: No matching distribution found for gast==0.2.2\n")


def test_driver_branch_is_named_as_a_branch() -> None:
    with pytest.raises(InputError) as info:
        parse_driver("550")
    assert "driver branch" in info.value.message and "digits and dots" not in info.value.message


def test_pip_resolution_failure_is_pips_and_gives_its_reason() -> None:
    [found] = verdict(1, "", PIP_NO_WHEEL, PY37, ["tensorflow==2.1.4"], resolver="pip")
    assert "uv" not in found.message
    assert "gast==0.2.2" in found.message and found.code == "resolve-no-wheel"
    [bare] = verdict(1, "", "", PY37, ["x==1"], resolver="pip")
    assert "pip exited 1" in bare.message


def test_unreachable_index_with_no_words_prints_no_empty_parentheses() -> None:
    with pytest.raises(ResolverUnavailable) as info:
        # pip reports the retries as WARNING lines, which the one-line reason leaves out
        verdict(1, "", "WARNING: Retrying (Retry(total=4)) after connection broken by 'NewConnectionError'\n",
                PY37, ["x==1"], resolver="pip")
    assert "()" not in info.value.message


def test_fixes_name_no_pip_wheels_for_cuda_10() -> None:
    """NVIDIA publishes nvidia-*-cu11 and later, no -cu10: a CUDA 10.1 TensorFlow without its libraries is told
    conda or a base image, not a wheel that does not exist."""
    from envgen.check import check_profile
    from envgen.kb import load_kb
    from envgen.profile.model import Profile

    profile = Profile.model_validate({"name": "tf21", "base": "ubuntu:18.04", "installer": "pip", "python": "3.6",
                                      "cuda": "10.1", "frameworks": {"tensorflow": "2.1.0"},
                                      "gpu": {"targets": ["GTX 1080"]}})
    found = [f for f in check_profile(profile, load_kb()) if f.code.startswith("tf-")]
    assert found, [f.code for f in check_profile(profile, load_kb())]
    assert not any("cu10" in f.fix for f in found), [f.fix for f in found]


def test_unknown_gpu_name_gets_did_you_mean() -> None:
    from envgen.check import HostSpec, check_profile
    from envgen.kb import load_kb
    from envgen.profile import load_profile

    found = [f for f in check_profile(load_profile("cpu-minimal"), load_kb(), HostSpec(gpus=["RTX4090"]))
             if f.code == "gpu-unknown"]
    assert found and "did you mean 'GeForce RTX 4090'" in found[0].fix
