"""What `envgen build` seals into a validated image: the resolved package list must be one, never an error text
that the io.envgen.freeze-sha256 label would then vouch for (issue #23).

The engine's answers are recorded (tests/fixtures/seal/README.md): what `run_container` returned for
`python -m pip freeze --all` on this machine's engine, in an image envgen built and two children of it (one with
the leftover of an interrupted uninstall, which makes pip warn; one without pip). The replay stands in for the
engine only to keep this layer fast; tests/pipeline/test_pipeline_minimal.py runs the same freeze against the real
engine."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest

from envgen.docker.run import RunResult
from envgen.errors import BuildFailed
from envgen.pipeline import build
from envgen.pipeline.seal import image_time, seal_tar, sealed_files
from envgen.smoke.report import SmokeReport, sealed_verdict

SEAL = Path(__file__).resolve().parents[1] / "fixtures" / "seal"


def _engine_answers(monkeypatch: pytest.MonkeyPatch, recording: str) -> None:
    recorded = json.loads((SEAL / f"{recording}.json").read_text(encoding="utf-8"))

    def run_container(client: Any, image: str, command: Any, **_: Any) -> RunResult:
        assert list(command) == recorded["command"]
        return RunResult(recorded["exit_code"], recorded["output"])

    monkeypatch.setattr(build, "run_container", run_container)


def test_a_failed_freeze_is_an_error_not_a_sealed_list(monkeypatch: pytest.MonkeyPatch) -> None:
    _engine_answers(monkeypatch, "freeze-no-pip")
    with pytest.raises(BuildFailed) as err:
        build.freeze(None, "sha256:" + "ab" * 32)  # type: ignore[arg-type]
    line = err.value.one_line()
    assert "pip freeze" in line and "exit 1" in line and "No module named pip" in line
    assert "not sealed or tagged" in line


def test_a_freeze_is_sorted_without_pip_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    _engine_answers(monkeypatch, "freeze-warning")
    recorded = json.loads((SEAL / "freeze-warning.json").read_text(encoding="utf-8"))["output"]
    assert recorded.startswith("WARNING: Skipping /opt/env/lib/python3.11/site-packages/~ix-1.16.0.dist-info")
    frozen = build.freeze(None, "sha256:" + "ab" * 32)  # type: ignore[arg-type]
    assert frozen == "pip==23.0.1\nsetuptools==66.1.1\nsix==1.16.0\n"


def test_a_freeze_is_sorted_whatever_order_pip_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    """pip prints its list sorted; the seal does not rely on it. Input made here: the recorded lines reversed."""
    recorded = json.loads((SEAL / "freeze-warning.json").read_text(encoding="utf-8"))
    reversed_lines = "".join(reversed(recorded["output"].splitlines(keepends=True)))
    monkeypatch.setattr(build, "run_container", lambda *_a, **_k: RunResult(0, reversed_lines))
    assert build.freeze(None, "sha256:" + "ab" * 32) == "pip==23.0.1\nsetuptools==66.1.1\nsix==1.16.0\n"  # type: ignore[arg-type]


def test_the_freeze_without_warnings_is_the_same_list(monkeypatch: pytest.MonkeyPatch) -> None:
    _engine_answers(monkeypatch, "freeze-ok")
    frozen = build.freeze(None, "sha256:" + "ab" * 32)  # type: ignore[arg-type]
    assert frozen == json.loads((SEAL / "freeze-ok.json").read_text(encoding="utf-8"))["output"]


# --- the seal's bytes (issue #45): the same for the same verdict -------------------------------------------------

def _recorded_report(name: str) -> SmokeReport:
    return SmokeReport.from_dict(json.loads((SEAL / name).read_text(encoding="utf-8"))["report"])


def test_two_runs_of_the_probe_seal_the_same_bytes() -> None:
    """Two real runs (the validation records of two clean `envgen build cpu-smoke`, tests/fixtures/seal/README.md)
    differ in times, host, rates and losses; what the seal writes does not."""
    first, second = _recorded_report("record-cpu-smoke-1.json"), _recorded_report("record-cpu-smoke-2.json")
    assert first.raw != second.raw and first.raw["started"] != second.raw["started"]
    frozen = "numpy==1.23.5\n"
    assert sealed_files(first, frozen) == sealed_files(second, frozen)
    assert seal_tar(sealed_files(first, frozen), 1795470249) == seal_tar(sealed_files(second, frozen), 1795470249)


def test_the_sealed_verdict_is_a_report_without_times_host_or_figures() -> None:
    report = _recorded_report("record-cpu-smoke-1.json")
    text = sealed_files(report, "")["smoke-report.json"].decode()
    for absent in ("duration_s", "started", "hostname", "tflops", "losses", "log_tail", "cpu_count"):
        assert absent not in text, absent
    sealed = SmokeReport.from_json(text)  # still the schema every reader of a sealed report reads
    assert sealed.passed and sealed.tier == "cpu" and sealed.mode == "cpu-only" and sealed.profile == "cpu-smoke"
    assert [(c.name, c.status) for c in sealed.checks] == [(c.name, c.status) for c in report.checks]
    assert sealed.raw["frameworks"] == {"tensorflow": {"version": "2.12.0"}, "torch": {"version": "2.13.0+cpu"}}


def test_a_gpu_verdict_names_no_gpu_and_no_driver() -> None:
    """The recorded H200 run (docs/validation/2026-11-29-h200): the host's GPUs and driver stay in the record."""
    raw = json.loads((Path(__file__).resolve().parents[2] / "docs" / "validation" / "2026-11-29-h200" /
                      "probe-h200.json").read_text(encoding="utf-8"))
    verdict = sealed_verdict(raw)
    assert verdict["mode"] == "gpu" and "gpus" not in verdict and "driver" not in verdict
    assert SmokeReport.from_dict(verdict).passed


def test_the_seal_tar_has_fixed_times_owner_and_modes() -> None:
    with tarfile.open(fileobj=io.BytesIO(seal_tar({"b.txt": b"b", "a.txt": b"a"}, 1795470249))) as tar:
        members = [(m.name, m.type, m.mode, m.uid, m.gid, m.mtime) for m in tar.getmembers()]
    assert members == [("etc", tarfile.DIRTYPE, 0o755, 0, 0, 1795470249),
                       ("etc/envgen", tarfile.DIRTYPE, 0o755, 0, 0, 1795470249),
                       ("etc/envgen/a.txt", tarfile.REGTYPE, 0o644, 0, 0, 1795470249),
                       ("etc/envgen/b.txt", tarfile.REGTYPE, 0o644, 0, 0, 1795470249)]


@pytest.mark.parametrize(("created", "epoch"), [("2026-11-28T09:44:09Z", 1795859049),
                                                 ("2026-11-28T09:44:09.123456789Z", 1795859049),
                                                 ("not a time", 0)])
def test_the_seal_takes_the_images_creation_time(created: str, epoch: int) -> None:
    assert image_time(created) == epoch
