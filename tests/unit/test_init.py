"""`envgen init`: a first profile from a few options, written the way a user starts; each one is named after its
file, loads, and passes `envgen check` (no error) for the host it was asked for."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from envgen.check import HostSpec, check_profile
from envgen.cli import app
from envgen.kb import KnowledgeBase
from envgen.profile import load_profile


@pytest.mark.parametrize(("args", "host", "has"), [
    ([], HostSpec(), {}),
    (["--frameworks", "pytorch"], HostSpec(), {"pytorch": "+cpu"}),
    (["--frameworks", "tensorflow", "--python", "3.10"], HostSpec(), {"tensorflow": "."}),
    (["--frameworks", "tensorflow,pytorch"], HostSpec(), {"tensorflow": ".", "pytorch": "+cpu"}),
    (["--gpu", "RTX 4090", "--driver", "550.54.14"], HostSpec(gpus=["RTX 4090"], driver="550.54.14"),
     {"pytorch": "+cu"}),
])
def test_init_writes_a_profile_named_after_its_file_that_passes_check(
        tmp_path: Path, kb: KnowledgeBase, args: list[str], host: HostSpec, has: dict[str, str]) -> None:
    out = tmp_path / "My First.yaml"
    result = CliRunner().invoke(app, ["init", "-o", str(out), *args])
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert text.startswith("# Written by `envgen init`") and "#     pip: [" in text
    profile = load_profile(str(out))
    assert profile.name == "my-first"
    for field, part in has.items():
        assert part in str(getattr(profile.frameworks, field)), (field, profile.frameworks)
    errors = [f for f in check_profile(profile, kb, host) if f.severity == "error"]
    assert errors == [], errors


def test_init_gpu_pins_pypis_torch_where_it_is_the_build(tmp_path: Path, kb: KnowledgeBase) -> None:
    """`init --gpu` writes what suggest finds: for an H100 on driver 580 torch 2.14.1, whose PyPI wheel is the cu130
    build (pytorch.yaml `pypi: true`), pinned plain so that pip takes it from PyPI, no index of PyTorch's."""
    from envgen.plan.image import plan_image

    out = tmp_path / "h100.yaml"
    result = CliRunner().invoke(app, ["init", "-o", str(out), "--gpu", "H100", "--driver", "580.65.06"])
    assert result.exit_code == 0, result.output
    profile = load_profile(str(out))
    assert profile.frameworks.pytorch == "2.14.1" and profile.cuda == "13.0"
    plan = plan_image(profile, kb)
    assert plan.pip[0] == "torch==2.14.1" and plan.pip_index_urls == [] and plan.expected.torch == "2.14.1+cu130"


def test_init_prints_without_a_file_and_keeps_an_existing_one(tmp_path: Path) -> None:
    printed = CliRunner().invoke(app, ["init"])
    assert printed.exit_code == 0 and "name: my-profile" in printed.output
    out = tmp_path / "mine.yaml"
    out.write_text("keep me\n", encoding="utf-8")
    refused = CliRunner().invoke(app, ["init", "-o", str(out)])
    assert refused.exit_code == 2 and "the file exists" in refused.output and "--force" in refused.output
    assert out.read_text(encoding="utf-8") == "keep me\n"
    assert CliRunner().invoke(app, ["init", "-o", str(out), "--force"]).exit_code == 0


@pytest.mark.parametrize(("args", "says"), [
    (["--python", "3.99"], "no plain base the knowledge base knows has Python 3.99"),
    (["--python", "three"], "is not a Python version"),
    (["--frameworks", "caffe"], "is not a framework envgen knows"),
])
def test_init_refuses_bad_options_in_one_line(args: list[str], says: str) -> None:
    result = CliRunner().invoke(app, ["init", *args])
    assert result.exit_code == 2 and says in result.output


def test_python_without_a_plain_base_suggests_the_nearest_that_works(tmp_path: Path) -> None:
    """Issue 32 item 10: `init --python 3.7` suggested `--python 3.14`; the fix is the nearest Python a plain base
    has, and the command it names runs."""
    import re

    runner = CliRunner()
    refused = runner.invoke(app, ["init", "--python", "3.7", "-o", str(tmp_path / "a.yaml")])
    assert refused.exit_code == 2
    suggested = re.search(r"use --python (\d+\.\d+) \(the nearest\)", refused.output)
    assert suggested and suggested.group(1) == "3.8", refused.output
    taken = runner.invoke(app, ["init", "--python", suggested.group(1), "-o", str(tmp_path / "b.yaml")])
    assert taken.exit_code == 0, taken.output
    assert not (tmp_path / "a.yaml").exists() and (tmp_path / "b.yaml").is_file()
