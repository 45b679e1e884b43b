"""What a layer mounts is part of its step (issue 28): a profile that adds its first packages.pip entry ships
extras.sh in the context, which the environment layer once bound with the whole envgen/sh folder, so its cache
key moved and the environment was installed again (23.0 s of a 34 s cold build in bench/bench_build.py). Built
for real: the environment layer of the profile with the extra is a cache hit, the very layer of the one without."""

from __future__ import annotations

import re
from collections.abc import Callable

from docker import DockerClient

from envgen.kb import load_kb
from envgen.pipeline.build import build
from envgen.plan.image import plan_image
from envgen.profile import load_profile
from envgen.render.core import render_in_memory
from tests.pipeline.conftest import alias, minimal_profile


def _environment_layer(docker_client: DockerClient, image_id: str) -> str:
    """The layer the runtime stage's `COPY --from=build /opt/env /opt/env` made: the build stage's environment, as
    its files are (a RUN run again makes the venv anew, with new times: another layer)."""
    layers = docker_client.api.inspect_image(image_id)["RootFS"]["Layers"]
    history = [h for h in docker_client.api.history(image_id)[::-1] if h["Size"] or "COPY" in h["CreatedBy"]]
    return str(layers[[i for i, h in enumerate(history) if "/opt/env /opt/env" in h["CreatedBy"]][0]])


def test_the_first_extra_package_keeps_the_environment_layer(
        docker_client: DockerClient, write_profile: Callable[[str, str], str], cleanup_tags: list[str]) -> None:
    plain = write_profile("pipe-cache-none", minimal_profile(""))
    extra = write_profile("pipe-cache-plus", minimal_profile('"six==1.17.0"'))
    outcomes = []
    for name in (plain, extra):
        outcomes.append(build(name, smoke=False))
        cleanup_tags += [outcomes[-1].tag, alias(name)]
    none, plus = outcomes
    shipped = [set(render_in_memory(plan_image(load_profile(name), load_kb())).files) for name in (plain, extra)]
    assert "envgen/sh/extras.sh" in shipped[1] - shipped[0]  # the file that once moved the environment's key
    assert _environment_layer(docker_client, plus.image_id) == _environment_layer(docker_client, none.image_id)
    log = plus.log_path.read_text(encoding="utf-8") if plus.log_path else ""
    steps = re.findall(r"^(#\d+) \[build \d+/\d+\] RUN .*-m venv", log, flags=re.MULTILINE)
    assert steps and all(f"{step} CACHED" in log for step in steps), log[-3000:]
