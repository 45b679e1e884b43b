"""The Slurm export submitted for real, to the single-node Slurm of scripts/slurm-local (munge, slurmctld, slurmd
from Debian's packages), with `sbatch --wait`: the probe runs first on the node, then the user's command, whose
output lands in the job's file; a node whose probe fails ends the job with exit 3 and the probe's diagnosis before
the command starts; a job array runs one image for every task; a GPU profile's job asks Slurm for --gres.

The image runs through Docker on the node (`--runtime docker`; Podman's route pulls from the local registry);
Apptainer is not packaged for Debian, so its route stays rendered and linted (tests/unit/test_export_tools.py).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from envgen.docker import build_image, detect_builder, remove_image
from envgen.pipeline.build import build
from envgen.pipeline.prepare import export_profiles
from tests.pipeline.conftest import alias, minimal_profile

if TYPE_CHECKING:
    from docker import DockerClient

SLURM_START = "sudo scripts/slurm-local start"


@pytest.fixture(scope="module")
def slurm(unavailable: Callable[[str], NoReturn]) -> str:
    """The Slurm version, once the node is up (sinfo answers)."""
    if shutil.which("sbatch") is None:
        unavailable(f"no sbatch on PATH ({SLURM_START} installs and starts Slurm)")
    done = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], capture_output=True, text=True, timeout=30, check=False)
    if done.returncode != 0 or not done.stdout.strip().startswith(("idle", "mixed", "allocated")):
        unavailable(f"Slurm does not answer ({(done.stderr or done.stdout).strip()[:200]}); run {SLURM_START}")
    return subprocess.run(["sinfo", "-V"], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(scope="module")
def built(slurm: str, envgen_home: Path, write_profile: Callable[[str, str], str],
          cleanup_tags: list[str]) -> Any:
    name = write_profile("pipe-slurm", minimal_profile('"six==1.16.0"'))
    outcome = build(name)
    cleanup_tags += [outcome.tag, alias(name)]
    return outcome


def _submit(script: Path, *args: str, image: str, array: bool = False) -> tuple[int, dict[str, str]]:
    """``sbatch --wait`` in the script's directory; (exit status, {output file name: text})."""
    before = set(os.listdir(script.parent))
    done = subprocess.run(["sbatch", "--wait", script.name, *args], cwd=script.parent, capture_output=True,
                          text=True, timeout=900, check=False, env={**os.environ, "ENVGEN_IMAGE": image})
    assert re.match(r"Submitted batch job \d+", done.stdout), done.stdout + done.stderr
    outputs = {name: (script.parent / name).read_text() for name in sorted(set(os.listdir(script.parent)) - before)
               if name.endswith(".out")}
    assert outputs, done.stdout + done.stderr
    return done.returncode, outputs


@pytest.fixture
def exported(built: Any, tmp_path: Path) -> Callable[..., Path]:
    def export(runtime: str = "docker", **options: Any) -> Path:
        out = tmp_path / f"{runtime}-{len(list(tmp_path.iterdir()))}"
        paths = export_profiles(["pipe-slurm"], "slurm", out, runtime=runtime, **options)
        return next(p for p in paths if p.suffix == ".sbatch")
    return export


def test_sbatch_runs_the_probe_then_the_command(built: Any, exported: Callable[..., Path]) -> None:
    code, outputs = _submit(exported(), "python", "-c", "print(6*7)", image=built.tag)
    [(name, text)] = outputs.items()
    assert code == 0, text
    assert re.fullmatch(r"envgen-pipe-slurm-\d+\.out", name)
    lines = text.splitlines()
    assert lines[0].startswith("envgen probe: PASS (cpu-only mode, profile pipe-slurm"), text  # the probe first
    assert lines[-1] == "42"  # then the command


@pytest.fixture
def broken_image(built: Any, docker_client: DockerClient, tmp_path: Path) -> Iterator[str]:
    """The built image with the profile's package removed: its own probe fails on it."""
    context = tmp_path / "broken"
    context.mkdir()
    (context / "Dockerfile").write_text(
        f"FROM {built.tag}\nUSER 0:0\nRUN rm -rf /opt/env/lib/python3*/site-packages/six*\nUSER 1000:1000\n")
    tag = f"{built.tag.rsplit(':', 1)[0]}-broken:1"
    build_image(context, builder=detect_builder(choice="classic"), log_path=tmp_path / "broken.log", tags=[tag],
                client=docker_client)
    yield tag
    remove_image(docker_client, tag, force=True)


def test_a_failing_probe_fails_the_job_with_exit_3_before_the_command(
        broken_image: str, exported: Callable[..., Path]) -> None:
    code, outputs = _submit(exported(), "sh", "-c", "echo COMMAND-RAN", image=broken_image)
    [text] = outputs.values()
    assert code == 3, text
    assert text.startswith("envgen probe: FAIL"), text
    assert "six is named by the profile but not installed" in text, text  # the probe's diagnosis
    assert "envgen: the smoke test failed on" in text
    assert "COMMAND-RAN" not in text


def test_a_job_array_runs_one_image_for_every_task(built: Any, exported: Callable[..., Path]) -> None:
    script = exported(array="0-2")
    assert "#SBATCH --array=0-2" in script.read_text()
    code, outputs = _submit(script, "sh", "-c", 'echo "task=$SLURM_ARRAY_TASK_ID"', image=built.tag)
    assert code == 0, outputs
    assert sorted(text.splitlines()[-1] for text in outputs.values()) == ["task=0", "task=1", "task=2"]
    assert all(re.fullmatch(r"envgen-pipe-slurm-\d+-[0-2]\.out", name) for name in outputs)


def test_a_gpu_request_becomes_gres_which_this_gpu_less_node_refuses(slurm: str, tmp_path: Path) -> None:
    paths = export_profiles(["a100-pypi"], "slurm", tmp_path, runtime="podman", gpus=2)
    script = next(p for p in paths if p.suffix == ".sbatch")
    text = script.read_text()
    assert "#SBATCH --gres=gpu:2" in text and '--device "nvidia.com/gpu=$id"' in text
    done = subprocess.run(["sbatch", "--test-only", script.name], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode != 0 and "gres" in done.stderr.lower(), done.stderr
