"""The Python-package layer's static verdicts against a real resolver (uv, against PyPI, as
test_resolve_witness does): where the metadata forbids a pair both say so; where the metadata allows a pair
that breaks at run time, the resolver installs it and only the static check knows."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from envgen.check import check_profile
from envgen.kb import KnowledgeBase
from envgen.lock.witness import witness
from envgen.profile import load_profile

HEAD = """\
name: p
base: debian:bookworm-slim
local_base: true
python: "3.11"
"""


def _profile(tmp_path: Path, body: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "p.yaml"
    path.write_text(HEAD + textwrap.dedent(body), encoding="utf-8")
    return load_profile(str(path))


def _errors(profile, kb: KnowledgeBase) -> dict[str, str]:  # type: ignore[no-untyped-def]
    """code -> the messages of its errors, one per line."""
    out: dict[str, str] = {}
    for f in check_profile(profile, kb):
        if f.severity == "error":
            out[f.code] = (out.get(f.code, "") + "\n" + f.message).strip()
    return out


def _uv_compile(tmp_path: Path, *requirements: str) -> subprocess.CompletedProcess[str]:
    """uv resolves for the image's platform from PyPI alone (torch's PyPI wheel is its default CUDA build)."""
    req = tmp_path / "requirements.in"
    req.write_text("\n".join(requirements) + "\n")
    uv = Path(sys.executable).with_name("uv")
    return subprocess.run([str(uv), "pip", "compile", str(req), "--python-version", "3.11", "--python-platform",
                           "x86_64-manylinux_2_28", "--no-header", "--quiet"], capture_output=True, text=True,
                          timeout=300, check=False)


def test_tf217_numpy2_both_refuse(tmp_path: Path, kb: KnowledgeBase) -> None:
    profile = _profile(tmp_path, "gpu: {required: false}\npackages: {pip: [tensorflow-cpu==2.17.0, numpy==2.0.0]}\n")
    assert "numpy<2.0.0,>=1.23.5" in _errors(profile, kb)["pkg-requires-conflict"]
    assert [f.code for f in witness(profile, kb)] == ["resolve-conflict"]


def test_tf218_numpy2_both_accept(tmp_path: Path, kb: KnowledgeBase) -> None:
    profile = _profile(tmp_path, "gpu: {required: false}\npackages: {pip: [tensorflow-cpu==2.18.0, numpy==2.0.2]}\n")
    assert not [c for c in _errors(profile, kb) if c.startswith("pkg-")]
    assert [f.code for f in witness(profile, kb)] == ["resolve-ok"]


def test_and_cuda_with_torch_pins_refused_by_both(tmp_path: Path, kb: KnowledgeBase) -> None:
    profile = _profile(tmp_path, """\
        cuda: "12.2"
        gpu: {targets: [A100]}
        packages: {pip: ["tensorflow[and-cuda]==2.15.1", torch==2.1.2+cu121]}
        """)
    message = _errors(profile, kb)["pkg-pin-conflict"]
    assert "nvidia-cudnn-cu12==8.9.4.25 against nvidia-cudnn-cu12==8.9.2.26" in message
    assert "nvidia-nccl-cu12==2.16.5 against nvidia-nccl-cu12==2.18.1" in message
    done = _uv_compile(tmp_path, "tensorflow[and-cuda]==2.15.1", "torch==2.1.2")
    assert done.returncode != 0 and "nvidia-" in done.stderr, done.stderr


def test_a_runtime_break_resolves_and_only_check_sees_it(tmp_path: Path, kb: KnowledgeBase) -> None:
    profile = _profile(tmp_path, "gpu: {required: false}\npackages: {pip: [torch==2.2.2+cpu, numpy==2.0.0]}\n")
    assert "Numpy is not available" in _errors(profile, kb)["pkg-runtime"]
    done = _uv_compile(tmp_path, "torch==2.2.2", "numpy==2.0.0")
    assert done.returncode == 0 and "numpy==2.0.0" in done.stdout, done.stderr
