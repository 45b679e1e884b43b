"""The run-time gate and the translation of the engine's GPU errors (real error strings)."""

from __future__ import annotations

from pathlib import Path

import pytest

from envgen.errors import HostIncompatible
from envgen.host import RecordedProvider, collect
from envgen.host.gate import gate, translate_engine_error
from envgen.kb import load_kb
from envgen.profile import load_profile

HOSTS = Path(__file__).resolve().parents[1] / "fixtures" / "hosts"

# https://github.com/NVIDIA/nvidia-docker/issues/1352 (Windows 10, driver 451.67), kept in the fixture
NO_DRIVER = (HOSTS / "gtx950m-451-wsl2" / "docker-run-error.txt").read_text(encoding="utf-8")
# nvidia-container-toolkit's refusal when the driver is too old for the image's CUDA, as quoted in public
# GitHub code (search index file id 70994951612)
CUDA_TOO_NEW = (
    "error running hook #0: nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, "
    "please update your driver to a newer version, or use an earlier cuda container: unknown"
)
# The old toolkit's wording, https://github.com/NVIDIA/nvidia-docker/issues/688 (title)
CUDA_TOO_NEW_OLD = "nnvidia-container-cli: requirement error: unsatisfied condition: cuda >= 9.0"
UNKNOWN_RUNTIME = "docker: Error response from daemon: Unknown runtime specified nvidia."


@pytest.fixture(scope="module")
def kb():  # type: ignore[no-untyped-def]
    return load_kb()


def facts(machine: str, kb):  # type: ignore[no-untyped-def]
    return collect(RecordedProvider(HOSTS / machine), kb)


def test_gate_passes_a_compatible_host(kb) -> None:  # type: ignore[no-untyped-def]
    verdict = gate(facts("gtx950m-418-linux", kb), load_profile("legacy-maxwell"), kb)
    # the only reason: TF 2.1's wheel has no sm_50 cubin, so the GTX 950M JIT-compiles PTX (a warning)
    assert verdict.verdict == "runs-with-warning"
    assert {r.code for r in verdict.reasons} == {"tf-arch-ptx-jit"}


def test_gate_returns_warnings(kb) -> None:  # type: ignore[no-untyped-def]
    verdict = gate(facts("a100-525", kb), load_profile("ngc-tensorflow"), kb)
    assert verdict.verdict == "runs-with-warning"
    assert verdict.reasons and verdict.reasons[0].severity == "warning"


def test_gate_refuses_old_driver_with_reason_and_fix(kb) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(HostIncompatible) as caught:
        gate(facts("gtx950m-418-linux", kb), load_profile("modern-a100"), kb)
    error = caught.value
    assert error.message.startswith("modern-a100 cannot run on this host: ")
    assert "418.87" in error.message
    assert error.fix


def test_gate_refuses_gpu_profile_without_gpu_or_runtime(kb) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(HostIncompatible) as caught:
        gate(facts("nogpu-dev", kb), load_profile("legacy-maxwell"), kb)
    assert "none found here" in caught.value.message
    assert "nvidia-ctk runtime configure" in (caught.value.fix or "")


def test_gate_refuses_without_docker(kb) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(HostIncompatible) as caught:
        gate(facts("h200-580", kb), load_profile("cpu-smoke"), kb)
    assert "no Docker engine reachable" in caught.value.message


def test_gate_cpu_profile_on_no_gpu_machine(kb) -> None:  # type: ignore[no-untyped-def]
    assert gate(facts("nogpu-dev", kb), load_profile("cpu-smoke"), kb).verdict == "runs"


def test_translate_no_device_driver() -> None:
    error = translate_engine_error(NO_DRIVER)
    assert isinstance(error, HostIncompatible)
    assert "cannot hand GPUs to containers" in error.message
    assert "nvidia-ctk runtime configure" in (error.fix or "")


def test_translate_unknown_runtime() -> None:
    error = translate_engine_error(UNKNOWN_RUNTIME)
    assert error is not None and "NVIDIA Container Toolkit" in error.message


def test_translate_cuda_requirement_with_kb(kb) -> None:  # type: ignore[no-untyped-def]
    error = translate_engine_error(CUDA_TOO_NEW, kb)
    assert error is not None
    assert "supports CUDA 12.4" in error.message
    row = kb.cuda("12.4")
    if row is not None:
        assert row.driver_linux_min in (error.fix or "")


def test_translate_cuda_requirement_old_wording() -> None:
    error = translate_engine_error(CUDA_TOO_NEW_OLD)
    assert error is not None and "CUDA 9.0" in error.message and error.fix


def test_translate_leaves_other_errors() -> None:
    assert translate_engine_error("docker: Error response from daemon: pull access denied for x") is None
