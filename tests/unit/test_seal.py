"""What `envgen build` seals into a validated image: the resolved package list must be one, never an error text
that the io.envgen.freeze-sha256 label would then vouch for (issue #23). The engine's answer is recorded: the
exit status and output `docker run IMAGE python -m pip freeze --all` gives."""

from __future__ import annotations

from typing import Any

import pytest

from envgen.docker.run import RunResult
from envgen.errors import BuildFailed
from envgen.pipeline import build


def _engine_answers(monkeypatch: pytest.MonkeyPatch, result: RunResult) -> None:
    def run_container(client: Any, image: str, command: Any, **_: Any) -> RunResult:
        assert list(command)[:4] == ["python", "-m", "pip", "freeze"]
        return result

    monkeypatch.setattr(build, "run_container", run_container)


def test_a_failed_freeze_is_an_error_not_a_sealed_list(monkeypatch: pytest.MonkeyPatch) -> None:
    _engine_answers(monkeypatch, RunResult(1, "/opt/env/bin/python: No module named pip\n"))
    with pytest.raises(BuildFailed) as err:
        build.freeze(None, "sha256:" + "ab" * 32)  # type: ignore[arg-type]
    line = err.value.one_line()
    assert "pip freeze" in line and "exit 1" in line and "No module named pip" in line
    assert "not sealed or tagged" in line


def test_a_freeze_is_sorted_without_pip_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    _engine_answers(monkeypatch, RunResult(0, "WARNING: something\nsix==1.16.0\nnumpy==1.26.4\n"))
    assert build.freeze(None, "sha256:" + "ab" * 32) == "numpy==1.26.4\nsix==1.16.0\n"  # type: ignore[arg-type]
