"""CLI surface of issue 13's commands that need no engine: `load` refuses what is not a bundle
(before touching Docker), `export --format k8s|slurm` writes its files."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from envgen.cli import app


def test_load_rejects_a_non_bundle_in_one_line(tmp_path: Path) -> None:
    junk = tmp_path / "junk.envgen"
    junk.write_bytes(b"not a tar at all")
    result = CliRunner().invoke(app, ["load", str(junk)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "is not an envgen bundle" in lines[0] and "nothing was loaded" in lines[0]


def test_load_missing_file(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["load", str(tmp_path / "absent.envgen")])
    assert result.exit_code == 2 and "does not exist" in result.output


def test_export_k8s_and_slurm(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("ENVGEN_CONFIG", str(tmp_path / "config.yaml"))
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")  # no engine: tag, not digest
    (tmp_path / "config.yaml").write_text(f"state_dir: {tmp_path / 'state'}\n")
    runner = CliRunner()
    result = runner.invoke(app, ["export", "modern-a100", "--format", "k8s", "--gpus", "2", "-o", str(tmp_path / "k")])
    assert result.exit_code == 0, result.output
    assert "nvidia.com/gpu: 2" in (tmp_path / "k" / "modern-a100.job.yaml").read_text()
    result = runner.invoke(app, ["export", "cpu-minimal", "--format", "slurm", "-o", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "s").iterdir()) == ["cpu-minimal.def", "cpu-minimal.sbatch"]
