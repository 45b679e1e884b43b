"""Doctor verdicts per machine of tests/fixtures/hosts and built-in profile, through envgen.check's rules (each
machine's source.txt says what was recorded there and what is borrowed or assembled: gtx950m-451-wsl2 is assembled
from two hosts)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envgen.host import RecordedProvider, collect
from envgen.host.doctor import SCHEMA, DoctorReport, doctor, host_spec
from envgen.host.report import format_report
from envgen.kb import load_kb
from envgen.profile import list_profiles, load_profile

HOSTS = Path(__file__).resolve().parents[1] / "fixtures" / "hosts"


@pytest.fixture(scope="module")
def kb():  # type: ignore[no-untyped-def]
    return load_kb()


@pytest.fixture(scope="module")
def profiles():  # type: ignore[no-untyped-def]
    return [load_profile(source.name) for source in list_profiles(env={})]


def report_for(machine: str, kb, profiles) -> DoctorReport:  # type: ignore[no-untyped-def]
    return doctor(collect(RecordedProvider(HOSTS / machine), kb), profiles, kb)


def verdicts(report: DoctorReport) -> dict[str, str]:
    return {v.profile: v.verdict for v in report.verdicts}


def codes(report: DoctorReport, profile: str) -> set[str]:
    return {r.code for v in report.verdicts if v.profile == profile for r in v.reasons}


@pytest.mark.parametrize("machine", ["gtx950m-418-linux", "gtx950m-451-wsl2"])
def test_950m(machine: str, kb, profiles) -> None:  # type: ignore[no-untyped-def]
    report = report_for(machine, kb, profiles)
    got = verdicts(report)
    # TF 2.1's wheel has sm_52 but no sm_50 cubins (read from its fat binaries): a GTX 950M JIT-compiles PTX
    assert got["legacy-maxwell"] == "runs-with-warning"
    if machine.endswith("wsl2"):  # WSL 2: Maxwell is outside NVIDIA's WSL support; 451.67 predates CUDA on WSL
        assert {"wsl-gpu-unsupported", "wsl-driver-too-old", "tf-arch-ptx-jit"} <= codes(report, "legacy-maxwell")
    else:
        assert codes(report, "legacy-maxwell") == {"tf-arch-ptx-jit"}
    assert got["modern-a100"] == "cannot-run"
    assert "driver-too-old" in codes(report, "modern-a100")
    assert got["ngc-tensorflow"] == "cannot-run"
    assert "ngc-gpu-too-old" in codes(report, "ngc-tensorflow")  # compute capability 5.0 < 6.0
    assert got["cpu-smoke"] == "runs" and got["cpu-minimal"] == "runs"


def test_950m_wsl2_uses_windows_driver_minimums(kb) -> None:  # type: ignore[no-untyped-def]
    facts = collect(RecordedProvider(HOSTS / "gtx950m-451-wsl2"), kb)
    spec = host_spec(facts, kb)
    assert (spec.platform, spec.driver, spec.gpus) == ("wsl2", "451.67", ["GeForce GTX 950M"])


def test_a100_525(kb, profiles) -> None:  # type: ignore[no-untyped-def]
    report = report_for("a100-525", kb, profiles)
    got = verdicts(report)
    assert got["modern-a100"] in ("runs", "runs-with-warning")
    # NGC 23.12 wants a 545 driver; 525 is a data-centre branch with forward compatibility: warn or refuse.
    assert got["ngc-tensorflow"] in ("runs-with-warning", "cannot-run")
    assert got["legacy-maxwell"] == "cannot-run"  # torch 1.7.1 cu101 has no sm_80 kernels


def test_h100_535(kb, profiles) -> None:  # type: ignore[no-untyped-def]
    got = verdicts(report_for("h100-535", kb, profiles))
    assert got["modern-a100"] in ("runs", "runs-with-warning")
    assert got["legacy-maxwell"] == "cannot-run"


def test_h200_580_no_docker_still_reports_the_gpu(kb, profiles) -> None:  # type: ignore[no-untyped-def]
    report = report_for("h200-580", kb, profiles)
    assert set(verdicts(report).values()) == {"cannot-run"}
    assert all("host-no-docker" in codes(report, p.name) for p in profiles)
    assert "torch-no-kernel" in codes(report, "legacy-maxwell")  # no kernel image for sm_90
    assert report.facts.gpus[0].name == "NVIDIA H200"


def test_no_gpu_machine(kb, profiles) -> None:  # type: ignore[no-untyped-def]
    report = report_for("nogpu-dev", kb, profiles)
    got = verdicts(report)
    assert got["cpu-smoke"] == "runs" and got["cpu-minimal"] == "runs"
    for name in ("legacy-maxwell", "modern-a100", "ngc-tensorflow"):
        assert got[name] == "cannot-run"
        assert {"host-no-gpu", "host-no-nvidia-runtime"} <= codes(report, name)


def test_json_schema(kb, profiles) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(json.dumps(report_for("gtx950m-418-linux", kb, profiles).to_json()))
    assert data["schema"] == SCHEMA == "envgen.doctor/1"
    assert data["host"]["driver"] == "418.87.00"
    assert {p["profile"] for p in data["profiles"]} == {p.name for p in profiles}
    for entry in data["profiles"]:
        assert entry["verdict"] in ("runs", "runs-with-warning", "cannot-run")
        for reason in entry["reasons"]:
            assert set(reason) == {"severity", "code", "message", "fix", "source"}


def test_text_report(kb, profiles) -> None:  # type: ignore[no-untyped-def]
    text = format_report(report_for("nogpu-dev", kb, profiles))
    assert "Docker engine:   20.10.24+dfsg1" in text
    assert "GPUs:            none" in text
    assert "PROFILE" in text and "cannot run" in text and "nvidia-ctk runtime configure" in text


def test_recorded_h200_doctor_json_matches_its_raw_outputs(kb, profiles) -> None:  # type: ignore[no-untyped-def]
    """tests/fixtures/hosts/h200-580/doctor.json, recorded on the GPU machine, agrees with what the
    doctor computes here from the raw outputs recorded beside it."""
    data = json.loads((HOSTS / "h200-580" / "doctor.json").read_text(encoding="utf-8"))
    assert data["schema"] == SCHEMA
    here = json.loads(json.dumps(report_for("h200-580", kb, profiles).to_json()))
    assert data["host"]["gpus"] == here["host"]["gpus"]
    assert data["host"]["driver"] == here["host"]["driver"]
    assert data["host"]["docker"]["reachable"] is False
    # the profiles recorded there (a built-in profile added since has no recorded verdict)
    recorded_verdicts = {p["profile"]: p["verdict"] for p in data["profiles"]}
    here_verdicts = {p["profile"]: p["verdict"] for p in here["profiles"] if p["profile"] in recorded_verdicts}
    assert recorded_verdicts and recorded_verdicts == here_verdicts
