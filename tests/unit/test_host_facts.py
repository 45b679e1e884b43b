"""Host facts from the machines of tests/fixtures/hosts (RecordedProvider; each source.txt says which files were
recorded there and which are borrowed or assembled) and from this machine for real (RealProvider)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from envgen.host import RealProvider, RecordedProvider, collect
from envgen.host.collect import name_candidates
from envgen.host.facts import run_command
from envgen.kb import load_kb

HOSTS = Path(__file__).resolve().parents[1] / "fixtures" / "hosts"
MACHINES = ("gtx950m-418-linux", "gtx950m-451-wsl2", "a100-525", "h100-535", "h200-580", "nogpu-dev")


@pytest.fixture(scope="module")
def kb():  # type: ignore[no-untyped-def]
    return load_kb()


def machine(name: str) -> RecordedProvider:
    return RecordedProvider(HOSTS / name)


def test_every_machine_says_where_its_outputs_come_from() -> None:
    for name in MACHINES:
        assert (HOSTS / name / "source.txt").is_file(), name


def test_h200_prefers_nvml(kb) -> None:  # type: ignore[no-untyped-def]
    facts = collect(machine("h200-580"), kb)
    assert facts.gpu_source == "nvml"
    assert facts.driver == "580.159.04" and facts.cuda_driver_api == "13.0"
    assert [(g.name, g.compute_capability, g.memory_mib, g.cc_source) for g in facts.gpus] == [
        ("NVIDIA H200", "9.0", 143771, "nvml")
    ]
    assert not facts.docker.reachable and "command not found" in (facts.docker.error or "")
    assert facts.nvidia_runtime.status == "unknown"
    assert not facts.wsl and facts.platform == "linux"


def test_h200_falls_back_to_nvidia_smi(tmp_path: Path, kb) -> None:  # type: ignore[no-untyped-def]
    # Without NVML, then without --query-gpu: the same GPU from -q (compute capability from the KB).
    for name in ("nvidia-smi-q.txt", "nvidia-smi.txt", "proc-version.txt", "query-gpu.csv"):
        shutil.copy(HOSTS / "h200-580" / name, tmp_path / name)
    facts = collect(RecordedProvider(tmp_path), kb)
    assert facts.gpu_source == "nvidia-smi --query-gpu"
    assert facts.gpus[0].compute_capability == "9.0" and facts.gpus[0].cc_source == "nvidia-smi"
    (tmp_path / "query-gpu.csv").unlink()
    facts = collect(RecordedProvider(tmp_path), kb)
    assert facts.gpu_source == "nvidia-smi -q"
    assert (facts.gpus[0].compute_capability, facts.gpus[0].cc_source) == ("9.0", "kb")
    assert facts.cuda_driver_api == "13.0"


def test_950m_linux_table_only(kb) -> None:  # type: ignore[no-untyped-def]
    facts = collect(machine("gtx950m-418-linux"), kb)
    assert facts.gpu_source == "nvidia-smi"
    assert facts.driver == "418.87.00" and facts.cuda_driver_api == "10.1"
    assert [(g.name, g.compute_capability, g.cc_source) for g in facts.gpus] == [
        ("GeForce GTX 950M", "5.0", "kb")
    ]
    assert facts.docker.reachable and facts.docker.buildkit is True
    assert facts.nvidia_runtime.status == "registered"


def test_950m_wsl2(kb) -> None:  # type: ignore[no-untyped-def]
    facts = collect(machine("gtx950m-451-wsl2"), kb)
    assert facts.wsl and facts.platform == "wsl2"
    assert facts.driver == "451.67"
    assert facts.docker.server_version == "29.6.2" and facts.docker.operating_system == "Docker Desktop"


def test_a100_truncated_name_resolved_by_prefix(kb) -> None:  # type: ignore[no-untyped-def]
    facts = collect(machine("a100-525"), kb)
    assert [g.compute_capability for g in facts.gpus] == ["8.0", "8.0"]
    assert "A100" in name_candidates("NVIDIA A100-SXM...")


def test_unknown_gpu_without_kb_is_said() -> None:
    facts = collect(machine("gtx950m-418-linux"))
    assert facts.gpus[0].compute_capability is None
    assert any("compute capability" in note for note in facts.notes)


def test_no_gpu_machine(kb) -> None:  # type: ignore[no-untyped-def]
    facts = collect(machine("nogpu-dev"), kb)
    assert facts.gpus == () and facts.driver is None
    assert "nvidia-smi: command not found" in (facts.gpu_error or "")
    assert facts.docker.reachable and facts.docker.server_version == "20.10.24+dfsg1"
    assert facts.docker.buildkit is True  # engine >= 18.09, no builder recorded
    assert facts.nvidia_runtime.status == "missing"


def test_cdi_and_hook_detection(tmp_path: Path) -> None:
    shutil.copy(HOSTS / "nogpu-dev" / "docker-info.json", tmp_path / "docker-info.json")
    (tmp_path / "nvidia-hook.txt").write_text("/usr/bin/nvidia-container-runtime-hook\n")
    assert collect(RecordedProvider(tmp_path)).nvidia_runtime.status == "hook"
    (tmp_path / "cdi").mkdir()
    (tmp_path / "cdi" / "nvidia.yaml").write_text("cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices: []\n")
    facts = collect(RecordedProvider(tmp_path))
    # the hook decides the runtime; the spec is read, but Docker 20.10 reads no CDI specs, and this one
    # declares no device: CDI is no route here
    assert facts.nvidia_runtime.status == "hook" and facts.gpu_access.route == "runtime"
    assert facts.cdi.specs[0].kind == "nvidia.com/gpu" and not facts.cdi.enabled and not facts.gpu_access.cdi_ok


def test_builder_recorded_overrides_engine_version(tmp_path: Path) -> None:
    shutil.copy(HOSTS / "nogpu-dev" / "docker-info.json", tmp_path / "docker-info.json")
    (tmp_path / "builder.txt").write_text("classic\n")
    docker = collect(RecordedProvider(tmp_path)).docker
    assert (docker.builder, docker.buildkit) == ("classic", False)


def test_facts_are_json() -> None:
    facts = collect(machine("h200-580"))
    data = json.loads(json.dumps(facts.to_json()))
    assert data["gpus"][0]["name"] == "NVIDIA H200" and data["platform"] == "linux"


def test_recorded_provider_needs_a_directory(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        RecordedProvider(tmp_path / "absent")


# --- this machine, for real: no GPU, no nvidia-smi; Docker as scripts/host-setup left it ------------------

def test_real_provider_on_this_machine(kb) -> None:  # type: ignore[no-untyped-def]
    facts = collect(RealProvider(), kb)
    if shutil.which("nvidia-smi") is None:
        assert facts.gpus == () and "nvidia-smi" in (facts.gpu_error or "")
    if facts.docker.reachable:
        assert facts.docker.server_version
    else:
        assert facts.docker.error  # one sentence saying why
    assert facts.wsl is False


def test_real_provider_without_docker_or_nvidia_smi_on_path(kb) -> None:  # type: ignore[no-untyped-def]
    provider = RealProvider(env={})
    probe = run_command(["envgen-no-such-command-xyz"])
    assert probe.output is None and probe.error == "envgen-no-such-command-xyz: command not found"
    assert provider.nvidia_hook() in (None, shutil.which("nvidia-container-runtime-hook"),
                                      shutil.which("nvidia-container-toolkit"))


def test_run_command_timeout_and_failure() -> None:
    assert "did not answer" in (run_command(["sleep", "5"], timeout_s=0.2).error or "")
    assert run_command(["sh", "-c", "echo boom >&2; exit 3"]).error == "sh: boom"
