"""Frameworks that come with the base image (base_provides): strict model, one-line errors, the plan
(no framework pins, the base's interpreter makes the venv), and what check says."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from envgen.check import check_profile
from envgen.errors import InputError
from envgen.kb import load_kb
from envgen.plan.image import plan_image
from envgen.profile import load_profile
from envgen.render.core import render_in_memory

BASE = {"name": "corp-torch", "base": "registry.example.com/ml/torch:2.4-cu121", "python": "3.11", "cuda": "12.1",
        "frameworks": {"pytorch": "2.4.0+cu121"}, "base_provides": {"python": "/opt/conda/bin/python"},
        "packages": {"pip": ["rich==13.7.1"]}, "gpu": {"targets": ["A100"]}}


def profile(tmp_path: Path, **changes: object):
    data = {**BASE, **changes}
    path = tmp_path / f"{data['name']}.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_profile(str(path), env={})


@pytest.mark.parametrize(("changes", "words"), [
    ({"installer": "conda"}, "base_provides with installer: conda"),
    ({"base_provides": {"frameworks": ["tensorflow"]}}, "base_provides.frameworks lists tensorflow but "
                                                         "frameworks.tensorflow is not set"),
    ({"base_provides": {"python": "python3"}}, "absolute path of a Python interpreter"),
    ({"base_provides": {"python": "/opt/x; rm -rf /"}}, "absolute path of a Python interpreter"),
    ({"base_provides": {"pyhton": "/usr/bin/python3"}}, "pyhton"),
])
def test_bad_base_provides_is_one_line_naming_the_field(tmp_path: Path, changes: dict, words: str) -> None:
    with pytest.raises(InputError) as err:
        profile(tmp_path, **changes)
    line = err.value.one_line()
    assert words in line and "\n" not in line


def test_the_plan_installs_no_provided_framework(tmp_path: Path) -> None:
    kb = load_kb()
    p = profile(tmp_path)
    stack = plan_image(p, kb)
    assert stack.pip == ["rich==13.7.1"] and stack.preinstalled == ["torch==2.4.0+cu121"]
    assert stack.framework_pip == [] and stack.user_pip == ["rich==13.7.1"]
    assert stack.pip_index_urls == [] and stack.expected.base_provides is not None
    assert stack.expected.base_provides.frameworks == {"pytorch": "2.4.0+cu121"}
    files = render_in_memory(p, kb).files
    dockerfile = files["Dockerfile"].decode()
    assert "/opt/conda/bin/python -m venv --system-site-packages --without-pip /opt/env" in dockerfile
    assert "envgen-base.pth" in dockerfile and "torch==" not in files["requirements.lock"].decode()


def test_check_says_what_it_judges_and_drops_install_findings(tmp_path: Path) -> None:
    kb = load_kb()
    # torch 2.4 has no wheels for Python 3.14: moot when the base brings its own build
    findings = check_profile(profile(tmp_path, python="3.14"), kb)
    codes = {f.code for f in findings}
    assert "base-frameworks" in codes and "python-no-wheels" not in codes and "python-base-unknown" not in codes
    info = next(f for f in findings if f.code == "base-frameworks")
    assert "pytorch 2.4.0+cu121" in info.message and "/opt/conda/bin/python" in info.message
    # kernel rules still judge the declared build: torch 2.4.0+cu121 has no sm_37 code for a K80
    old_gpu = check_profile(profile(tmp_path, gpu={"targets": ["K80"]}), kb)
    assert any(f.code == "torch-no-kernel" for f in old_gpu)
    # without base_provides the same Python is an error again
    plain = {**BASE, "python": "3.14"}
    plain.pop("base_provides")
    path = tmp_path / "plain.yaml"
    path.write_text(yaml.safe_dump({**plain, "name": "plain"}))
    assert any(f.code == "python-no-wheels" for f in check_profile(load_profile(str(path), env={}), kb))
