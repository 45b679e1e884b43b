"""Exit codes: one per kind of failure (documented in envgen/errors.py and the README), and the Docker SDK's own
errors mapped by their class, not by the name of their module."""

from __future__ import annotations

import pytest
import typer

from envgen import errors
from envgen.cli import handles_errors


def test_each_kind_of_failure_has_its_code() -> None:
    codes = {
        "check": errors.CheckFailed.exit_code, "input": errors.InputError.exit_code,
        "knowledge base": errors.KnowledgeBaseError.exit_code, "engine": errors.EngineError.exit_code,
        "build": errors.BuildFailed.exit_code, "smoke": errors.SmokeFailed.exit_code,
        "host": errors.HostIncompatible.exit_code, "registry": errors.RegistryError.exit_code,
    }
    assert codes == {"check": 1, "input": 2, "knowledge base": 3, "engine": 4, "build": 5, "smoke": 6, "host": 7,
                     "registry": 8}
    assert errors.GpuRequestRefused.exit_code == 4  # the engine's refusal; the pipeline raises HostIncompatible
    assert errors.DockerUnavailable.exit_code == 4 and errors.ImageNotValidated.exit_code == 6
    assert errors.ProfileError.exit_code == 2 and errors.BundleError.exit_code == 2


def test_a_docker_sdk_error_is_one_line_with_the_engines_code(capsys: pytest.CaptureFixture[str]) -> None:
    from docker.errors import APIError

    @handles_errors
    def refused() -> None:
        raise APIError("500 Server Error: Internal Server Error (\"conflict: unable to delete\")")

    with pytest.raises(typer.Exit) as done:
        refused()
    assert done.value.exit_code == 4
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: the Docker engine refused the request: 500 Server Error")

    @handles_errors
    def other() -> None:
        raise ValueError("not the engine's")

    with pytest.raises(ValueError):
        other()


def test_a_registry_refusal_exits_8_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """A registry's refusal had exit 1, the code of a failed check; it has its own now (README, "Exit codes")."""

    @handles_errors
    def pushed() -> None:
        raise errors.RegistryError("registry.example refused the push: denied", fix="docker login registry.example",
                                   cause="denied")

    with pytest.raises(typer.Exit) as done:
        pushed()
    assert done.value.exit_code == 8
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: registry.example refused the push: denied (fix: docker login registry.example)"]
