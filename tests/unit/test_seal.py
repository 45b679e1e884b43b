"""What `envgen build` seals into a validated image: the resolved package list must be one, never an error text
that the io.envgen.freeze-sha256 label would then vouch for (issue #23).

The engine's answers are recorded (tests/fixtures/seal/README.md): what `run_container` returned for
`python -m pip freeze --all` on this machine's engine, in an image envgen built and two children of it (one with
the leftover of an interrupted uninstall, which makes pip warn; one without pip). The replay stands in for the
engine only to keep this layer fast; tests/pipeline/test_pipeline_minimal.py runs the same freeze against the real
engine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from envgen.docker.run import RunResult
from envgen.errors import BuildFailed
from envgen.pipeline import build

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
