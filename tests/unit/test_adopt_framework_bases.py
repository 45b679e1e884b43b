"""`envgen init --from` a Dockerfile on an official framework base (issue #38): the tag's torch release and CUDA
build go into the profile through envgen/suggest/adopt/framework_bases.yaml (the image's tag grammar, from the file
that makes the tags), unless the file installs another torch itself."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from envgen.cli import app
from envgen.suggest.adopt.framework_bases import _rows


def _adopt(tmp_path: Path, dockerfile: str) -> tuple[int, str, dict[str, object]]:
    source = tmp_path / "Dockerfile"
    source.write_text(dockerfile, encoding="utf-8")
    out = tmp_path / "adopted.yaml"
    result = CliRunner().invoke(app, ["init", "--from", str(source), "-o", str(out)])
    data = yaml.safe_load(out.read_text(encoding="utf-8")) if out.exists() else {}
    return result.exit_code, result.output, data


def test_every_row_is_a_tag_grammar_with_its_source() -> None:
    rows = _rows()
    assert rows
    for row in rows:
        assert {"version", "cuda"} <= set(re.compile(row.tag).groupindex), row.image
        assert row.source.startswith("https://"), row.image


@pytest.mark.parametrize("image", ["pytorch/pytorch:2.1.2-cuda12.1-cudnn8-runtime",
                                   "docker.io/pytorch/pytorch:2.1.2-cuda12.1-cudnn8-devel"])
def test_the_tags_torch_and_cuda_are_taken(tmp_path: Path, image: str) -> None:
    code, output, data = _adopt(tmp_path, f"FROM {image}\nRUN pip install einops==0.7.0\n")
    assert code == 0, output[-2000:]
    assert data["frameworks"] == {"pytorch": "2.1.2+cu121"}
    assert data["cuda"] == "12.1"
    assert data["packages"]["pip"][0] == "einops==0.7.0"  # (then the safe pins envgen adds)
    assert f"FROM {image}: its tag names torch==2.1.2 built for cu121, taken into the profile" in output


def test_a_torch_the_file_installs_itself_wins(tmp_path: Path) -> None:
    code, output, data = _adopt(tmp_path, "FROM pytorch/pytorch:2.1.2-cuda12.1-cudnn8-runtime\n"
                                          "RUN pip install torch==2.3.1\n")
    assert code == 0, output[-2000:]
    assert str(data["frameworks"]["pytorch"]).startswith("2.3.1")  # type: ignore[index]
    assert "its tag names" not in output


def test_a_tag_without_versions_is_only_noted(tmp_path: Path) -> None:
    code, output, data = _adopt(tmp_path, "FROM pytorch/pytorch:latest\nRUN pip install einops==0.7.0\n")
    assert code == 0, output[-2000:]
    assert "frameworks" not in data
    assert "FROM pytorch/pytorch:latest not kept" in output
