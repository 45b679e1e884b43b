"""A vLLM image built here (issue #33): tests/fixtures/profiles/vllm-cpu-host.yaml (vLLM 0.11.0 on PyPI's torch
2.8.0, the CUDA 12.8 build) from its lock (the whole chain, sha256-pinned), installed offline from a wheelhouse,
passes the probe's library tier (ext.vllm imports vllm and dlopens the shared objects it ships: without a driver 4 of
7 load, vllm._C and two others list libcuda.so.1 and wait for the GPU tier), and the installed environment is exactly
the lock: torch stays at the profile's 2.8.0 (vLLM's install did not replace it).

The wheels (5 GB: torch 888 MB, nvidia-cudnn 707 MB, nvidia-cublas 594 MB, vllm 438 MB, ...) are kept in a
wheelhouse outside the repository: $ENVGEN_VLLM_WHEELHOUSE, else <tmp>/envgen-vllm-wheelhouse; the wheels missing
there are downloaded first (pip, hash-checked against the lock). The image is removed at the end. Cost, measured
here: see the figures printed with -s (wall time, image size) and docs/benchmarks.md.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from envgen.docker import inspect_image
from envgen.docker.run import run_container
from envgen.errors import BuildFailed
from envgen.lock.wheels import manylinux_platforms, prefetch
from envgen.pipeline.build import SEALED_FREEZE, BuildOutcome, build
from envgen.pipeline.tiers import host_plan
from envgen.plan.lockfile import parse_lock
from envgen.profile.requirements import canonical
from tests.pipeline.conftest import alias

if TYPE_CHECKING:
    from docker import DockerClient

pytestmark = pytest.mark.slow

PROFILE = Path(__file__).resolve().parents[1] / "fixtures" / "profiles" / "vllm-cpu-host.yaml"
LOCK = PROFILE.with_name("vllm-cpu-host.lock.txt")
TORCH = "2.8.0"  # the profile's pin, and vllm 0.11.0's Requires-Dist torch==2.8.0
CHAIN = ("vllm", "torch", "torchvision", "torchaudio", "xformers", "triton", "nvidia-cudnn-cu12",
         "nvidia-cuda-runtime-cu12", "nvidia-cublas-cu12", "nvidia-nccl-cu12")


def _wheelhouse() -> Path:
    given = os.environ.get("ENVGEN_VLLM_WHEELHOUSE")
    return Path(given) if given else Path(tempfile.gettempdir()) / "envgen-vllm-wheelhouse"


def _lock_pins() -> dict[str, tuple[str, tuple[str, ...]]]:
    """name -> (version, sha256s) of every pip package the lock installs (the environment, extras and tools)."""
    parsed = parse_lock(LOCK.read_text(encoding="utf-8"))
    pins: dict[str, tuple[str, tuple[str, ...]]] = {}
    for entry in (*parsed.environment, *parsed.extras, *parsed.tools):  # tools: pip and uv, installed too
        name, _, version = entry.pin.partition("==")
        pins[name.lower()] = (version, tuple(entry.sha256))
    return pins


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The lock's wheels, downloaded into the wheelhouse where missing (pip checks each sha256 against the lock)."""
    house = _wheelhouse()
    requirements = tmp_path_factory.mktemp("vllm-req") / "requirements.txt"
    requirements.write_text("".join(f"{name}=={version} " + " ".join(f"--hash=sha256:{h}" for h in hashes) + "\n"
                                    for name, (version, hashes) in sorted(_lock_pins().items())), encoding="utf-8")
    log = requirements.with_name("download.log")
    started = time.monotonic()
    before = sum(p.stat().st_size for p in house.glob("*.whl")) if house.is_dir() else 0
    for offline in (True, False):  # the wheelhouse alone first (no index is asked), then PyPI for what it lacks
        try:
            prefetch([requirements], house, "3.11", find_links=[str(house)], index_urls=[],
                     platforms=manylinux_platforms("2.36"), log_path=log, offline=offline)
            break
        except BuildFailed:
            if not offline:
                raise
    after = sum(p.stat().st_size for p in house.glob("*.whl"))
    print(f"\nwheelhouse {house}: {after / 1e9:.2f} GB ({(after - before) / 1e9:.2f} GB downloaded in "
          f"{time.monotonic() - started:.0f} s)")
    return house


@pytest.fixture(scope="module")
def outcome(envgen_home: Path, wheelhouse: Path, cleanup_tags: list[str]) -> Iterator[BuildOutcome]:
    cleanup_tags.append(alias("vllm-cpu-host"))
    started = time.monotonic()
    built = build(str(PROFILE), wheelhouse=wheelhouse, offline=True)
    cleanup_tags.append(built.tag)
    print(f"\n{built.summary()}\nbuild + smoke wall time {time.monotonic() - started:.0f} s")
    yield built


def test_the_lock_holds_the_whole_chain_with_hashes() -> None:
    pins = _lock_pins()
    missing = [name for name in CHAIN if name not in pins]
    assert not missing, f"not in {LOCK.name}: {missing}"
    assert pins["torch"][0] == TORCH and pins["vllm"][0] == "0.11.0"
    assert all(len(h) == 64 for _, hashes in pins.values() for h in hashes) and all(h for _, h in pins.values())


def test_vllm_image_passes_its_library_tier(outcome: BuildOutcome, docker_client: DockerClient) -> None:
    report = outcome.smoke
    assert report is not None and report.passed, report and report.table()
    expected = "libraries" if host_plan(True).tiers == "libraries" else "gpu"
    assert outcome.validated and outcome.tier == expected
    ext = report.check("ext.vllm")
    assert ext is not None and ext.status == "pass", ext
    assert ext.figures["version"] == "0.11.0" and ext.figures["compiled_ops"] in ("loaded", "needs the driver")
    print("\n" + "\n".join(f"{c.name}: {c.status}: {c.message}" for c in report.checks))
    summary = inspect_image(docker_client, outcome.tag)
    assert summary is not None
    print(f"image {outcome.tag}: {summary.size / 1e9:.2f} GB")


def test_the_install_left_torch_and_the_whole_lock_unchanged(outcome: BuildOutcome,
                                                              docker_client: DockerClient) -> None:
    """The sealed `pip freeze --all` holds every locked package at its locked version: torch 2.8.0 included."""
    result = run_container(docker_client, outcome.tag, ["cat", SEALED_FREEZE], gpus="none")
    assert result.exit_code == 0, result.output
    frozen = {canonical(name): version for name, _, version in
              (line.partition("==") for line in result.output.splitlines() if "==" in line)}
    assert frozen.get("torch") == TORCH, frozen.get("torch")
    installed = {name: pin for name, pin in _lock_pins().items() if name != "uv"}  # uv: bind-mounted, never installed
    differ = {name: (version, frozen.get(canonical(name))) for name, (version, _) in installed.items()
              if frozen.get(canonical(name)) != version}
    assert not differ, differ
