"""`envgen init --from` over tests/corpus/real: 44 dependency files of 24 public ML repositories (requirements.txt,
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
        # the official base's tag gives torch 1.5.0 built for CUDA 10.1 (framework_bases.yaml): requirements.txt's
        # torch>=1.5.0 holds it, so pip keeps the base's; torchvision>=0.6.0 follows it
        0, {"frameworks.pytorch": "1.5.0+cu101", "frameworks.torchvision": "0.6.0", "cuda": "10.1", "python": "3.8",
            "packages.apt": ["git", "vim", "libgtk2.0-dev"]},
        ["its tag names torch==1.5.0 built for cu101, taken into the profile", "torch>=1.5.0 holds it"],
        ["-r /workspace/requirements.txt"]),
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
    # the second set (issue #38's "fresh set of real files", 2021-2026)
    "tatsu-lab__stanford_alpaca/requirements.txt": (
        0, {"frameworks.pytorch": "2.15.0+cpu", "packages.pip.4": "transformers>=4.28.1"}, [], ["not a requirement"]),
    "mlfoundations__open_clip/requirements-training.txt": (
        0, {"frameworks.pytorch": "2.14.1+cpu", "frameworks.torchvision": TV,
            "packages.pip.8": "transformers[sentencepiece]"}, ["torch>=2.6 (the newest release"], []),
    "mlfoundations__open_clip/pyproject.toml": (
        0, {"frameworks.pytorch": "2.14.1+cpu"}, ["the project 'open_clip_torch' is not installed"], []),
    "haotian-liu__LLaVA/pyproject.toml": (
        0, {"frameworks.pytorch": "2.1.2+cpu", "frameworks.torchvision": "0.16.2", "python": "3.11"},
        ["the project 'llava' is not installed"], []),
    # '.devcontainer' and the '__' of the corpus's file name gave an invalid profile name ('___'): now one '-'
    "haotian-liu__LLaVA/.devcontainer/Dockerfile": (
        0, {"frameworks": None, "packages.apt": ["ffmpeg", "dkms", "build-essential", "jq", "jp", "tree", "tldr",
                                                 "git-lfs"]},
        ["FROM mcr.microsoft.com/devcontainers/base:ubuntu-20.04 not kept", "Miniconda3-latest-Linux-x86_64.sh"],
        ["does not load"]),
    "openai__guided-diffusion/setup.py": (
        0, {"frameworks.pytorch": "2.15.0+cpu", "packages.pip": ["blobfile>=1.0.5", "tqdm"]},
        ["the project 'guided-diffusion' is not installed"], []),
    # tensorflow-gpu>=2.0: its newest real release (2.11.0, Python 3.10), never the error stub 2.21.0 check refuses
    "openai__guided-diffusion/evaluations/requirements.txt": (
        0, {"frameworks.tensorflow": "2.11.0", "frameworks.tensorflow_package": "tensorflow-gpu", "python": "3.10"},
        ["tensorflow-gpu's releases after it are error stubs"], ["tf-gpu-stub"]),
    "lucidrains__denoising-diffusion-pytorch/pyproject.toml": (
        0, {"frameworks.pytorch": "2.14.1+cpu", "frameworks.torchvision": TV},
        ["the project 'denoising-diffusion-pytorch' is not installed"], []),
    # an NGC base the knowledge base knows is kept; its requirement files live elsewhere in the build context
    "EleutherAI__gpt-neox/containers/docker/Dockerfile": (
        0, {"base": "nvcr.io/nvidia/pytorch:24.02-py3", "python": "3.10",
            "packages.pip": ["gpustat", "protobuf==3.20.*"]},
        ["'-r requirements.txt' not taken: a file of the build context", "'RUN python setup.py install' not taken"],
        []),
    "EleutherAI__gpt-neox/requirements/requirements.txt": (
        0, {"packages.pip.0": "ftfy>=6.0.1", "packages.pip.-1": "transformers==4.38.0"},
        ["DeeperSpeed.git@91d1c55ba037b5ada99ae14884dff87a4dc5b9ea#egg=deepspeed' not taken: a direct URL",
         "lm_dataformat.git@4eec05349977071bf67fc072290b95e31c8dd836' not taken: a direct URL"], []),
    # two stages install curl, git and wget: the profile takes each once and says so
    "huggingface__peft/docker/peft-cpu/Dockerfile": (
        0, {"python": "3.11", "packages.pip": ["librosa", "soundfile>=0.12.1", "scipy", "ipython", "jupyter"],
            "packages.apt": ["curl", "git", "wget", "git-lfs", "ffmpeg", "libsndfile1-dev"]},
        ["FROM continuumio/miniconda3:latest not kept", "'curl' not taken: installed again: taken once, from",
         "peft[test]@git+https://github.com/huggingface/peft' not taken: a direct URL"], []),
}

# --gpu RTX 4090 --driver 550.54.14 (the README's example host) on the second set: unpinned torch becomes the newest
# release whose CUDA build that driver runs; tensorflow-gpu on a pip base says why the profile stays a CPU one
GPU_CASES: dict[str, tuple[dict[str, object], list[str]]] = {
    "tatsu-lab__stanford_alpaca/requirements.txt": ({"frameworks.pytorch": "2.13.0+cu126", "cuda": "12.6"}, []),
    "haotian-liu__LLaVA/pyproject.toml": ({"frameworks.pytorch": "2.1.2+cu121", "cuda": "12.1"}, []),
    "lucidrains__denoising-diffusion-pytorch/pyproject.toml": (
        {"frameworks.pytorch": "2.13.0+cu126", "frameworks.torchvision": "0.28.0"}, []),
    "openai__guided-diffusion/evaluations/requirements.txt": (
        {"gpu.required": False}, ["tensorflow-gpu 2.11.0 loads the system's CUDA and cuDNN"]),
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


@pytest.mark.parametrize("name", sorted(GPU_CASES))
def test_a_real_file_adopted_for_a_gpu_host(tmp_path: Path, name: str) -> None:
    fields, says = GPU_CASES[name]
    out = tmp_path / "adopted.yaml"
    result = CliRunner().invoke(app, ["init", "--from", str(REAL / name), "-o", str(out), "--gpu", "RTX 4090",
                                      "--driver", "550.54.14"])
    assert result.exit_code == 0, result.output[-3000:]  # check passes what init writes
    data = yaml.safe_load(out.read_text(encoding="utf-8"))
    for dotted, want in fields.items():
        assert _get(data, dotted) == want, (dotted, _get(data, dotted))
    for text in says:
        assert text in result.output, text
    assert "nothing in the source is a CUDA build" not in result.output or "cuda" not in data


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


def test_a_file_name_of_any_shape_gives_a_valid_profile_name(tmp_path: Path) -> None:
    """`-o haotian-liu__LLaVA___devcontainer_Dockerfile.yaml` (the name a user gives after the file's path) was a
    profile name with '___', which the profile refuses: the written profile did not load."""
    from envgen.profile.values import NAME_RE
    from envgen.suggest.write import file_profile_name

    out = tmp_path / "haotian-liu__LLaVA___devcontainer_Dockerfile.yaml"
    result = CliRunner().invoke(app, ["init", "--from", str(REAL / "haotian-liu__LLaVA/.devcontainer/Dockerfile"),
                                      "-o", str(out)])
    assert result.exit_code == 0, result.output[-2000:]
    assert yaml.safe_load(out.read_text(encoding="utf-8"))["name"] == "haotian-liu__llava-devcontainer_dockerfile"
    for given in ("a._b", "x" * 80, "my--prof", ".hidden", "a_-b", "A B.C", "__"):
        name = file_profile_name(Path(f"{given}.yaml"))
        assert NAME_RE.match(name), (given, name)
