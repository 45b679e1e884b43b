"""packages.pip as requirements.txt lines: the model reads pins, ranges, unpinned names, extras and markers and
refuses what cannot be made reproducible (options, URLs, paths, a framework range) in one line naming the field,
the value and the way out; check names the floating lines and judges a range against the KB's breaks; the render
reads every line from requirements.extra.txt, never from a RUN line. Specifier overlap is checked against
``packaging`` on every version of a grid."""

from __future__ import annotations

import itertools
import json
import textwrap
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from envgen.check import check_profile
from envgen.errors import ProfileError
from envgen.kb import KnowledgeBase
from envgen.kb.specifiers import overlaps, within
from envgen.plan.image import plan_image
from envgen.profile import load_profile
from envgen.profile.requirements import RefusedLine, parse_line
from envgen.render.core import render_in_memory

HEAD = """\
name: p
base: debian:bookworm-slim
local_base: true
python: "3.11"
gpu: {required: false}
"""


def write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(HEAD + textwrap.dedent(body), encoding="utf-8")
    return path


def refusal(tmp_path: Path, body: str) -> str:
    with pytest.raises(ProfileError) as info:
        load_profile(str(write(tmp_path, body)))
    return info.value.one_line()


@pytest.mark.parametrize(("text", "name", "extras", "spec", "marker", "exact"), [
    ("numpy==1.26.4", "numpy", (), "==1.26.4", None, "1.26.4"),
    ("numpy>=1.20, <2", "numpy", (), ">=1.20,<2", None, None),
    ("Pillow ~= 10.0", "pillow", (), "~=10.0", None, None),
    ("six", "six", (), "", None, None),
    ("colorama!=0.4.5", "colorama", (), "!=0.4.5", None, None),
    ("requests==2.*", "requests", (), "==2.*", None, None),
    ("jax[cuda12]==0.4.30", "jax", ("cuda12",), "==0.4.30", None, "0.4.30"),
    ("Uvicorn[Standard,foo_bar]>=0.29", "uvicorn", ("foo-bar", "standard"), ">=0.29", None, None),
    ('tomli==2.0.1; python_version < "3.11"', "tomli", (), "==2.0.1", 'python_version < "3.11"', "2.0.1"),
    ("exceptiongroup>=1.2 ; python_version<'3.11'", "exceptiongroup", (), ">=1.2", 'python_version < "3.11"', None),
])
def test_lines_are_read(text: str, name: str, extras: tuple[str, ...], spec: str, marker: str | None,
                        exact: str | None) -> None:
    line = parse_line(text)
    assert (line.name, line.extras, line.specifier, line.marker, line.exact) == (name, extras, spec, marker, exact)
    assert line.floats == (exact is None)


@pytest.mark.parametrize(("text", "python", "holds"), [
    ('tomli==2.0.1; python_version < "3.11"', "3.11", False),
    ('tomli==2.0.1; python_version < "3.11"', "3.10", True),
    ("a==1; sys_platform == 'win32'", "3.11", False),
    ("a==1; platform_machine == 'x86_64' and os_name == 'posix'", "3.11", True),
    ('a==1; python_full_version >= "3.11.4"', "3.11.9", True),
    ("a==1", "3.7", True),
])
def test_markers_are_evaluated_for_the_image(text: str, python: str, holds: bool) -> None:
    assert parse_line(text).applies(python) is holds


@pytest.mark.parametrize(("text", "says"), [
    ("-e .", "-e is a pip option"),
    ("--editable ./src", "mirrors.wheelhouse"),
    ("-r requirements.txt", "copy the file's lines"),
    ("--index-url https://mirror.example.org/simple", "mirrors.pip_index_url"),
    ("--extra-index-url https://x.example.org/simple", "mirrors.pip_extra_index_urls"),
    ("numpy==1.26.4 --hash=sha256:abc", "envgen lock"),
    ("mytool @ https://example.org/mytool-1.0-py3-none-any.whl", "direct URL"),
    ("git+https://github.com/org/repo", "direct URL"),
    ("mytool @ https://example.org/mytool-1.0-py3-none-any.whl#sha256=" + "a" * 64, "not taken yet"),
    ("./dist/mytool-1.0-py3-none-any.whl", "local path"),
    ("/wheels/mytool.whl", "local path"),
    ("numpy==1.26.4  # for pandas", "YAML comment"),
    ("numpy==1.26.4; python_version < '$(id)'", "'$'"),
    ("numpy>>1", "not a requirement"),
])
def test_what_cannot_be_reproduced_is_refused_with_the_way_out(tmp_path: Path, text: str, says: str) -> None:
    with pytest.raises(RefusedLine) as info:
        parse_line(text)
    assert says in str(info.value)
    message = refusal(tmp_path, f"packages: {{pip: [{json.dumps(text)}]}}\n")
    assert "packages.pip" in message and says in message and ":6:" in message  # the field, at its line


def test_a_framework_range_is_refused_with_pin_it_exactly(tmp_path: Path) -> None:
    message = refusal(tmp_path, 'packages: {pip: ["torch>=2.2"]}\n')
    assert "field 'packages.pip[0]' = 'torch>=2.2'" in message
    assert "a framework needs one exact release" in message and "torch==X.Y.Z" in message
    assert "envgen suggest" in message
    assert "tensorflow[and-cuda]==X.Y.Z" in refusal(tmp_path, 'packages: {pip: ["tensorflow[and-cuda]~=2.15"]}\n')
    assert "environment marker" in refusal(tmp_path, "packages: {pip: [\"torch==2.2.2; python_version > '3.8'\"]}\n")


def test_an_exact_framework_line_is_still_lifted(tmp_path: Path) -> None:
    profile = load_profile(str(write(tmp_path, 'packages: {pip: ["torch==2.2.2+cpu", "numpy<2"]}\n')))
    assert profile.frameworks.pytorch == "2.2.2+cpu" and profile.packages.pip == ["numpy<2"]


def test_two_lines_of_one_package_agree_or_are_named(tmp_path: Path) -> None:
    ok = load_profile(str(write(tmp_path, 'packages: {pip: ["numpy<2", "numpy==1.26.4"]}\n')))
    assert ok.packages.pip == ["numpy<2", "numpy==1.26.4"]
    message = refusal(tmp_path, 'packages: {pip: ["numpy<2", "numpy==2.0.0"]}\n')
    assert "'numpy==2.0.0' contradicts 'packages.pip[0]' = 'numpy<2'" in message


def codes(profile_path: Path, kb: KnowledgeBase) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in check_profile(load_profile(str(profile_path)), kb):
        out.setdefault(f.code, []).append(f"{f.severity}: {f.message}")
    return out


def test_check_names_each_floating_line_and_each_skipped_marker(tmp_path: Path, kb: KnowledgeBase) -> None:
    found = codes(write(tmp_path, """\
        packages:
          pip: ["rich==13.7.1", "six", "idna>=3.4,<4", 'tomli==2.0.1; python_version < "3.11"']
        """), kb)
    floating = found["pip-floating"]
    assert len(floating) == 2 and all(f.startswith("warning:") for f in floating)
    assert "'six' floats (no version given)" in floating[0] and "'idna>=3.4,<4' floats (a range)" in floating[1]
    assert found["pip-marker-skips"] == ["info: packages.pip line 'tomli==2.0.1; python_version < \"3.11\"': its "
                                         "marker does not hold in the image (CPython 3.11 on Linux x86-64), so pip "
                                         "skips it"]


def test_a_range_that_allows_a_break_warns_and_one_that_allows_only_broken_releases_errs(
        tmp_path: Path, kb: KnowledgeBase) -> None:
    torch = 'frameworks: {pytorch: "2.2.2+cpu"}\n'
    allows = codes(write(tmp_path, torch + 'packages: {pip: ["numpy>=1.20"]}\n'), kb)
    (warning,) = allows["pkg-range-allows"]
    assert warning.startswith("warning: numpy>=1.20 (packages.pip) allows numpy >=2.0.0, which breaks with "
                              "torch==2.2.2+cpu (frameworks)")
    assert "pkg-runtime" not in allows and "pkg-unpinned" not in allows
    only = codes(write(tmp_path, torch + 'packages: {pip: ["numpy>=2"]}\n'), kb)
    assert only["pkg-runtime"][0].startswith("error: numpy>=2 (packages.pip) allows only numpy >=2.0.0")
    capped = codes(write(tmp_path, torch + 'packages: {pip: ["numpy>=1.20,<2"]}\n'), kb)
    assert "pkg-range-allows" not in capped and "pkg-runtime" not in capped and "pkg-unpinned" not in capped
    unpinned = codes(write(tmp_path, torch + 'packages: {pip: ["numpy"]}\n'), kb)
    assert "numpy (packages.pip, unpinned) allows numpy >=2.0.0" in unpinned["pkg-range-allows"][0]


def test_a_range_outside_a_frameworks_requires_dist_is_an_error(tmp_path: Path, kb: KnowledgeBase) -> None:
    found = codes(write(tmp_path, 'frameworks: {tensorflow: "2.15.0", tensorflow_package: tensorflow-cpu}\n'
                                  'packages: {pip: ["numpy>=2"]}\n'), kb)
    assert any("allows no release inside it" in m for m in found["pkg-requires-conflict"])
    inside = codes(write(tmp_path, 'frameworks: {tensorflow: "2.15.0", tensorflow_package: tensorflow-cpu}\n'
                                   'packages: {pip: ["numpy>=1.24"]}\n'), kb)
    assert "pkg-requires-conflict" not in inside and "pkg-range-allows" not in inside  # TF caps numpy<2


def test_a_floating_gpu_extension_is_a_warning_like_any_floating_line(tmp_path: Path, kb: KnowledgeBase) -> None:
    """Issue 38 item 6: one rule per kind of line. A floating line is a warning with the resolve hint, GPU extension
    or not (unpinned triton, bitsandbytes, vllm were errors, so `init` exited 1 on common requirement files)."""
    path = tmp_path / "g.yaml"
    path.write_text(textwrap.dedent("""\
        name: g
        base: nvidia/cuda:12.1.1-cudnn8-devel-ubuntu22.04
        python: "3.10"
        frameworks: {pytorch: "2.2.2+cu121"}
        packages: {pip: ["flash-attn>=2.5"]}
        """), encoding="utf-8")
    found = codes(path, kb)
    [text] = found["ext-floating"]
    assert text.startswith("warning: packages.pip line 'flash-attn>=2.5' floats"), text
    [fix] = [f.fix for f in check_profile(load_profile(str(path)), kb) if f.code == "ext-floating"]
    assert "--resolve` shows what it resolves to today" in fix and "flash-attn==X.Y.Z" in fix, fix
    assert not any(m.startswith("error:") for ms in found.values() for m in ms), found


def test_requirements_never_reach_a_run_line(kb: KnowledgeBase) -> None:
    root = Path(__file__).resolve().parents[1] / "fixtures" / "profiles" / "pip-requirements.yaml"
    profile = load_profile(str(root), env={})
    files = render_in_memory(plan_image(profile, kb)).files
    extra = files["requirements.extra.txt"].decode()
    for spec in profile.packages.pip:
        assert spec in extra.splitlines()
        for name in ("Dockerfile", "Dockerfile.classic"):
            code = [line for line in files[name].decode().splitlines() if not line.lstrip().startswith("#")]
            assert not any(spec in line for line in code), (name, spec)


VERSIONS = [".".join(map(str, v)) for v in itertools.product(range(3), range(3), range(3))] + ["1.20", "1.26.4"]
SPECS = ["", ">=1.1", "<2", ">=1.20,<2", "~=1.2", "~=1.2.1", "==1.*", "!=1.1.0", ">1.0.2", "<=0.2", "==2.0.0",
         ">=2.0.0", "<1.20", ">=1.2,!=1.2.1,<1.3", "==0.*"]


@pytest.mark.parametrize(("a", "b"), list(itertools.product(SPECS, SPECS)))
def test_overlap_and_within_agree_with_packaging_on_a_grid(a: str, b: str) -> None:
    sa, sb = SpecifierSet(a), SpecifierSet(b)
    inside_a = [v for v in VERSIONS if Version(v) in sa]
    if any(Version(v) in sb for v in inside_a):
        assert overlaps(a, b)
    if inside_a and not all(Version(v) in sb for v in inside_a):
        assert not within(a, b)
    if not overlaps(a, b):
        assert not any(Version(v) in sb for v in inside_a)
    if within(a, b):
        assert all(Version(v) in sb for v in inside_a)
