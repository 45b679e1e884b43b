"""Issue #44, the +1 package bench target on a pip GPU stack, on the real engine: the lock's NVIDIA CUDA wheels get a
layer of their own, first (plan/installers/uv.py: cuda_layer), so one more package in packages.pip rebuilds the
layers above it and keeps that one. Kept small: one NVIDIA wheel of a few MB (nvidia-cuda-runtime-cu12) and a pure
package, locked with uv and built without the smoke test (the layers are what is judged, not the stack)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from envgen.docker.sizes import layers
from envgen.pipeline.build import BuildOutcome, build
from tests.pipeline.conftest import alias, minimal_profile

if TYPE_CHECKING:
    from docker import DockerClient

CUDA = '"nvidia-cuda-runtime-cu12==12.1.105"'
PURE = '"six==1.16.0"'
MORE = '"colorama==0.4.6"'


def _layers(client: DockerClient, image: str) -> list[tuple[str, str]]:
    """(diff ID, the step that made it) of each layer, oldest first: the history's steps that hold bytes or that
    write the filesystem (a RUN, COPY or WORKDIR may make an empty layer; ENV, LABEL and the like make none)."""
    diff_ids: list[str] = client.api.inspect_image(image)["RootFS"]["Layers"]
    steps = [" ".join(str(h.get("CreatedBy") or "").split()) for h in reversed(client.api.history(image))
             if h.get("Size") or str(h.get("CreatedBy") or "").startswith(("RUN ", "COPY ", "ADD ", "WORKDIR "))]
    assert len(steps) == len(diff_ids), (steps, len(diff_ids))
    return list(zip(diff_ids, steps, strict=True))


def _index(found: list[tuple[str, str]], needle: str) -> int:
    return next(i for i, (_, step) in enumerate(found) if needle in step)


@pytest.fixture(scope="module")
def two_builds(write_profile: Callable[[str, str], str], cleanup_tags: list[str]) -> tuple[BuildOutcome, ...]:
    from envgen.lock.lock import lock

    out = []
    for pips in (f"{CUDA}, {PURE}", f"{CUDA}, {PURE}, {MORE}"):
        write_profile("pipe-cuda", minimal_profile(pips))
        lock("pipe-cuda")
        outcome = build("pipe-cuda", smoke=False)
        cleanup_tags.append(outcome.tag)
        out.append(outcome)
    cleanup_tags.append(alias("pipe-cuda"))
    return tuple(out)


def test_one_more_package_keeps_the_cuda_layer(two_builds: tuple[BuildOutcome, ...],
                                                docker_client: DockerClient) -> None:
    first, second = two_builds
    if first.builder == "classic":  # the classic builder installs through the staged pip path: no uv, no CUDA layer
        pytest.fail("this engine builds with the classic builder: the CUDA layer is uv's (BuildKit)")
    before, after = _layers(docker_client, first.image_id), _layers(docker_client, second.image_id)
    cuda, extras = _index(before, "requirements.cuda.txt"), _index(before, "requirements.extra.txt")
    environment = _index(before, "requirements.lock")
    assert cuda < environment < extras  # the CUDA wheels first, right after the venv
    assert _index(after, "requirements.cuda.txt") == cuda
    assert before[: extras] == after[: extras]  # the CUDA layer's diff ID, and every layer below the extras, kept
    assert before[cuda][0] == after[cuda][0]
    assert before[extras][0] != after[extras][0]  # the extras layer is the one rebuilt
    assert second.cached_steps > 0


def test_the_cuda_layer_holds_the_wheel_and_the_extras_layer_does_not(two_builds: tuple[BuildOutcome, ...],
                                                                       docker_client: DockerClient) -> None:
    first, second = two_builds
    sizes = {step: size for size, step in ((s.size, s.created_by) for s in layers(docker_client, second.image_id))}
    cuda = next(size for step, size in sizes.items() if "requirements.cuda.txt" in step)
    extras = next(size for step, size in sizes.items() if "requirements.extra.txt" in step)
    assert cuda > 500_000  # libcudart.so.12 and its headers: the wheel is ~0.9 MB
    assert extras < cuda  # six and colorama; uv found the NVIDIA wheel installed (requirements.extra.txt lists it)
    log: Any = second.log_path.read_text(encoding="utf-8") if second.log_path else ""
    assert "requirements.cuda.txt" in log
