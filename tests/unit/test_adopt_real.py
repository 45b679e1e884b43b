"""`envgen init --from` over tests/corpus/real: 33 dependency files of 17 public ML repositories (requirements.txt,
environment.yml, pyproject.toml, setup.py, Dockerfiles of any name; 2018-2026; TensorFlow and PyTorch; provenance and
licence in SOURCES.yaml), each adopted through the real command with its exit code (check's verdict), the profile's
fields and the notes that must be there asserted. Exit 1 is check refusing what the source asks (named in the
case); exit 2 is a source envgen cannot adopt yet (named)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from envgen.cli import app

REAL = Path(__file__).resolve().parents[1] / "corpus" / "real"
TV = "0.29.1"

# file -> (exit code, {profile key: value} (dotted), [text the output or the written profile must hold], [text
# neither may hold]); a floating GPU extension line (bitsandbytes, triton) is a warning, not an error (issue #38 item 6)
CASES: dict[str, tuple[int, dict[str, object], list[str], list[str]]] = {
    "facebookresearch__detectron2/docker/Dockerfile": (
        0, {"frameworks.pytorch": "1.10+cu111", "cuda": "11.1", "python": "3.6",
            "base": "nvidia/cuda:11.1.1-cudnn8-devel-ubuntu18.04"},
        # setuptools==59.5.0 (torch 1.10 needs setuptools < 60, package_breaks.yaml) is added: the line installs
        # with the frameworks, and check passes it (issue #38 item 6)
        ["'detectron2_repo' not taken: a local path", "the project itself must be copied in",
         "setuptools==59.5.0"], ["1.10+cpu", "setuptools==59.5.0 not added"]),
    "facebookresearch__detectron2/docker/deploy.Dockerfile": (
        0, {"frameworks": None}, ["FROM detectron2:v0 not kept", "'RUN git clone --branch v0.11.1"],
        ["not a requirement ("]),
    "facebookresearch__detectron2/setup.py": (
        0, {"frameworks": None, "packages.pip.0": "Pillow>=7.1"}, ["the project 'detectron2' is not installed"],
        ["not a requirement ("]),
    "openai__gpt-2/Dockerfile.gpu": (
        0, {"packages.pip": ["fire>=0.1.3", "regex==2017.4.5", "requests==2.21.0", "tqdm==4.31.1"]},
        ["FROM tensorflow/tensorflow:1.12.0-gpu-py3 not kept"], []),
    "openai__gpt-2/Dockerfile.cpu": (0, {"packages.pip.1": "regex==2017.4.5"}, [], []),
    "openai__gpt-2/requirements.txt": (0, {"packages.pip.3": "tqdm==4.31.1"}, [], []),
    "CompVis__latent-diffusion/environment.yaml": (
        0, {"installer": "conda", "python": "3.8", "frameworks.pytorch": "1.7.0+cu110", "cuda": "11.0"},
        ["'pip=20.3' not taken", "'-e .' not taken", "channel 'defaults'"], []),
    "CompVis__latent-diffusion/setup.py": (
        0, {"frameworks.pytorch": "2.15.0+cpu"}, ["the project 'latent-diffusion' is not installed"], []),
    "CompVis__taming-transformers/environment.yaml": (
        0, {"installer": "conda", "frameworks.pytorch": "1.7.0+cu102", "cuda": "10.2"}, ["'pip=20.3' not taken"],
        []),
    "facebookresearch__dinov2/conda.yaml": (
        1, {"installer": "conda", "frameworks.pytorch": "2.0.0+cu117"},
        ["[torchvision-mismatch] torchvision 0.15.0", "'pip' not taken"], []),
    "facebookresearch__dinov2/requirements.txt": (
        1, {"frameworks.pytorch": "2.0.0+cu117", "mirrors.pip_extra_index_urls": ["https://pypi.nvidia.com"]},
        ["[torchvision-mismatch]"], []),
    "facebookresearch__dinov2/setup.py": (
        0, {"frameworks": None}, ["install_requires is a name bound at run time", "adopt the file it reads"],
        ["instruction envgen does not take"]),
    "google-research__bert/requirements.txt": (
        0, {"frameworks.tensorflow": "2.21.0", "gpu.required": False}, [], []),
    "openai__baselines/Dockerfile": (
        0, {"frameworks.tensorflow": "1.15.0", "python": "3.6"}, ["'.[test]' not taken: a local path"], []),
    "openai__baselines/setup.py": (
        0, {"packages.pip.0": "gym>=0.15.4, <0.16.0"}, ["the project 'baselines' is not installed"], []),
    "tloen__alpaca-lora/Dockerfile": (  # unpinned torch from the nightly cu118 index on a CUDA 11.8, Python 3.10 base
        0, {"frameworks.pytorch": "2.7.1+cu118", "cuda": "11.8", "python": "3.10", "mirrors": None},
        ["the newest in range with Python 3.10 wheels and a cu118 build", "serves nightly or test builds",
         "[ext-floating] packages.pip line 'bitsandbytes'"], []),
    "tloen__alpaca-lora/requirements.txt": (
        0, {}, ["'black[jupyter]' merged with 'black'", "[ext-floating] packages.pip line 'bitsandbytes'"], []),
    "facebookresearch__segment-anything/setup.py": (
        0, {"frameworks": None}, ["the project 'segment_anything' is not installed"], []),
    "karpathy__minGPT/setup.py": (0, {"frameworks.pytorch": "2.15.0+cpu"}, ["'minGPT' is not installed"], []),
    "openai__CLIP/requirements.txt": (0, {"frameworks.torchvision": TV}, [], []),
    "openai__CLIP/setup.py": (
        0, {"frameworks": None}, ["install_requires is a list comprehension", "adopt the file it reads"], []),
    "facebookresearch__detr/requirements.txt": (
        0, {"frameworks.torchvision": TV, "packages.pip": ["cython", "submitit", "scipy", "onnx", "onnxruntime"]},
        ["panopticapi.git#egg=panopticapi' not taken: a direct URL"], []),
    "facebookresearch__detr/Dockerfile": (
        0, {"frameworks.torchvision": TV, "packages.apt": ["git", "vim", "libgtk2.0-dev"]},
        ["FROM pytorch/pytorch:1.5-cuda10.1-cudnn7-runtime not kept"], ["-r /workspace/requirements.txt"]),
    "huggingface__accelerate/docker/accelerate-cpu/Dockerfile": (
        0, {"python": "3.10", "base": "python:3.10-slim", "packages.pip": ["jupyter"]},
        ["'pip' not taken: the image's installer is envgen's own", "accelerate[testing,test_trackers] @ git+"], []),
    "huggingface__accelerate/docker/accelerate-gpu/Dockerfile": (
        0, {"python": "3.10"}, ["[ext-floating] packages.pip line 'bitsandbytes'"], []),
    "huggingface__accelerate/setup.py": (
        0, {"frameworks.pytorch": "2.15.0+cpu"}, ["the project 'accelerate' is not installed"], []),
    "openai__whisper/requirements.txt": (0, {"frameworks.pytorch": "2.15.0+cpu"}, ["[ext-floating]"], []),
    "openai__whisper/pyproject.toml": (
        0, {"frameworks.pytorch": "2.15.0+cpu"}, ["the project 'openai-whisper' is not installed"], []),
    "huggingface__pytorch-image-models/requirements.txt": (0, {"frameworks.torchvision": TV}, [], []),
    "huggingface__pytorch-image-models/pyproject.toml": (
        0, {"frameworks.torchvision": TV}, ["the project 'timm' is not installed"], []),
    "Stability-AI__generative-models/requirements/pt2.txt": (
        1, {"frameworks.torchaudio": "2.11.0"}, ["[pkg-runtime] opencv-python==4.6.0.66"], []),
    # torch with torchvision unpinned: 2.14.1, the newest torch the knowledge base pairs a torchvision with
    "pytorch__examples/mnist/requirements.txt": (0, {"frameworks.pytorch": "2.14.1+cpu"}, [], []),
    "pytorch__examples/imagenet/requirements.txt": (0, {"frameworks.torchvision": TV}, [], []),
}


def _get(data: object, dotted: str) -> object:
    for part in dotted.split("."):
        data = data[int(part)] if isinstance(data, list) else data.get(part) if isinstance(data, dict) else None
    return data


def test_every_file_of_the_corpus_has_a_case_and_a_source() -> None:
    sources = yaml.safe_load((REAL / "SOURCES.yaml").read_text(encoding="utf-8"))["files"]
    assert sorted(r["file"] for r in sources) == sorted(CASES)
    assert len(CASES) >= 30
    assert all(len(r["commit"]) == 40 and r["licence"] and r["repository"].startswith("https://github.com/")
               for r in sources)


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_real_file_is_adopted_as_what_it_is(tmp_path: Path, name: str) -> None:
    code, fields, says, never = CASES[name]
    out = tmp_path / "adopted.yaml"
    result = CliRunner().invoke(app, ["init", "--from", str(REAL / name), "-o", str(out)])
    assert result.exit_code == code, result.output[-3000:]
    assert "Traceback" not in result.output
    written = out.read_text(encoding="utf-8") if out.exists() else ""
    for text in says:
        assert text in result.output + written, text
    for text in never:
        assert text not in result.output + written, text
    if code == 2:
        assert not out.exists()
        return
    data = yaml.safe_load(out.read_text(encoding="utf-8"))
    for dotted, want in fields.items():
        assert _get(data, dotted) == want, (dotted, _get(data, dotted))


def test_an_extra_of_a_setup_py_is_read_through_the_name_bound_to_it(tmp_path: Path) -> None:
    out = tmp_path / "baselines.yaml"
    source = REAL / "openai__baselines/setup.py"  # extras_require=extras, a dict bound at module level
    result = CliRunner().invoke(app, ["init", "--from", str(source), "-o", str(out), "--group", "mpi"])
    assert result.exit_code == 0, result.output
    text = out.read_text(encoding="utf-8")
    assert yaml.safe_load(text)["packages"]["pip"][-1] == "mpi4py"
    assert f'"mpi4py"  # {source}:20' in text  # the extra's own line, not the setup() call's
    refused = CliRunner().invoke(app, ["init", "--from", str(source), "--group", "all"])
    assert refused.exit_code == 2 and "use one of: mpi, test" in refused.output  # 'all' is added at run time
