"""A Python environment on this host: `envgen init --from PATH` adopts a venv (its interpreter's version, every
installed distribution at its version), and `envgen doctor --python PATH` runs the probe's library tier with that
interpreter and judges the adopted stack against this host. Real venvs, made here with `python -m venv`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml
from typer.testing import CliRunner

from envgen.cli import app


def _venv(where: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    return where


def test_init_from_a_venv_pins_what_it_holds(tmp_path: Path) -> None:
    out = tmp_path / "here.yaml"
    result = CliRunner().invoke(app, ["init", "--from", sys.prefix, "-o", str(out)])
    assert result.exit_code == 0, result.output
    data = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert data["python"] == f"{sys.version_info[0]}.{sys.version_info[1]}"
    import typer

    assert f"typer=={typer.__version__}" in data["packages"]["pip"]
    assert all(line.count("==") == 1 for line in data["packages"]["pip"])  # every one pinned at its version


def test_init_from_a_venv_reads_it_without_this_shells_pythonpath(tmp_path: Path, monkeypatch) -> None:
    """Found on the H200 (docs/validation/2026-12-04-h200-adopt): envgen ran from a PYTHONPATH folder, and the venv
    read with that PYTHONPATH gained envgen's own 8 dependencies, which the image's venv does not hold. The image's
    interpreter runs without this shell's PYTHONPATH: the environment is read without it, and the note says so."""
    import typer

    env = _venv(tmp_path / "env")
    extra = tmp_path / "elsewhere"
    extra.mkdir()
    dist = Path(typer.__file__).parent.parent / f"typer-{typer.__version__}.dist-info"
    subprocess.run(["cp", "-r", str(dist), str(extra)], check=True)
    monkeypatch.setenv("PYTHONPATH", str(extra))
    assert "typer" in subprocess.run([str(env / "bin" / "python"), "-c", "import importlib.metadata as m; "
                                      "print([d.metadata['Name'] for d in m.distributions()])"],
                                     capture_output=True, text=True, check=True).stdout  # the folder is seen there
    out = tmp_path / "adopted.yaml"
    result = CliRunner().invoke(app, ["init", "--from", str(env), "-o", str(out)])
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert "typer==" not in text
    assert f"read without PYTHONPATH={extra} (set in this shell, not in the image)" in text


def test_doctor_python_runs_the_probe_with_that_interpreter_and_checks_the_stack(tmp_path: Path) -> None:
    env = _venv(tmp_path / "env")
    result = CliRunner().invoke(app, ["doctor", "--python", str(env)])
    assert result.exit_code == 0, result.output
    assert f"environment: {env}/bin/python" in result.output
    assert "what it loads (the probe's library tier" in result.output and "libraries.frameworks" in result.output
    assert "its stack against this host (envgen check)" in result.output


def test_doctor_python_refuses_what_is_no_environment(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["doctor", "--python", str(tmp_path)])
    assert result.exit_code == 2 and "no bin/python (not a venv or conda env)" in result.output


def test_doctor_python_judges_kernels_for_the_gpus_it_names(tmp_path: Path) -> None:
    """Issue 38: `doctor --python` on a host whose GPU it names said "SKIPPED no GPU targets": the probe was given
    none. The host's GPUs are now the probe's targets (here given as the doctor would read them)."""
    from envgen.kb import load_kb
    from envgen.suggest.adopt.doctor import doctor_python

    env = _venv(tmp_path / "env")
    kb = load_kb()
    named = {c.name: c.message for c in doctor_python(env, kb, ("H200",), "580.65.06").probe.checks}
    assert named["libraries.arch"] == "no CUDA framework with a compiled architecture list to judge for H200", named
    bare = {c.name: c.message for c in doctor_python(env, kb, (), None).probe.checks}
    assert bare["libraries.arch"] == "no GPU targets given", bare
