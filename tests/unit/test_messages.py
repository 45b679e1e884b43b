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


def test_witness_keeps_a_pure_python_sdist_as_pip_installs_it() -> None:
    """TensorFlow 2.1 needs gast==0.2.2, which has only an sdist: pip builds it, so --resolve must not call it
    "no wheel" (recorded pylock entries: a wheel package, and gast's sdist)."""
    from envgen.errors import InputError
    from envgen.lock.lock_uv import choose_wheels, image_tags
    from envgen.lock.wheels import manylinux_platforms

    digest = "a" * 64
    pylock = {"packages": [
        {"name": "six", "version": "1.16.0",
         "wheels": [{"url": "https://files.example/six-1.16.0-py2.py3-none-any.whl", "hashes": {"sha256": digest}}]},
        {"name": "gast", "version": "0.2.2",
         "sdist": {"url": "https://files.example/gast-0.2.2.tar.gz", "hashes": {"sha256": "b" * 64}}}]}
    tags = image_tags("3.7", manylinux_platforms("2.27"))
    resolved = choose_wheels(pylock, tags, allow_sdist=True)
    assert resolved.sdists == ("gast==0.2.2",) and set(resolved.entries) == {"six", "gast"}
    with pytest.raises(InputError):  # a lock holds wheels only
        choose_wheels(pylock, tags)
