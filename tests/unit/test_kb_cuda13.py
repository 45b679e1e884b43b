"""CUDA 13.1/13.2 driver minimums: NVIDIA's GA runfiles bundle the driver they were released with
(cuda_13.1.0_590.44.01_linux.run, cuda_13.2.0_595.45.04_linux.run), so that driver runs the GA toolkit; 595.58.03
is the 13.2 Update 1 runfile's driver and must not be 13.2's minimum."""

from __future__ import annotations

import pytest

from envgen.check import HostSpec, check_profile
from envgen.kb import KnowledgeBase
from envgen.profile.model import Profile


def codes(kb: KnowledgeBase, base: str, cuda: str, driver: str) -> set[str]:
    profile = Profile.model_validate({"name": "t", "base": base, "installer": "pip", "python": "3.12", "cuda": cuda,
                                      "gpu": {"targets": ["A100"]}})
    return {f.code for f in check_profile(profile, kb, HostSpec(gpus=["A100"], driver=driver))}


@pytest.mark.parametrize(("version", "driver"), [("13.1", "590.44.01"), ("13.2", "595.45.04")])
def test_ga_runfile_driver_is_the_minimum(kb: KnowledgeBase, version: str, driver: str) -> None:
    row = kb.cuda(version)
    assert row is not None and row.driver_linux_min == driver


def test_cuda_132_ga_driver_is_enough(kb: KnowledgeBase) -> None:
    found = codes(kb, "nvidia/cuda:13.2.0-runtime-ubuntu24.04", "13.2", "595.45.04")
    assert not found & {"driver-too-old", "driver-minor-compat"}
    assert "driver-minor-compat" in codes(kb, "nvidia/cuda:13.2.0-runtime-ubuntu24.04", "13.2", "590.48.01")
