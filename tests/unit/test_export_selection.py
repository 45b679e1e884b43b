"""Cluster exports select the nodes an image runs on (issue #42, item 3), from the plan's preflight facts: the
Kubernetes Job's node affinity on GPU Feature Discovery's labels, the DRA variant's CEL selector (a
``resource.k8s.io/v1`` ResourceClaimTemplate, validated by kubernetes-validate for every shipped Kubernetes version
that has that API), the main container's command given as ``args`` so the image's entrypoint (its preflight) runs,
and Slurm's pyxis route (shellcheck-clean, the registry written as pyxis reads it)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from envgen.kb import load_kb
from envgen.plan.image import ImagePlan, plan_image
from envgen.plan.selection import cel_selector, node_affinity_terms, selection
from envgen.profile import load_profile
from envgen.render import export
from envgen.render.exports import ExportOptions, pyxis_image
from tests.unit.test_preflight import TORCH_113


def _plans(*names: str) -> list[ImagePlan]:
    kb = load_kb()
    return [plan_image(load_profile(name, env={}), kb) for name in names]


def _tool(name: str) -> str:
    local = Path(sys.executable).parent / name
    found = str(local) if local.exists() else shutil.which(name)
    if not found:
        pytest.fail(f"{name} is not installed (pip install -e '.[test]'; shellcheck: scripts/host-setup)")
    return found


def test_torch_113_selects_the_gpus_its_cubins_run_on_and_the_drivers_of_cuda_117(tmp_path: Path) -> None:
    path = tmp_path / "torch-113.yaml"
    path.write_text(TORCH_113)
    sel = selection(plan_image(load_profile(str(path), env={}), load_kb()).preflight, load_kb())
    assert sel is not None
    # torch 1.13.1+cu117 ships sm_37 ... sm_86 and no PTX (pytorch.yaml, read from the wheel): no 9.0 (H100/H200)
    assert "8.9" in sel.ccs and "8.6" in sel.ccs and "9.0" not in sel.ccs and "12.0" not in sel.ccs
    assert sel.driver_floor == "450.80.02"  # CUDA 11.x's minor-version-compatibility floor (cuda.yaml)
    terms = node_affinity_terms(sel)
    majors = [t[0]["values"] for t in terms]
    assert ["9"] not in majors and ["8"] in majors
    assert all(t[-1] == {"key": "nvidia.com/cuda.driver.major", "operator": "Gt", "values": ["449"]} for t in terms)
    cel = cel_selector(sel)
    assert 'compareTo(semver("8.0.0")) >= 0' in cel and 'compareTo(semver("9.0.0")) < 0' in cel
    assert 'driverVersion.compareTo(semver("450.80.2")) >= 0' in cel


def test_a_cpu_image_selects_nothing() -> None:
    assert selection(plan_image(load_profile("cpu-smoke", env={}), load_kb()).preflight, load_kb()) is None


def test_k8s_exports_validate_and_run_the_entrypoint(tmp_path: Path) -> None:
    written = export(_plans("modern-a100", "cpu-smoke"), "k8s", tmp_path)
    names = sorted(p.name for p in written)
    assert names == ["cpu-smoke.job.yaml", "modern-a100.dra.yaml", "modern-a100.job.yaml"]
    job = yaml.safe_load((tmp_path / "modern-a100.job.yaml").read_text())
    pod = job["spec"]["template"]["spec"]
    assert "command" not in pod["containers"][0] and pod["containers"][0]["args"][0] == "python"
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert {"key": "nvidia.com/gpu.compute.major", "operator": "In", "values": ["9"]} in [
        t["matchExpressions"][0] for t in terms]
    assert "affinity" not in yaml.safe_load((tmp_path / "cpu-smoke.job.yaml").read_text())["spec"]["template"]["spec"]
    claim, dra_job = yaml.safe_load_all((tmp_path / "modern-a100.dra.yaml").read_text())
    request = claim["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    assert request["deviceClassName"] == "gpu.nvidia.com" and "cudaComputeCapability" in request["selectors"][0][
        "cel"]["expression"]
    assert dra_job["spec"]["template"]["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] == claim[
        "metadata"]["name"]
    from kubernetes_validate import utils

    versions = [v for v in utils.all_versions() if tuple(int(p) for p in v.split(".")[:2]) >= (1, 34)]
    assert versions, "kubernetes-validate ships no version with resource.k8s.io/v1"
    for version in sorted(set(versions)):
        proc = subprocess.run([_tool("kubernetes-validate"), "--strict", "--quiet", "-k", version,
                               *(str(p) for p in written)], capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, f"Kubernetes {version}: {proc.stdout}{proc.stderr}"


def test_slurm_pyxis_route(tmp_path: Path) -> None:
    assert pyxis_image("localhost:5000/team/x:1") == "localhost:5000#team/x:1"
    assert pyxis_image("registry.example.org/team/x:1") == "registry.example.org#team/x:1"
    assert pyxis_image("envgen/x:1") == "envgen/x:1"
    [script] = export(_plans("a100-pypi"), "slurm", tmp_path,
                      options=ExportOptions(runtime="pyxis", registry="localhost:5000/team"))
    text = script.read_text()
    assert 'IMAGE="${ENVGEN_IMAGE:-localhost:5000#team/a100-pypi:' in text and "#SBATCH --gres=gpu:1" in text
    assert 'exec "${SRUN[@]}" /usr/local/bin/envgen-entrypoint "$@"' in text
    assert all("#team" not in line for line in text.splitlines() if line.startswith("#SBATCH"))
    proc = subprocess.run([_tool("shellcheck"), str(script)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout
