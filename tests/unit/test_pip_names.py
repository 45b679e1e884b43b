"""Did-you-mean for distribution names in packages.pip: the names pip_names.yaml records (PyPI's placeholder
pytorch, import names such as cv2, names PyPI has no release of) get their row's finding with the real name, an
unknown name close to one the knowledge base knows gets a did-you-mean, and the names the KB knows, and unknown
names near none, get nothing."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from envgen.check import check_profile
from envgen.kb import KnowledgeBase
from envgen.profile import load_profile


def findings(tmp_path: Path, kb: KnowledgeBase, *lines: str) -> dict[str, tuple[str, str, str]]:
    path = tmp_path / "p.yaml"
    path.write_text(textwrap.dedent(f"""\
        name: p
        base: debian:bookworm-slim
        local_base: true
        python: "3.11"
        gpu: {{required: false}}
        packages: {{pip: {json.dumps(list(lines))}}}
        """), encoding="utf-8")
    return {f.message.split("'")[1]: (f.severity, f.code, f.fix) for f in check_profile(load_profile(str(path)), kb)
            if f.code.startswith("pip-name")}


@pytest.mark.parametrize(("line", "severity", "fix"), [
    ("pytorch==2.2.2", "error", "write torch==2.2.2 (envgen moves torch to frameworks:)"),
    ("sklearn", "error", "write scikit-learn"),
    ("scikitlearn==1.4.2", "error", "write scikit-learn==1.4.2"),
    ("opencv", "error", "write opencv-python"),
    ("cv2>=4.9", "error", "write opencv-python>=4.9"),
    ("PIL", "error", "write pillow"),
    ("bs4", "warning", "write beautifulsoup4"),
])
def test_recorded_names_say_the_real_one(tmp_path: Path, kb: KnowledgeBase, line: str, severity: str,
                                         fix: str) -> None:
    assert findings(tmp_path, kb, line)[line] == (severity, "pip-name", fix)


@pytest.mark.parametrize(("line", "meant"), [
    ("numpyy==1.26.4", "numpy"), ("transfomers>=4.40", "transformers"), ("scikit-lern", "scikit-learn"),
    ("pandsa", "pandas"),
])
def test_a_near_name_gets_a_did_you_mean(tmp_path: Path, kb: KnowledgeBase, line: str, meant: str) -> None:
    severity, code, fix = findings(tmp_path, kb, line)[line]
    assert (severity, code) == ("warning", "pip-name-unknown") and fix.startswith(f"write {meant}")


def test_known_and_far_names_are_quiet(tmp_path: Path, kb: KnowledgeBase) -> None:
    assert findings(tmp_path, kb, "numpy==1.26.4", "torchdata==0.7.1", "rich", "my-own-tool==1.0",
                    "jaxlib==0.4.30", "nvidia-cudnn-cu12==8.9.2.26") == {}


def test_a_name_with_letters_of_its_own_in_front_is_no_typo(tmp_path: Path, kb: KnowledgeBase) -> None:
    """Issue 38: `GitPython==3.1.30: ... did you mean ipython?` (two letters in front: another project)."""
    assert "GitPython==3.1.30" not in findings(tmp_path, kb, "GitPython==3.1.30")


def test_tensorflow_gpu_with_an_underscore_is_the_framework(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text('name: p\nbase: ubuntu:18.04\npython: "3.7"\ncuda: "10.1"\npackages: {pip: '
                    '["tensorflow_gpu==2.1.0"]}\n', encoding="utf-8")
    profile = load_profile(str(path))
    assert (profile.frameworks.tensorflow, profile.frameworks.tensorflow_package) == ("2.1.0", "tensorflow-gpu")
