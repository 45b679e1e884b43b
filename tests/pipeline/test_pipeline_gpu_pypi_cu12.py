"""The twin of `a100-pypi` with the CUDA 12 wheels (the widely copied "TF 2.12 on CUDA 12.1" recipe): rejected by
the check, and built anyway with --no-check it fails the library tier with the silent-CPU diagnosis naming
libcudart.so.11.0. A module of its own (a100-pypi itself is test_pipeline_gpu_pypi.py), so that the suite's disk
keeping (tests/disk.py) runs between the two 5.4 GB builds: together they grew the disk by ~22 GB.

Cost, measured here (2 cores): cold ~5 min (TensorFlow and the CUDA 12 wheels); warm, from the BuildKit layer cache
and its pip cache mount in seconds.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from envgen.docker import inspect_image, remove_image
from envgen.errors import CheckFailed, SmokeFailed
from envgen.pipeline.build import build
from tests.pipeline.conftest import alias

if TYPE_CHECKING:
    from docker import DockerClient

pytestmark = pytest.mark.slow

PROFILES = Path(__file__).resolve().parents[2] / "profiles"
CU12 = {  # the twin: the same stack with the CUDA 12.1 wheels
    "nvidia-cuda-runtime-cu11==11.8.89": "nvidia-cuda-runtime-cu12==12.1.105",
    "nvidia-cublas-cu11==11.11.3.6": "nvidia-cublas-cu12==12.1.3.1",
    "nvidia-cufft-cu11==10.9.0.58": "nvidia-cufft-cu12==11.0.2.54",
    "nvidia-curand-cu11==10.3.0.86": "nvidia-curand-cu12==10.3.2.106",
    "nvidia-cusolver-cu11==11.4.1.48": "nvidia-cusolver-cu12==11.4.5.107",
    "nvidia-cusparse-cu11==11.7.5.86": "nvidia-cusparse-cu12==12.1.0.106",
    "nvidia-cudnn-cu11==8.6.0.163": "nvidia-cudnn-cu12==8.9.2.26",
    "nvidia-cuda-nvcc-cu11==11.8.89": "nvidia-cuda-nvcc-cu12==12.1.105",
    'cuda: "11.8"': 'cuda: "12.1"',
    'cudnn: "8.6"': 'cudnn: "8.9"',
}
TWIN = "i10pipe-a100-pypi-cu12"
TWIN_LOCK = Path(__file__).resolve().parents[1] / "fixtures" / "profiles" / "a100-pypi-cu12.lock.txt"


@pytest.fixture(scope="module")
def twin(write_profile: Callable[[str, str], str], envgen_home: Path) -> str:
    text = (PROFILES / "a100-pypi.yaml").read_text(encoding="utf-8")
    body = text[text.index("name: a100-pypi"):].split("\n", 1)[1]
    for old, new in CU12.items():
        assert old in body, old
        body = body.replace(old, new)
    name = write_profile(TWIN, body)
    # its lock (made with `envgen lock` for these inputs): nothing is resolved at build time
    shutil.copy(TWIN_LOCK, envgen_home / "profiles" / f"{name}.lock.txt")
    return name


def test_twin_is_rejected_before_building(twin: str) -> None:
    with pytest.raises(CheckFailed, match=r"tf-cuda-mismatch.*libcudart\.so\.11\.0"):
        build(twin)


def test_twin_built_anyway_fails_the_library_tier_as_silent_cpu(twin: str, docker_client: DockerClient,
                                                                  envgen_home: Path) -> None:
    echoed: list[str] = []
    with pytest.raises(SmokeFailed) as caught:
        build(twin, check=False, echo=echoed.append)
    assert any(line.startswith("warning: --no-check") for line in echoed)
    text = caught.value.tail
    assert "libraries.load" in text
    assert "cannot load libcudart.so.11.0 (needed by tensorflow)" in text
    assert ("cause: tensorflow was built for a CUDA whose library libcudart.so.11.0 is not in this "
            "environment: it does not fail, it logs a warning and silently runs every op on the CPU") in text
    assert "nvidia-cuda-runtime-cu11" in text
    assert inspect_image(docker_client, alias(TWIN)) is None  # nothing tagged
    failed = [json.loads(p.read_text()) for p in (envgen_home / "state" / "validations").glob("*.json")]
    twin_records = [r for r in failed if r["profile"] == TWIN]
    assert twin_records and all(r["status"] == "fail" and r["tier"] == "" for r in twin_records)
    for record in twin_records:
        remove_image(docker_client, record["image_id"], force=True)
