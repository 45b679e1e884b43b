"""`envgen check --resolve`: uv resolves the profile's pip set for the image's platform, for real, against
PyPI (reachable here and in CI); an unreachable index is one line and the static check still runs."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from envgen.errors import ResolverUnavailable
from envgen.kb import KnowledgeBase
from envgen.lock.witness import Platform, verdict, witness
from envgen.profile import load_profile

HEAD = """\
name: p
base: debian:bookworm-slim
local_base: true
python: "3.11"
gpu: {required: false}
"""


def profile_file(tmp_path: Path, body: str, head: str = HEAD) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(head + textwrap.dedent(body), encoding="utf-8")
    return path


def test_a_consistent_set_resolves(tmp_path: Path, kb: KnowledgeBase) -> None:
    found = witness(load_profile(str(profile_file(tmp_path, "packages: {pip: [numpy==1.26.4, rich==13.7.1]}"))), kb)
    assert [f.code for f in found] == ["resolve-ok"]
    assert "manylinux_2_36" in found[0].message and "CPython 3.11" in found[0].message


def test_a_clash_names_both_requirements(tmp_path: Path, kb: KnowledgeBase) -> None:
    path = profile_file(tmp_path, "packages: {pip: [tensorflow-cpu==2.12.0, numpy==1.26.4]}")
    (found,) = witness(load_profile(str(path)), kb)
    assert found.code == "resolve-conflict" and found.severity == "error"
    assert "tensorflow-cpu==2.12.0" in found.message and "numpy==1.26.4" in found.message


def test_no_wheel_for_the_platform_names_it(tmp_path: Path, kb: KnowledgeBase) -> None:
    head = HEAD.replace('python: "3.11"', 'python: "3.12"\ninstaller: conda')
    path = profile_file(tmp_path, "packages: {pip: [tensorflow-cpu==2.12.0]}", head)
    (found,) = witness(load_profile(str(path)), kb)
    assert found.code == "resolve-no-wheel"
    assert "CPython 3.12" in found.message and "cp312" in found.message


def test_unreachable_index_is_one_line_and_the_static_check_runs(tmp_path: Path, kb: KnowledgeBase) -> None:
    path = profile_file(tmp_path, """\
        packages: {pip: [numpy==1.26.4]}
        mirrors: {pip_index_url: "http://127.0.0.1:9/simple"}
        """)
    with pytest.raises(ResolverUnavailable, match="cannot be reached"):
        witness(load_profile(str(path)), kb)
    done = subprocess.run([sys.executable, "-m", "envgen", "check", "--resolve", str(path)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert "base-local" in done.stdout  # the static findings
    # --resolve asks the index even where ENVGEN_OFFLINE is set (the test session sets it): what was not resolved,
    # and why, is an info finding (envgen.lock.judged)
    assert "[resolve-offline] the pip set was not resolved (no index answered" in done.stdout, done.stdout


def test_resolved_wheels_of_two_cuda_majors_are_reported() -> None:
    # The shape of uv's output for TF 2.12's cu11 wheels next to torch 2.1.2+cu121's dependencies.
    out = "nvidia-cudnn-cu11==8.6.0.163\nnvidia-cudnn-cu12==8.9.2.26\nnumpy==1.23.5\n"
    found = verdict(0, out, "", Platform("3.11", "2.36", "CPython 3.11"), ["x"])
    assert [f.code for f in found] == ["resolve-ok", "resolve-cuda-flavours"]
    assert "nvidia-cudnn-cu11==8.6.0.163 and nvidia-cudnn-cu12==8.9.2.26" in found[1].message
