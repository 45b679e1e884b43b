"""Exports checked by the real tool for each format, plus golden files.

- k8s Jobs: kubernetes-validate (PyPI; ships the schemas) in strict mode, for every Kubernetes
  version it ships; a broken Job must fail it too (the validator is not vacuous).
- Slurm scripts: shellcheck (Debian package; scripts/host-setup installs it).
- Compose: docker-compose config (Debian's docker-compose).
- Dev containers: `devcontainer read-configuration` (npm @devcontainers/cli; scripts/host-setup).
- Apptainer: not installable here; the definition file's structure is checked.
Goldens: tests/golden/exports/<format>/<profile>/, hashes replaced by placeholders so that a template
change elsewhere does not move them; UPDATE_GOLDEN=1 rewrites them. Cost: ~30 s (13 validator runs).
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from envgen.docker.run import DEFAULT_SHM_SIZE
from envgen.kb import load_kb
from envgen.plan.image import plan_image
from envgen.profile import list_profiles, load_profile
from envgen.render import export, render_in_memory
from envgen.render.exports import ExportOptions, job_name, k8s_quantity

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "exports"
PROFILES = [s.name for s in list_profiles({})]
GPU_PROFILES = [name for name in PROFILES if load_profile(name, env={}).gpu.required]
GOLDEN_FORMATS = ["apptainer", "compose", "devcontainer", "k8s", "slurm"]


@pytest.fixture(scope="module")
def kb():
    return load_kb()


@pytest.fixture(scope="module")
def exported(kb, tmp_path_factory) -> dict[str, dict[str, Path]]:
    """format -> profile -> directory with that profile's export."""
    out: dict[str, dict[str, Path]] = {}
    for fmt in GOLDEN_FORMATS:
        for name in PROFILES:
            target = tmp_path_factory.mktemp(f"{fmt}-{name}")
            export([plan_image(load_profile(name, env={}), kb)], fmt, target)
            out.setdefault(fmt, {})[name] = target
    return out


def _tool(name: str, hint: str) -> str:
    local = Path(sys.executable).parent / name
    found = str(local) if local.exists() else shutil.which(name)
    if not found:
        pytest.fail(f"{name} is not installed ({hint})")
    return found


# --- goldens ---------------------------------------------------------------------------------


def _placeholders(text: str, kb, name: str) -> str:
    ctx = render_in_memory(plan_image(load_profile(name, env={}), kb))
    return (text.replace(ctx.content_hash, "@@CONTENT_HASH@@").replace(ctx.content_hash[:12], "@@HASH12@@")
            .replace(ctx.plan.profile_hash, "@@PROFILE_HASH@@"))


@pytest.mark.parametrize("fmt", GOLDEN_FORMATS)
@pytest.mark.parametrize("name", PROFILES)
def test_export_matches_golden(fmt: str, name: str, exported, kb) -> None:
    directory = exported[fmt][name]
    files = {p.relative_to(directory).as_posix(): _placeholders(p.read_text(encoding="utf-8"), kb, name)
             for p in sorted(directory.rglob("*")) if p.is_file()}
    golden = GOLDEN / fmt / name
    if os.environ.get("UPDATE_GOLDEN") == "1":
        shutil.rmtree(golden, ignore_errors=True)
        for rel, text in files.items():
            (golden / rel).parent.mkdir(parents=True, exist_ok=True)
            (golden / rel).write_text(text, encoding="utf-8")
    expected = {p.relative_to(golden).as_posix(): p.read_text(encoding="utf-8")
                for p in sorted(golden.rglob("*")) if p.is_file()}
    assert sorted(files) == sorted(expected), f"files differ from {golden} (UPDATE_GOLDEN=1 rewrites)"
    for rel, text in files.items():
        if text != expected[rel]:
            diff = "".join(difflib.unified_diff(expected[rel].splitlines(True), text.splitlines(True),
                                                f"golden/{rel}", f"rendered/{rel}"))
            pytest.fail(f"{fmt}/{name}/{rel} differs from its golden (UPDATE_GOLDEN=1 rewrites):\n{diff}")


# --- Kubernetes ------------------------------------------------------------------------------


def _versions() -> list[str]:
    from kubernetes_validate import utils

    return sorted(set(utils.all_versions()), key=lambda v: tuple(int(p) for p in v.split(".")))


def test_k8s_jobs_pass_kubernetes_validate_for_every_shipped_version(exported) -> None:
    tool = _tool("kubernetes-validate", "pip install -e '.[test]'")
    files = [str(exported["k8s"][name] / f"{name}.job.yaml") for name in PROFILES]
    versions = _versions()
    assert len(versions) >= 5
    for version in versions:
        proc = subprocess.run([tool, "--strict", "--quiet", "-k", version, *files],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, f"Kubernetes {version}: {proc.stdout}{proc.stderr}"


def test_kubernetes_validate_rejects_a_broken_job(exported, tmp_path: Path) -> None:
    tool = _tool("kubernetes-validate", "pip install -e '.[test]'")
    job = yaml.safe_load((exported["k8s"]["modern-a100"] / "modern-a100.job.yaml").read_text())
    broken = copy.deepcopy(job)
    broken["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"] = {"nvidia.com/gpu": [1]}
    broken["spec"]["template"]["spec"]["restartPolicy"] = 7
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(broken))
    proc = subprocess.run([tool, "--strict", "--quiet", str(path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0


@pytest.mark.parametrize("name", PROFILES)
def test_k8s_job_gpus_probe_and_shm(name: str, exported) -> None:
    job = yaml.safe_load((exported["k8s"][name] / f"{name}.job.yaml").read_text())
    spec = job["spec"]["template"]["spec"]
    [init] = spec["initContainers"]
    [main] = spec["containers"]
    assert job["kind"] == "Job" and job["metadata"]["name"] == job_name(name) and spec["restartPolicy"] == "Never"
    assert init["command"] == ["/usr/local/bin/envgen-smoke"] and init["image"] == main["image"]
    if name in GPU_PROFILES:
        assert init["resources"]["limits"] == main["resources"]["limits"] == {"nvidia.com/gpu": 1}
    else:
        assert "resources" not in init and "resources" not in main
    dshm = next(v for v in spec["volumes"] if v["name"] == "dshm")
    assert dshm["emptyDir"] == {"medium": "Memory", "sizeLimit": k8s_quantity(DEFAULT_SHM_SIZE)} == {
        "medium": "Memory", "sizeLimit": "2Gi"}
    assert {"name": "dshm", "mountPath": "/dev/shm"} in main["volumeMounts"]


def test_k8s_image_by_digest_when_known(kb, tmp_path: Path) -> None:
    profile = load_profile("modern-a100", env={})
    ref = "registry.example.org/envgen/modern-a100@sha256:" + "c" * 64
    export([plan_image(profile, kb)], "k8s", tmp_path, options=ExportOptions(images={"modern-a100": ref}, gpus=4))
    text = (tmp_path / "modern-a100.job.yaml").read_text()
    job = yaml.safe_load(text)
    main = job["spec"]["template"]["spec"]["containers"][0]
    assert main["image"] == ref and main["resources"]["limits"] == {"nvidia.com/gpu": 4}
    assert "pinned by its registry digest" in text


@pytest.mark.parametrize(("size", "quantity"), [("2g", "2Gi"), ("512m", "512Mi"), ("64k", "64Ki"), ("100", "100")])
def test_k8s_quantity(size: str, quantity: str) -> None:
    assert k8s_quantity(size) == quantity


def test_job_names_are_dns_labels() -> None:
    assert job_name("a_b.c") == "envgen-a-b-c"
    assert len(job_name("x" * 63)) <= 63 and re.fullmatch(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?", job_name("x" * 63))


# --- Slurm / Apptainer -----------------------------------------------------------------------


def test_slurm_scripts_pass_shellcheck(exported) -> None:
    tool = _tool("shellcheck", "apt-get install shellcheck; scripts/host-setup installs it")
    scripts = [str(exported["slurm"][name] / f"{name}.sbatch") for name in PROFILES]
    proc = subprocess.run([tool, "--shell=bash", "--severity=style", *scripts], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("name", PROFILES)
def test_slurm_script_runs_the_probe_first(name: str, exported) -> None:
    directory = exported["slurm"][name]
    script = directory / f"{name}.sbatch"
    text = script.read_text()
    assert os.access(script, os.X_OK) and (directory / f"{name}.def").is_file()
    probe = text.index('apptainer exec "${NV[@]}" "$SIF" /usr/local/bin/envgen-smoke')
    assert probe < text.index("exec apptainer exec")
    directives = [line for line in text.splitlines() if line.startswith("#SBATCH")]
    first_command = next(i for i, line in enumerate(text.splitlines()) if line and not line.startswith("#"))
    assert all(text.splitlines().index(d) < first_command for d in directives)  # sbatch stops at the first command
    assert ("#SBATCH --gres=gpu:1" in directives) == (name in GPU_PROFILES)
    assert ("NV=(--nv)" in text) == (name in GPU_PROFILES)


@pytest.mark.parametrize("name", PROFILES)
def test_apptainer_definition_structure(name: str, exported, kb) -> None:
    text = (exported["apptainer"][name] / f"{name}.def").read_text()
    lines = text.splitlines()
    header = dict(line.split(": ", 1) for line in lines[:2])
    tag = render_in_memory(plan_image(load_profile(name, env={}), kb)).tag
    assert header == {"Bootstrap": "docker-daemon", "From": tag}
    sections = [line for line in lines if line.startswith("%")]
    assert sections == ["%labels", "%environment", "%runscript", "%test", "%help"]
    test_body = lines[lines.index("%test") + 1].strip()
    # %test runs without --nv on the build host (usually no GPU): a GPU profile's %test is the library tier
    gpu = name in GPU_PROFILES
    assert test_body == ("/usr/local/bin/envgen-smoke --tier libraries" if gpu else "/usr/local/bin/envgen-smoke")
    if gpu:
        assert "envgen-smoke --tier gpu" in text  # the GPU tier, with --nv, is in %help


def test_apptainer_bootstrap_docker_names_the_registry_image(kb, tmp_path: Path) -> None:
    from envgen.render.exports import ExportOptions

    profile = load_profile("a100-pypi", env={})
    [path] = export([plan_image(profile, kb)], "apptainer", tmp_path,
                    options=ExportOptions(bootstrap="docker", registry="registry.example.org/team"))
    lines = path.read_text().splitlines()
    chash = render_in_memory(plan_image(profile, kb)).content_hash
    assert lines[:2] == ["Bootstrap: docker", f"From: registry.example.org/team/a100-pypi:{chash[:12]}"]


# --- Compose and dev containers --------------------------------------------------------------


def test_compose_passes_docker_compose_config(kb, tmp_path: Path) -> None:
    tool = _tool("docker-compose", "apt-get install docker-compose; scripts/host-setup installs it")
    [path] = export([plan_image(load_profile(n, env={}), kb) for n in PROFILES], "compose", tmp_path)
    proc = subprocess.run([tool, "-f", str(path), "config"], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    services = yaml.safe_load(proc.stdout)["services"]
    assert sorted(services) == sorted(PROFILES)
    assert services["modern-a100"]["deploy"]["resources"]["reservations"]["devices"][0]["capabilities"] == ["gpu"]


@pytest.mark.parametrize("name", ["cpu-minimal", "modern-a100"])
def test_devcontainer_cli_reads_the_configuration(name: str, exported, kb) -> None:
    tool = _tool("devcontainer", "npm install -g @devcontainers/cli; scripts/host-setup installs it")
    folder = exported["devcontainer"][name]
    proc = subprocess.run([tool, "read-configuration", "--workspace-folder", str(folder)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    config = json.loads(proc.stdout.strip().splitlines()[-1])["configuration"]
    assert config["image"] == render_in_memory(plan_image(load_profile(name, env={}), kb)).tag
    assert config["workspaceFolder"] == "/workspace" and config["remoteUser"] == "envgen"


# --- GPUs by CDI (envgen export --gpu-route cdi) -----------------------------------------------


@pytest.mark.parametrize("fmt", ["compose", "devcontainer"])
def test_cdi_route_exports_match_golden_and_their_tools(fmt: str, kb, tmp_path: Path) -> None:
    """`--gpu-route cdi`: compose reserves `driver: cdi` with `device_ids: [nvidia.com/gpu=all]`, the dev
    container runs with `--device nvidia.com/gpu=all`; goldens in tests/golden/exports/<fmt>-cdi/."""
    from envgen.render.exports import ExportOptions

    name = "a100-pypi"
    [path] = export([plan_image(load_profile(name, env={}), kb)], fmt, tmp_path, options=ExportOptions(gpu_route="cdi"))
    text = _placeholders(path.read_text(encoding="utf-8"), kb, name)
    golden = GOLDEN / f"{fmt}-cdi" / name / path.relative_to(tmp_path).as_posix()
    if os.environ.get("UPDATE_GOLDEN") == "1":
        shutil.rmtree(GOLDEN / f"{fmt}-cdi" / name, ignore_errors=True)  # a file no longer exported goes too
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8"), f"{golden} differs (UPDATE_GOLDEN=1 rewrites)"
    if fmt == "compose":
        tool = _tool("docker-compose", "apt-get install docker-compose; scripts/host-setup installs it")
        proc = subprocess.run([tool, "-f", str(path), "config"], capture_output=True, text=True, timeout=120,
                              cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        [device] = yaml.safe_load(proc.stdout)["services"][name]["deploy"]["resources"]["reservations"]["devices"]
        assert device["driver"] == "cdi" and device["device_ids"] == ["nvidia.com/gpu=all"]
    else:
        tool = _tool("devcontainer", "npm install -g @devcontainers/cli; scripts/host-setup installs it")
        proc = subprocess.run([tool, "read-configuration", "--workspace-folder", str(tmp_path)],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        config = json.loads(proc.stdout.strip().splitlines()[-1])["configuration"]
        assert config["runArgs"][:2] == ["--device", "nvidia.com/gpu=all"]


def test_export_registry_names_where_the_user_pushes(tmp_path: Path) -> None:
    from envgen.pipeline.prepare import export_profiles

    env = {"HOME": str(tmp_path), "ENVGEN_PROFILE_PATH": ""}
    paths = export_profiles(["a100-pypi"], "slurm", tmp_path / "out", env=env, registry="registry.example.org/team",
                            bootstrap="docker")
    definition = next(p for p in paths if p.suffix == ".def").read_text()
    assert "From: registry.example.org/team/a100-pypi:" in definition
    written = export_profiles(["a100-pypi"], "k8s", tmp_path / "k8s", env=env, registry="registry.example.org/team")
    assert sorted(p.name for p in written) == ["a100-pypi.dra.yaml", "a100-pypi.job.yaml"]
    for path in written:  # the Job and its DRA variant
        assert "image: registry.example.org/team/a100-pypi:" in path.read_text()
