"""Host-side reading of probe reports: the recorded H200 runs, a fresh CPU run, and malformed input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envgen.errors import SmokeFailed
from envgen.smoke import SmokeReport, diagnose_text

VALIDATION = Path(__file__).resolve().parents[2] / "docs" / "validation" / "2026-11-29-h200"


def recorded(name: str) -> str:
    return (VALIDATION / name).read_text(encoding="utf-8")


def test_recorded_h200_pass() -> None:
    report = SmokeReport.from_json(recorded("probe-h200.json"))
    assert report.passed and report.status == "pass" and report.mode == "gpu"
    assert report.driver and report.driver.startswith("580.")
    assert report.gpus[0]["name"] == "NVIDIA H200"
    speed = report.check("torch.speed")
    assert speed is not None and speed.figures["bf16_tflops"] > 100
    assert report.counts()["fail"] == 0
    table = report.table()
    assert table.startswith("smoke PASS: profile device-here, gpu mode")
    assert "torch.speed" in table and "bf16_tflops=" in table


def test_recorded_h200_without_sm90_fails_with_diagnosis() -> None:
    report = SmokeReport.from_json(recorded("probe-h200-no-sm90.json"))
    assert not report.passed
    [failure] = report.failures
    assert failure.name == "torch.kernels"
    assert failure.diagnosis is not None and failure.diagnosis.id == "no-kernel-image"
    table = report.table()
    assert "cause: " in table and "fix:   " in table and "FAIL" in table


def test_fresh_cpu_run_parses(tmp_path) -> None:
    from test_probe_cli import run_probe_cli

    path = tmp_path / "cpu.json"
    path.write_text(json.dumps({"name": "cpu", "gpu": {"required": False}}))
    _code, data = run_probe_cli(tmp_path, "--expect", str(path))
    report = SmokeReport.from_dict(data)
    assert report.passed and report.mode == "cpu-only" and report.profile == "cpu"


def _minimal(**changes: object) -> dict:
    data: dict = {"schema": "envgen.smoke/1", "status": "pass", "mode": "cpu-only", "duration_s": 1.0,
                  "checks": [{"name": "python", "status": "pass", "message": "Python 3.11", "figures": {}}]}
    data.update(changes)
    return data


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("not json", "not JSON"),
        (json.dumps([1, 2]), "not a JSON object"),
        (json.dumps(_minimal(schema="envgen.smoke/0")), "schema"),
        (json.dumps(_minimal(status="maybe")), "'status'"),
        (json.dumps(_minimal(mode="tpu")), "'mode'"),
        (json.dumps(_minimal(checks=[])), "'checks'"),
        (json.dumps(_minimal(checks=[{"name": "x", "status": "odd", "message": ""}])), "status 'odd'"),
        (json.dumps(_minimal(checks=[{"name": "x", "status": "fail", "message": "m"}])), "check failed"),
        (json.dumps(_minimal(checks=[{"name": "x", "status": "pass", "message": "m",
                                      "diagnosis": {"id": 1}}])), "diagnosis"),
    ],
)
def test_malformed_reports_raise_smoke_failed(text: str, fragment: str) -> None:
    with pytest.raises(SmokeFailed) as caught:
        SmokeReport.from_json(text)
    assert fragment in caught.value.message
    assert caught.value.fix


def test_host_side_diagnosis_of_docker_errors() -> None:
    found = diagnose_text('docker: Error response from daemon: could not select device driver "" with '
                          "capabilities: [[gpu]].")
    assert found is not None and found.id == "nvidia-runtime-missing"
