"""Issue 38 item 6: one rule per kind of line, through the real `envgen check` on profile files. A venv tool line
(setuptools, wheel, pip) is judged by what it breaks; torchvision without torch is an error that names its torch;
a fix text never says one way twice."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from envgen.check.util import one_each
from envgen.cli import app
from envgen.kb import KnowledgeBase
from envgen.plan.image import plan_image
from envgen.profile import load_profile

HEAD = """\
name: p
installer: pip
gpu: {required: false}
"""
BOOKWORM = 'base: debian:bookworm-slim\nlocal_base: true\npython: "3.11"\n'


def _check(tmp_path: Path, body: str, where: str = BOOKWORM) -> tuple[int, str]:
    path = tmp_path / "p.yaml"
    path.write_text(HEAD + where + body, encoding="utf-8")
    result = CliRunner().invoke(app, ["check", str(path)])
    return result.exit_code, result.output


@pytest.mark.parametrize("line", ["setuptools<81", "setuptools==65.5.0", "setuptools>=70", "wheel>=0.40",
                                  "pip==24.0"])
def test_a_venv_tool_line_the_environment_meets_passes(tmp_path: Path, kb: KnowledgeBase, line: str) -> None:
    code, output = _check(tmp_path, f'packages: {{pip: ["{line}"]}}\n')
    assert code == 0 and "0 error(s)" in output, output
    plan = plan_image(load_profile(str(tmp_path / "p.yaml")), kb)
    [req] = plan.requirements
    assert req.stage == "environment"  # installed by the environment's pip, not constrained as an extra


def test_a_setuptools_range_a_framework_cannot_meet_is_an_error_naming_both(tmp_path: Path) -> None:
    code, output = _check(tmp_path, 'frameworks: {pytorch: "1.10.2+cpu"}\npackages: {pip: ["setuptools>=70"]}\n',
                          'base: python:3.9-slim-bookworm\npython: "3.9"\n')
    assert code == 1 and "ERROR [pkg-runtime] setuptools>=70 (packages.pip)" in output, output
    assert "torch==1.10.2+cpu (frameworks)" in output, output


def test_torchvision_without_torch_is_an_error_naming_its_torch(tmp_path: Path, kb: KnowledgeBase) -> None:
    release = next(r for r in kb.pytorch if r.torchvision)
    code, output = _check(tmp_path, f'frameworks: {{torchvision: "{release.torchvision}"}}\n')
    assert code == 1 and "ERROR [torchvision-without-torch]" in output, output
    assert f'add frameworks.pytorch: "{release.version}"' in output, output


def test_the_unpinned_numpy_fix_is_said_once(tmp_path: Path) -> None:
    code, output = _check(tmp_path, 'frameworks: {pytorch: "2.1.2+cpu"}\n',
                          'base: python:3.10-slim-bookworm\npython: "3.10"\n')
    fix = next(line for line in output.splitlines() if "pin numpy==1.26.4" in line)
    assert fix.count("pin numpy==1.26.4") == 1, fix


def test_one_each_keeps_the_fuller_way_and_the_order() -> None:
    assert one_each("pin a==1; pin a==1 (why), or b") == "pin a==1 (why), or b"
    assert one_each("x; y; x") == "x; y"
    assert one_each("lock it; pin it") == "lock it; pin it"
