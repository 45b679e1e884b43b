"""`envgen init --from` tells a file's kind by its content and reads each kind for what it says: a Dockerfile and a
setup.py under any name, a dependency group before an extra of its name (PEP 735 include-group followed), conda
names with no PyPI distribution never moved to pip, one pip line per distribution (extras merged), invalid YAML at
its line. Each file is written here as a user would have it and adopted through the real command."""

from __future__ import annotations

from pathlib import Path

import yaml
from typer.testing import CliRunner

from envgen.cli import app


def _adopt(tmp_path: Path, name: str, text: str, *options: str) -> tuple[int, str, dict[str, object]]:
    source = tmp_path / name
    source.write_text(text, encoding="utf-8")
    out = tmp_path / "adopted.yaml"
    result = CliRunner().invoke(app, ["init", "--from", str(source), "-o", str(out), *options])
    data = yaml.safe_load(out.read_text(encoding="utf-8")) if out.exists() else {}
    return result.exit_code, result.output, data


def test_a_dockerfile_under_any_name_with_a_torch_find_links_page(tmp_path: Path) -> None:
    (tmp_path / "reqs").mkdir()
    (tmp_path / "reqs" / "base.txt").write_text("tqdm==4.66.4\n", encoding="utf-8")
    code, out, data = _adopt(tmp_path, "train.docker", (
        "ARG CUDA=11.1.1\nFROM nvidia/cuda:${CUDA}-cudnn8-devel-ubuntu18.04\n"
        "COPY reqs/base.txt /opt/base.txt\n"
        "RUN pip install torch==1.10.0 -f https://download.pytorch.org/whl/cu111/torch_stable.html\n"
        "RUN uv pip install --system -r /opt/base.txt && pip install -e ./mylib\n"))
    assert code == 0, out
    assert data["frameworks"] == {"pytorch": "1.10.0+cu111"} and data["cuda"] == "11.1"
    assert data["base"] == "nvidia/cuda:11.1.1-cudnn8-devel-ubuntu18.04"
    # tqdm read through COPY from the uv pip -r line; setuptools==59.5.0 added for torch 1.10 (package_breaks.yaml)
    assert data["packages"]["pip"] == ["tqdm==4.66.4", "setuptools==59.5.0"]
    assert "'./mylib' not taken: a local path" in out and "not a requirement (" not in out


def test_a_setup_py_under_another_name_is_read_not_run(tmp_path: Path) -> None:
    code, out, data = _adopt(tmp_path, "install_me", (
        "import setuptools\nraise SystemExit('never run')\nDEPS = ['numpy>=1.24', 'requests==2.32.3']\n"
        "setuptools.setup(name='demo', install_requires=DEPS,\n"
        "                 extras_require={'viz': ['matplotlib==3.9.0']})\n"), "--group", "viz")
    assert code == 0, out
    assert data["packages"]["pip"] == ["numpy>=1.24", "requests==2.32.3", "matplotlib==3.9.0"]
    assert "the project 'demo' is not installed" in out


def test_a_group_is_taken_before_the_extra_of_its_name_and_include_group_followed(tmp_path: Path) -> None:
    code, out, data = _adopt(tmp_path, "pyproject.toml", (
        "[project]\nname = 'app'\ndependencies = ['requests==2.32.3']\n"
        "[project.optional-dependencies]\ndev = ['black==24.4.2']\n"
        "[dependency-groups]\nlint = ['ruff==0.5.0']\ndev = ['pytest==8.2.2', {include-group = 'lint'}]\n"),
        "--group", "dev")
    assert code == 0, out
    assert data["packages"]["pip"] == ["requests==2.32.3", "pytest==8.2.2", "ruff==0.5.0"]
    assert "[dependency-groups] dev taken; the extra of the same name" in out
    text = (tmp_path / "adopted.yaml").read_text(encoding="utf-8")
    shown = str(tmp_path / "pyproject.toml")
    assert f'"pytest==8.2.2"  # {shown}:8' in text and f'"ruff==0.5.0"  # {shown}:7' in text  # the group's lines


def test_conda_names_without_a_pypi_distribution_stay_out_of_pip(tmp_path: Path) -> None:
    code, out, data = _adopt(tmp_path, "environment.yml", (
        "name: old\nchannels: [pytorch]\ndependencies:\n  - python=3.10\n  - pip=23.1\n  - pip\n  - cuda90\n"
        "  - jpeg\n  - zlib\n  - mkl\n  - tqdm\n"))
    assert code == 0, out
    assert data["packages"]["pip"] == ["mkl", "tqdm"]
    for name in ("cuda90", "jpeg", "zlib"):
        assert f"'{name}' not taken: a conda package with no PyPI distribution" in out
    assert "'pip=23.1' not taken" in out and "'pip' not taken" in out


def test_a_name_listed_twice_keeps_both_extras(tmp_path: Path) -> None:
    code, out, data = _adopt(tmp_path, "requirements.txt", "black==24.4.2\nblack[jupyter]\nrich\nrich==13.7.1\n")
    assert code == 0, out
    assert data["packages"]["pip"] == ["black[jupyter]==24.4.2", "rich==13.7.1"]


def test_invalid_yaml_is_reported_at_a_line_of_the_file(tmp_path: Path) -> None:
    code, out, _ = _adopt(tmp_path, "environment.yml", "name: x\ndependencies:\n  - [a\n")
    assert code == 2 and "environment.yml:3: invalid YAML" in out, out


def test_init_help_names_every_kind_of_source() -> None:
    out = " ".join(CliRunner().invoke(app, ["init", "--help"]).output.split())
    for kind in ("requirements.txt", "environment.yml", "pyproject.toml", "setup.py", "Dockerfile", "image",
                 "Python environment"):
        assert kind in out, kind


def test_dynamic_dependencies_name_the_file_they_come_from(tmp_path: Path) -> None:
    code, out, _ = _adopt(tmp_path, "pyproject.toml", (
        "[project]\nname = 'x'\ndynamic = ['dependencies', 'version']\n"
        "[tool.setuptools.dynamic]\ndependencies = {file = ['requirements.txt']}\n"))
    assert code == 0, out
    assert "pyproject.toml:3: 'dynamic = [\"dependencies\"]' not taken" in out
    assert "(envgen init --from requirements.txt)" in out and "the project 'x' is not installed" in out
