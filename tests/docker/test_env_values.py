"""Issue #32, item 8: environment values as users write them (`TORCH_CUDA_ARCH_LIST: "8.0;8.6+PTX"`, `CFLAGS:
"-O2 -g"`) are accepted and reach the image exactly, through the ENV instruction envgen renders, on both builders
of the real engine. (Before, the profile refused them: letters, digits and _.,:/=+@%- only.)"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from envgen.docker.build import build_image
from envgen.plan.image import plan_image
from envgen.profile import load_profile
from envgen.render import render_in_memory

if TYPE_CHECKING:
    from docker import DockerClient

    from envgen.docker import BuilderInfo

pytestmark = pytest.mark.docker

VALUES = {
    "TORCH_CUDA_ARCH_LIST": "8.0;8.6+PTX",
    "CFLAGS": "-O2 -g",
    "NOTE": "it's (a) [b] {c} <d> | e & f; g ~ h # i ! j ? k * l ^ m",
    "EMPTY": "",
}


def _profile(tmp_path: Path) -> Path:
    import yaml

    path = tmp_path / "envq.yaml"
    path.write_text("name: envq\nbase: debian:bookworm-slim\nlocal_base: true\ninstaller: pip\npython: \"3.11\"\n"
                    "gpu:\n  required: false\npackages:\n  pip: [six==1.16.0]\n"
                    + yaml.safe_dump({"env": VALUES}, default_style='"'))
    return path


def _env_instruction(dockerfile: str) -> str:
    """The rendered ENV instruction, continuation lines included."""
    lines = dockerfile.split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("ENV ") and "CFLAGS" in "".join(lines[i:i + 9]))
    end = start
    while lines[end].endswith("\\"):
        end += 1
    return "\n".join(lines[start:end + 1])


def test_env_values_reach_the_image_literally(tmp_path: Path, any_builder: BuilderInfo,
                                              docker_client: DockerClient, base_image: str,
                                              new_tag: Callable[[str], str]) -> None:
    from envgen.kb import load_kb

    kb = load_kb()
    profile = load_profile(str(_profile(tmp_path)), kb=kb)
    assert dict(profile.env) == VALUES
    instruction = _env_instruction(render_in_memory(plan_image(profile, kb)).files["Dockerfile"].decode())
    ctx = tmp_path / "ctx"
    ctx.mkdir()
    (ctx / "Dockerfile").write_text(f"FROM {base_image}\n{instruction}\n")
    ref = new_tag("envq")
    build_image(ctx, builder=any_builder, tags=[ref], log_path=tmp_path / "build.log", client=docker_client)
    env = dict(item.split("=", 1) for item in docker_client.api.inspect_image(ref)["Config"]["Env"])
    for key, value in VALUES.items():
        assert env[key] == value, (key, env.get(key))
