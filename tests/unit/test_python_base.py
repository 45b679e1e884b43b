"""A pip profile's Python is the base's own: asking for another one is an error (not a warning softened by an
unverified nvidia/cuda tag row: the Python is the OS's apt python3, read from the OS row), naming the base's
Python and the real ways out."""

from __future__ import annotations

from envgen.check import check_profile
from envgen.kb import load_kb
from envgen.profile.model import Profile


def _profile(base: str, python: str, **extra: object) -> Profile:
    return Profile.model_validate({"name": "u", "base": base, "installer": "pip", "python": python, **extra})


def test_cuda_base_without_the_python_is_an_error_with_ways_out() -> None:
    profile = _profile("nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04", "3.11", cuda="12.1",
                       frameworks={"pytorch": "2.2.2"})
    found = [f for f in check_profile(profile, load_kb()) if f.code == "python-base-mismatch"]
    assert found and found[0].severity == "error", found
    f = found[0]
    assert "3.10.12" in f.message and "ubuntu22.04" in f.source.replace(":", "") or "ubuntu:22.04" in f.source
    assert 'python: "3.10"' in f.fix and "installer: conda" in f.fix
    assert "debian:12" in f.fix or "debian:bookworm" in f.fix  # a base whose own Python is 3.11


def test_plain_base_mismatch_names_bases_that_have_it() -> None:
    profile = _profile("ubuntu:22.04", "3.12", gpu={"required": False})
    found = [f for f in check_profile(profile, load_kb()) if f.code == "python-base-mismatch"]
    assert found and found[0].severity == "error"
    assert "ubuntu:24.04" in found[0].fix
