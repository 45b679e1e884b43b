"""`envgen run` without Typer (envgen.cli.run): a plain line reaches the library with exactly the values the Typer
command gives it; every other line is left to Typer."""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

import envgen.pipeline.run as pipeline_run
from envgen.cli import app
from envgen.cli.run import fast, plain

PLAIN = [
    ["cpu-minimal"],
    ["cpu-minimal", "true"],
    ["cpu-minimal", "python", "train.py", "data/"],
    ["cpu-minimal", "--", "python", "-c", "print(1)"],
    ["cpu-minimal", "--"],
    ["envgen/cpu-minimal:f08fce149603", "--", "ls", "--", "-la"],
]


def _calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What envgen.pipeline.run.run is called with (recorded, then its real work skipped: no engine needed)."""
    calls: list[dict[str, Any]] = []

    def record(target: str, **kwargs: Any) -> int:
        calls.append({"target": target, "command": list(kwargs["command"] or []),
                      "env": kwargs["session"].env, "out": callable(kwargs["out"]),
                      **{k: kwargs.get(k) for k in ("gpus", "workdir", "force", "as_root")}})
        return 0

    monkeypatch.setattr(pipeline_run, "run", record)
    return calls


@pytest.mark.parametrize("argv", PLAIN)
def test_a_plain_line_runs_as_typer_runs_it(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> None:
    calls = _calls(monkeypatch)
    assert fast(argv) == 0
    result = CliRunner().invoke(app, ["run", *argv])
    assert result.exit_code == 0, result.output
    typer_call = calls.pop()
    assert calls == [typer_call]


@pytest.mark.parametrize("argv", [[], ["--help"], ["--force", "p"], ["p", "--gpus", "none"], ["p", "ls", "-la"],
                                  ["p", "--workdir=/x", "true"], ["-", "true"]])
def test_any_other_line_is_left_to_typer(argv: list[str]) -> None:
    assert plain(argv) is None
    assert fast(argv) is None


def test_a_library_error_is_one_line_and_its_code(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from envgen.errors import InputError

    def refuse(target: str, **kwargs: Any) -> int:
        raise InputError(f"{target!r} is neither an image on this engine nor a profile", fix="give a profile")

    monkeypatch.setattr(pipeline_run, "run", refuse)
    code = fast(["nothing-here", "true"])
    assert code is not None and code != 0
    assert capsys.readouterr().err.strip().startswith("error: 'nothing-here' is neither")
