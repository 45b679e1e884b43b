"""Issue 38 item 5: `envgen init --from` with frameworks the source leaves unpinned picks the newest releases that fit
what was asked: with --gpu/--driver the newest torch whose CUDA build `envgen check` passes (the README's own example,
`--gpu "RTX 4090" --driver 550.54.14`, wrote a CPU profile of torch 2.15.0 with two notes contradicting each other),
with --python or a base's python3 a release that has wheels for it; torchvision/torchaudio are torch's own, and a
source naming torchvision alone gets its torch. Expectations are computed from the knowledge base, so a KB refresh
moves them with it."""

from __future__ import annotations

from pathlib import Path

import pytest

from envgen.check import HostSpec, check_profile
from envgen.kb import KnowledgeBase
from envgen.kb.versions import minor, vtuple
from envgen.profile import load_profile
from envgen.suggest.adopt.fit import build_from_check
from tests.unit.test_adopt_kinds import _adopt


def _init(tmp_path: Path, text: str, *options: str, name: str = "requirements.txt") -> tuple[int, str, dict]:
    return _adopt(tmp_path, name, text, *options)


def _newest_with_torchvision(kb: KnowledgeBase, python: str = "3.11") -> str:
    return max((r for r in kb.pytorch if r.torchvision and vtuple(r.python_min) <= vtuple(python)
                <= vtuple(r.python_max)), key=lambda r: vtuple(r.version)).version


def test_readme_example_unpinned_torch_gets_the_newest_build_the_driver_runs(tmp_path: Path,
                                                                             kb: KnowledgeBase) -> None:
    code, output, data = _init(tmp_path, "torch\ntorchvision\nnumpy==1.26.4\n", "--gpu", "RTX 4090",
                               "--driver", "550.54.14")
    assert code == 0 and "0 error(s)" in output, output
    version, _, tag = data["frameworks"]["pytorch"].partition("+")
    assert tag.startswith("cu") and data["gpu"] == {"targets": ["RTX 4090"]}, data
    assert data["frameworks"]["torchvision"] == kb.torch_release(version).torchvision
    assert "nothing in the source is a CUDA build" not in output and "give --gpu" not in output, output
    base = {"name": "t", "base": data["base"], "installer": "pip", "python": data["python"]}
    newer = [r.version for r in kb.pytorch if vtuple(r.version) > vtuple(version)]
    assert newer, "the KB's newest torch runs on this driver: the case no longer tests the choice"
    for other in newer:  # every newer release's CUDA builds fail check for this GPU and driver
        assert build_from_check(kb, {**base, "frameworks": {"pytorch": other}}, other, ("RTX 4090",),
                                "550.54.14") is None, other
    profile = load_profile(str(tmp_path / "adopted.yaml"))
    host = HostSpec(gpus=["RTX 4090"], driver="550.54.14")
    assert [f for f in check_profile(profile, kb, host) if f.severity == "error"] == []


def test_no_build_for_the_driver_says_so_once_and_writes_a_cpu_build(tmp_path: Path) -> None:
    code, output, data = _init(tmp_path, "torch>=2.14\n", "--gpu", "RTX 4090", "--driver", "550.54.14")
    assert data["frameworks"]["pytorch"].endswith("+cpu") and data["gpu"] == {"required": False}, data
    said = "no release of torch in range has a CUDA build `envgen check` passes for --gpu RTX 4090 with driver " \
        "550.54.14"
    assert output.count(said) == 1 and said in (tmp_path / "adopted.yaml").read_text(), output
    assert "nothing in the source is a CUDA build" not in output and "give --gpu" not in output, output


def test_without_gpu_torch_and_torchvision_are_one_release(tmp_path: Path, kb: KnowledgeBase) -> None:
    code, output, data = _init(tmp_path, "torch\ntorchvision\n")
    assert code == 0, output
    torch = _newest_with_torchvision(kb)
    assert data["frameworks"] == {"pytorch": f"{torch}+cpu", "torchvision": kb.torch_release(torch).torchvision}


@pytest.mark.parametrize("python", ["3.10", "3.11"])
def test_python_asked_picks_a_release_with_its_wheels(tmp_path: Path, kb: KnowledgeBase, python: str) -> None:
    code, output, data = _init(tmp_path, "torch\n", "--python", python)
    assert code == 0, output
    version = data["frameworks"]["pytorch"].partition("+")[0]
    release = kb.torch_release(version)
    assert vtuple(release.python_min) <= vtuple(python) <= vtuple(release.python_max), (version, python)
    newest = max((r for r in kb.pytorch if vtuple(r.python_min) <= vtuple(python) <= vtuple(r.python_max)),
                 key=lambda r: vtuple(r.version))
    assert version == newest.version


def test_a_dockerfile_base_python_picks_a_release_with_its_wheels(tmp_path: Path, kb: KnowledgeBase) -> None:
    """The issue's Dockerfile: no torch pin on a base whose python3 is 3.10 was refused ("torch 2.15.0 takes
    3.11-3.15")."""
    base = "nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04"
    code, output, data = _init(tmp_path, f"FROM {base}\nRUN pip install torch numpy==1.26.4\n", name="Dockerfile")
    assert code == 0, output
    python = minor(kb.base_image(base).python)
    assert data["python"] == python
    release = kb.torch_release(data["frameworks"]["pytorch"].partition("+")[0])
    assert vtuple(release.python_min) <= vtuple(python) <= vtuple(release.python_max)


def test_torchvision_alone_brings_its_torch(tmp_path: Path, kb: KnowledgeBase) -> None:
    release = next(r for r in sorted(kb.pytorch, key=lambda r: vtuple(r.version), reverse=True) if r.torchvision)
    code, output, data = _init(tmp_path, f"torchvision=={release.torchvision}\n")
    assert code == 0 and "0 error(s)" in output, output
    assert data["frameworks"] == {"pytorch": f"{release.version}+cpu", "torchvision": release.torchvision}
    assert f"torchvision {release.torchvision}'s own torch" in (tmp_path / "adopted.yaml").read_text()


def test_a_cpu_profile_gets_tensorflow_cpu_where_pypi_has_it(tmp_path: Path, kb: KnowledgeBase) -> None:
    """Issue 38: a CPU profile got `tensorflow` (every import logs a cuInit error) instead of `tensorflow-cpu`."""
    version = "2.15.1"
    assert any(r.distribution == "tensorflow-cpu" and r.version == version for r in kb.framework_requires)
    code, output, data = _init(tmp_path, f"tensorflow=={version}\n")
    assert code == 0 and data["frameworks"] == {"tensorflow": version, "tensorflow_package": "tensorflow-cpu"}, data
    (tmp_path / "gpu").mkdir()
    code, output, data = _init(tmp_path / "gpu", f"tensorflow[and-cuda]=={version}\n")
    assert data["frameworks"]["tensorflow_package"] == "tensorflow[and-cuda]", data
