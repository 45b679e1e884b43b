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
    files = render_in_memory(plan_image(p, kb)).files
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


# --- base_provides.packages: distributions the base holds beside (or without) frameworks (issue #32, item 4) -----

HELD = {"base": "envgen-local/h200-host:latest", "local_base": True, "python": "3.12", "cuda": "13.0",
        "frameworks": {"pytorch": "2.11.0+cu130"}, "gpu": {"targets": ["H200"]},
        "base_provides": {"python": "/opt/torch/.venv/bin/python3",
                          "packages": {"cupy-cuda13x": "14.2.0", "triton": "3.6.0", "six": "1.16.0"}},
        "packages": {"pip": ["cupy-cuda13x==14.2.0", "triton>=3.5", "rich==13.7.1"]}}


def held(tmp_path: Path, **changes: object):
    return profile(tmp_path, **{**HELD, **changes})


@pytest.mark.parametrize(("packages", "words"), [
    ({"six": "1.16.0; rm -rf /"}, "field 'base_provides.packages.six' = '1.16.0; rm -rf /': '1.16.0; rm -rf /' is "
                                  "not a valid distribution version"),
    ({"six$(id)": "1.16.0"}, "is not a valid distribution name"),
    ({"six": "1.16.0", "Six": "1.16.0"}, "base_provides.packages names one distribution twice (Six and six): keep "
                                         "one of them"),
    ({"six": None}, "field 'base_provides.packages.six'"),
])
def test_bad_base_provides_packages_is_one_line(tmp_path: Path, packages: dict, words: str) -> None:
    with pytest.raises(InputError) as err:
        held(tmp_path, base_provides={"packages": packages})
    line = err.value.one_line()
    assert words in line and "\n" not in line, line


def test_a_version_yaml_read_as_a_number_is_named_as_written(tmp_path: Path) -> None:
    """A flow mapping (the usual way to write base_provides) ends the value at ',' or '}': the message quotes the
    value as written, not the rest of the line."""
    path = tmp_path / "flow.yaml"
    path.write_text("name: flow\nbase: debian:bookworm-slim\nlocal_base: true\npython: \"3.11\"\n"
                    "gpu: {required: false}\nbase_provides: {packages: {six: 1.10, colorama: \"0.4.6\"}}\n")
    with pytest.raises(InputError) as err:
        load_profile(str(path), env={})
    assert ("field 'base_provides.packages.six' = 1.10 (YAML read the number 1.1): Input should be a valid string; "
            "write it in quotes (\"1.10\")") in err.value.one_line()


def test_lines_the_base_satisfies_are_neither_downloaded_nor_installed(tmp_path: Path) -> None:
    kb = load_kb()
    p = held(tmp_path)
    plan = plan_image(p, kb)
    stages = {r.name: r.stage for r in plan.requirements}
    assert stages == {"cupy-cuda13x": "base", "triton": "base", "rich": "extras"}
    assert plan.pins.pip == () and plan.pins.pip_extra == ("rich==13.7.1",) and plan.source_builds == []
    assert plan.preinstalled == ["torch==2.11.0+cu130", "cupy-cuda13x==14.2.0", "six==1.16.0", "triton==3.6.0"]
    # the probe checks every declared version, also six, which no line names; cupy is still imported and called
    assert plan.expected.base_provides is not None
    assert plan.expected.base_provides.packages == {"cupy-cuda13x": "14.2.0", "six": "1.16.0", "triton": "3.6.0"}
    assert [e.package for e in plan.expected.extensions or []] == ["cupy-cuda13x"]
    files = render_in_memory(plan_image(p, kb)).files
    assert files["requirements.extra.txt"].decode().splitlines()[-1] == "rich==13.7.1"
    assert "cupy" not in files["requirements.lock"].decode() + files["requirements.extra.txt"].decode()
    assert "triton" not in files["requirements.lock"].decode() + files["requirements.extra.txt"].decode()


def test_a_line_with_extras_is_installed_as_written(tmp_path: Path) -> None:
    """The extras' own requirements are not the base's: pip installs the line (keeping the base's copy)."""
    plan = plan_image(held(tmp_path, packages={"pip": ["six[test]==1.16.0"]}), load_kb())
    assert [r.stage for r in plan.requirements] == ["extras"] and plan.pins.pip_extra == ("six[test]==1.16.0",)


def test_a_profile_without_packages_keeps_its_hash(tmp_path: Path) -> None:
    """base_provides.packages left out: the identity (and so the image tag) is the one before the field existed."""
    p = profile(tmp_path)
    assert p.base_provides is not None and "packages" not in p.identity()["base_provides"]
    assert "packages" not in dict(plan_image(p, load_kb()).expected.document()["base_provides"])
    assert "packages" in held(tmp_path).identity()["base_provides"]


def test_check_names_the_lines_the_base_satisfies_and_refuses_a_version_it_does_not_hold(tmp_path: Path) -> None:
    kb = load_kb()
    info = next(f for f in check_profile(held(tmp_path), kb) if f.code == "base-packages")
    assert info.severity == "info" and "cupy-cuda13x 14.2.0, six 1.16.0, triton 3.6.0" in info.message
    assert "cupy-cuda13x==14.2.0, triton>=3.5 are satisfied by it: neither downloaded nor installed" in info.message
    wrong = held(tmp_path, packages={"pip": ["cupy-cuda13x==14.1.0", "triton<3"]})
    errors = [f for f in check_profile(wrong, kb) if f.severity == "error"]
    assert [f.code for f in errors] == ["base-provides-conflict"] * 2
    assert errors[0].message == ("packages.pip[0] 'cupy-cuda13x==14.1.0' asks for a version of cupy-cuda13x the base "
                                 "does not hold (base_provides.packages: cupy-cuda13x 14.2.0)")
    assert errors[0].fix.startswith("write the base's version in the line (cupy-cuda13x==14.2.0)")
    with pytest.raises(InputError) as err:
        render_in_memory(plan_image(wrong, kb))
    assert err.value.message == errors[0].message


def test_a_package_the_base_holds_gets_no_runtime_compiler(tmp_path: Path) -> None:
    """Triton compiles its launcher at run time: for a triton envgen installs the render adds gcc (apt, which needs a
    Debian mirror); for the base's own triton it adds nothing, so the H200 host's base builds offline."""
    kb = load_kb()
    theirs = held(tmp_path, packages={"pip": ["triton==3.6.0"]})
    assert "apt-install.sh gcc" not in render_in_memory(plan_image(theirs, kb)).files["Dockerfile.classic"].decode()
    note = next(f for f in check_profile(theirs, kb) if f.code == "ext-runtime-cc")
    assert "the base holds it (base_provides.packages), so the base's own C compiler serves it" in note.message
    ours = held(tmp_path, packages={"pip": ["triton==3.6.0"]}, base_provides={"python": "/opt/torch/.venv/bin/python3"})
    assert "apt-install.sh gcc libc6-dev" in render_in_memory(plan_image(ours, kb)).files["Dockerfile.classic"].decode()
