"""`envgen init --from SOURCE`: every file of tests/corpus/adopt (requirements.txt with comments, -r, markers,
extras, hashes, the PyTorch index, a git+https line; environment.yml with cudatoolkit; pyproject.toml) adopted
through the real command, loaded and judged by `envgen check`, with the verdict and the fields asserted."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from envgen.check import HostSpec, check_profile
from envgen.cli import app
from envgen.kb import KnowledgeBase
from envgen.profile import load_profile

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "adopt"

# (file, extra options, fields of the loaded profile: dotted path -> value, text the notes must hold)
CASES = [
    ("requirements-train-cu121.txt", [], {"frameworks.pytorch": "2.2.2+cu121", "cuda": "12.1",
                                          "frameworks.torchvision": "0.17.2"},
     ["peft.git@v0.10.0' not taken: a direct URL", "'-e .' not taken", "the --hash of 'rich==13.7.1'",
      "download.pytorch.org/whl/cu121 not made a mirror"]),
    ("requirements-cpu-minimal.txt", [], {"frameworks.pytorch": None, "gpu.required": False}, []),
    ("requirements-local-cu118.txt", [], {"frameworks.pytorch": "2.1.2+cu118", "frameworks.torchaudio": "2.1.2"},
     ["-f is a pip option"]),
    ("requirements-compiled.txt", [], {"gpu.required": False}, ["the --hash of 'pygments==2.17.2'"]),
    ("requirements-tf-and-cuda.txt", [], {"frameworks.tensorflow": "2.15.1", "cuda": "12.2"}, []),
    ("requirements-private-index.txt", [], {"mirrors.pip_index_url": "https://pypi.internal.example.com/simple",
                                            "mirrors.pip_trusted_hosts": ["pypi.internal.example.com"]}, []),
    ("requirements-torch-range.txt", [], {"frameworks.pytorch": "2.2.2+cpu"}, ["the profile takes the CPU build"]),
    ("requirements-torch-range.txt", ["--gpu", "RTX 4090", "--driver", "550.54.14"],
     {"frameworks.pytorch": "2.2.2+cu121", "gpu.targets": ["RTX 4090"]}, []),
    ("requirements-cpu-torch.txt", [], {"frameworks.pytorch": "2.2.2+cpu", "gpu.required": False}, []),
    ("conda-torch-cu118.yml", [], {"installer": "conda", "python": "3.10", "frameworks.pytorch": "2.1.2+cu118",
                                   "cuda": "11.8", "channels": ["pytorch", "nvidia", "conda-forge"]},
     ["'ffmpeg' not taken", "channel 'defaults'"]),
    ("conda-cudatoolkit.yml", [], {"cuda": "11.2", "python": "3.9", "frameworks.tensorflow": "2.10.1"}, []),
    ("environment-cpu.yml", [], {"installer": "conda", "gpu.required": False}, []),
    ("pyproject-app.toml", [], {"frameworks.pytorch": None}, []),
    ("pyproject-app.toml", ["--group", "ml", "--gpu", "A100"], {"frameworks.pytorch": "2.3.1+cu121"}, []),
    ("pyproject-groups.toml", ["--group", "test"], {"python": "3.11"}, []),
    ("Dockerfile.venv", [], {"base": "debian:bookworm-slim", "python": "3.11",
                             "packages.apt": ["python3", "python3-venv"]},
     ["'ENV PATH=/opt/venv/bin:$PATH' not taken", "'RUN python3 -m venv /opt/venv' not taken"]),
    ("Dockerfile.cuda", ["--gpu", "A100"], {"base": "nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04", "python": "3.10",
                                            "frameworks.pytorch": "2.2.2+cu121",
                                            "env": {"DEBIAN_FRONTEND": "noninteractive", "PYTHONUNBUFFERED": "1"}},
     ["'COPY requirements-base.txt .' not taken", "install.sh | sh' not taken", "'CMD [\"python3\", \"train.py\"]'"]),
]


def _field(profile: object, dotted: str) -> object:
    value = profile
    for part in dotted.split("."):
        value = getattr(value, part)
    return value


@pytest.mark.parametrize(("name", "options", "fields", "notes"), CASES,
                         ids=[f"{c[0]}{' ' + ' '.join(c[1]) if c[1] else ''}" for c in CASES])
def test_each_corpus_file_is_adopted_and_passes_check(tmp_path: Path, kb: KnowledgeBase, name: str,
                                                      options: list[str], fields: dict[str, object],
                                                      notes: list[str]) -> None:
    out = tmp_path / "adopted.yaml"
    result = CliRunner().invoke(app, ["init", "--from", str(CORPUS / name), "-o", str(out), *options])
    assert result.exit_code == 0, result.output
    assert "0 error(s)" in result.output or "no findings" in result.output
    for note in notes:
        assert note in result.output and note in out.read_text(encoding="utf-8"), note
    profile = load_profile(str(out))
    for dotted, want in fields.items():
        assert _field(profile, dotted) == want, (dotted, _field(profile, dotted))
    gpus = [options[options.index("--gpu") + 1]] if "--gpu" in options else []
    errors = [f for f in check_profile(profile, kb, HostSpec(gpus=gpus)) if f.severity == "error"]
    assert errors == []


def test_every_value_names_its_line(tmp_path: Path) -> None:
    out = tmp_path / "svc.yaml"
    assert CliRunner().invoke(app, ["init", "--from", str(CORPUS / "requirements-train-cu121.txt"), "-o",
                                    str(out)]).exit_code == 0
    text = out.read_text(encoding="utf-8")
    listed = [line for line in text.splitlines() if line.startswith("    - ")]
    assert listed and all("  # " in line for line in listed)
    assert '"numpy>=1.24,<2"  # ' + str(CORPUS / "requirements-base.txt") + ":1" in text  # the -r include's line
    assert '"tomli==2.0.1; python_version < \\"3.11\\""' in text  # the marker kept
    assert '"transformers[torch]>=4.38,<5"' in text  # the extra kept
    assert yaml.safe_load(text)["name"] == "svc"


def test_a_profile_with_errors_is_written_and_check_says_why(tmp_path: Path) -> None:
    source = tmp_path / "requirements.txt"
    source.write_text("torch==2.2.2+cu121\n", encoding="utf-8")
    out = tmp_path / "old.yaml"
    result = CliRunner().invoke(app, ["init", "--from", str(source), "-o", str(out), "--gpu", "A100",
                                      "--driver", "450.80.02"])
    assert result.exit_code == 1 and "ERROR" in result.output and out.exists()


@pytest.mark.parametrize(("args", "says"), [
    (["--from", "/nonexistent/requirements.txt"], "no such file"),
    (["--from", str(CORPUS / "requirements-cpu-minimal.txt"), "--group", "ml"], "groups are a pyproject.toml's"),
    (["--from", str(CORPUS / "pyproject-app.toml"), "--group", "nope"], "use one of: dev, ml"),
    (["--from", str(CORPUS / "requirements-cpu-minimal.txt"), "--frameworks", "pytorch"], "the source's"),
])
def test_bad_sources_are_refused_in_one_line(args: list[str], says: str) -> None:
    result = CliRunner().invoke(app, ["init", *args])
    assert result.exit_code == 2 and says in result.output, result.output
