"""Loading reads the whole package set: frameworks in packages.pip are lifted into frameworks, contradictory
pins name both lines, unmodelled framework packages are refused, and a minimal profile gets defaults."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from envgen.errors import ProfileError
from envgen.kb import load_kb
from envgen.plan.image import plan_image
from envgen.profile import load_profile
from envgen.profile.loader import profile_notes


def write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def test_frameworks_in_pip_are_lifted_with_their_lines(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        name: p
        base: debian:bookworm-slim
        python: "3.11"
        cuda: "11.8"
        packages:
          pip:
            - numpy==1.23.5
            - tensorflow[and-cuda]==2.14.0
            - torch==2.1.2+cu118
            - torchvision==0.16.2
        """)
    profile = load_profile(str(path))
    assert profile.frameworks.tensorflow == "2.14.0"
    assert profile.frameworks.tensorflow_package == "tensorflow[and-cuda]"
    assert profile.frameworks.pytorch == "2.1.2+cu118"
    assert profile.frameworks.torchvision == "0.16.2"
    assert profile.packages.pip == ["numpy==1.23.5"]
    notes = profile_notes(profile)
    assert notes is not None
    assert notes.where["frameworks.pytorch"] == f"{path}:9"
    assert any("torch==2.1.2+cu118 -> frameworks.pytorch" in line for line in notes.lifted)


@pytest.mark.parametrize(("pip", "frameworks", "says"), [
    (["numpy==1.23.5", "numpy==1.26.4"], "", ":9: field 'packages.pip[1]' = 'numpy==1.26.4' contradicts "
                                             "'packages.pip[0]' = 'numpy==1.23.5' at "),
    (["Tensorflow_CPU==2.13.0"], "frameworks: {tensorflow: '2.12.0', tensorflow_package: tensorflow-cpu}",
     "contradicts 'frameworks.tensorflow' = '2.12.0'"),
    (["torch==2.1.2+cu121"], "frameworks: {pytorch: 2.1.2+cu118}", "contradicts 'frameworks.pytorch'"),
    (["tf-nightly==2.16.0.dev20231101"], "", "nightly build"),
    (["tensorflow[foo]==2.12.0"], "", "the extra [foo] of tensorflow is not modelled"),
])
def test_contradictions_and_unmodelled_are_one_line_errors(tmp_path: Path, pip: list[str], frameworks: str,
                                                           says: str) -> None:
    items = "\n".join(f"    - {p}" for p in pip)
    path = write(tmp_path, f"name: p\nbase: debian:bookworm-slim\npython: \"3.11\"\ngpu: {{required: false}}\n"
                           f"{frameworks}\npackages:\n  pip:\n{items}\n")
    with pytest.raises(ProfileError) as err:
        load_profile(str(path))
    line = err.value.one_line()
    assert says in line and "\n" not in line
    assert line.startswith(str(path))


def test_jax_is_modelled_not_refused(tmp_path: Path) -> None:
    """JAX stays a package of packages.pip (envgen's check reads its cuDNN needs, kb/data/extensions.yaml)."""
    path = write(tmp_path, "name: p\nbase: debian:bookworm-slim\npython: \"3.11\"\ncuda: \"12.8\"\n"
                           "gpu: {targets: [A100]}\npackages:\n  pip:\n    - jax[cuda12]==0.12.0.1\n")
    profile = load_profile(str(path))
    assert profile.packages.pip == ["jax[cuda12]==0.12.0.1"]


def test_conda_framework_and_conda_pip_clash(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        name: p
        base: ubuntu:22.04
        python: "3.10"
        gpu: {required: false}
        packages:
          conda: [numpy=1.21.6]
          pip: [numpy==1.23.5]
        """)
    with pytest.raises(ProfileError, match=r"p.yaml:7: field 'packages.pip\[0\]' .* contradicts 'packages.conda\[0\]'"):
        load_profile(str(path))
    path.write_text(path.read_text().replace("numpy=1.21.6", "pytorch=1.7.1").replace("pip: [numpy==1.23.5]", ""))
    with pytest.raises(ProfileError, match="not from conda"):
        load_profile(str(path))


@pytest.mark.parametrize(("conda", "says"), [
    ("jax=0.4.20", "envgen models JAX's pip wheels"),  # was "move it to frameworks: (frameworks.tensorflow)"
    ("jaxlib=0.4.20", "envgen models JAX's pip wheels"),
    ("torchvision=0.8.2", "frameworks.torchvision"),  # was frameworks.pytorch
    ("pytorch-cuda=11.8", "frameworks.pytorch"),
    ("tensorflow-base=2.4.1", "frameworks.tensorflow"),
])
def test_a_conda_framework_is_refused_with_its_own_way_out(tmp_path: Path, conda: str, says: str) -> None:
    path = write(tmp_path, f"name: p\nbase: ubuntu:22.04\npython: \"3.10\"\ngpu: {{required: false}}\n"
                           f"packages:\n  conda: [{conda}]\n")
    with pytest.raises(ProfileError) as err:
        load_profile(str(path))
    line = err.value.one_line()
    assert says in line and "packages.conda[0]" in line, line


def test_minimal_profile_gets_defaults_and_show_prints_them(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        name: p
        base: debian:bookworm-slim
        python: "3.11"
        gpu: {required: false}
        """)
    assert load_profile(str(path)).installer == "pip"
    conda = write(tmp_path, """\
        name: p
        base: ubuntu:22.04
        python: "3.9"
        gpu: {required: false}
        packages: {conda: [numpy=1.21.6]}
        """)
    profile = load_profile(str(conda))
    assert (profile.installer, profile.channels) == ("conda", ["conda-forge"])
    shown = subprocess.run([sys.executable, "-m", "envgen", "show", str(conda)], capture_output=True, text=True,
                           check=True).stdout
    assert "# default applied: installer: conda (the profile lists conda packages or channels)" in shown
    assert "# default applied: channels: [conda-forge]" in shown


def test_an_ngc_base_brings_cuda_cudnn_and_python_from_its_kb_row(tmp_path: Path) -> None:
    path = write(tmp_path, """\
        name: p
        base: nvcr.io/nvidia/pytorch:24.05-py3
        gpu: {targets: [A100]}
        """)
    kb = load_kb()
    loaded = load_profile(str(path), kb=kb)
    assert (loaded.cuda, loaded.cudnn, loaded.python) == (None, None, None)  # as written: planning fills them
    plan = plan_image(loaded, kb)
    profile = plan.profile
    assert (profile.cuda, profile.cudnn, profile.python) == ("12.4", "9.1.0.70", "3.10")
    assert any(line.startswith("cuda: '12.4' (the NGC release's, ngc.yaml#") for line in plan.defaults)
    unknown = write(tmp_path, "name: p\nbase: nvcr.io/nvidia/tensorflow:99.01-tf2-py3\ngpu: {targets: [A100]}\n")
    # no row: the nearest known release's CUDA and Python (check then warns ngc-unknown), not an input error; the
    # nearest before 99.01 is 25.02-tf2-py3 (CUDA 12.8.0, Python 3.12, no cuDNN stated)
    plan = plan_image(load_profile(str(unknown), kb=kb), kb)
    guessed = plan.profile
    assert guessed.cudnn is None and (guessed.cuda, guessed.python) == ("12.8", "3.12")
    assert any("assumed from the nearest known NGC release" in line for line in plan.defaults)
