"""Exports: devcontainer.json, docker-compose.yml, Apptainer definition, docker-bake.hcl."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from envgen.config import UserConfig
from envgen.errors import InputError
from envgen.kb import load_kb
from envgen.plan.image import plan_image
from envgen.profile import load_profile
from envgen.render import EXPORT_FORMATS, export, render_in_memory


@pytest.fixture(scope="module")
def kb():
    return load_kb()


@pytest.fixture(scope="module")
def profiles():
    return [load_profile("cpu-smoke", env={}), load_profile("modern-a100", env={})]


def _plans(profiles, kb):  # type: ignore[no-untyped-def]
    """The command's one plan of each profile (export writes plans, it never plans)."""
    return [plan_image(p, kb) for p in profiles]


def test_formats() -> None:
    assert sorted(EXPORT_FORMATS) == ["apptainer", "bake", "compose", "devcontainer", "k8s", "slurm"]


def test_devcontainer_single_and_many(kb, profiles, tmp_path: Path) -> None:
    [path] = export(_plans(profiles[1:], kb), "devcontainer", tmp_path / "one")
    assert path == tmp_path / "one" / ".devcontainer" / "devcontainer.json"
    doc = json.loads(path.read_text())
    assert doc["image"] == render_in_memory(plan_image(profiles[1], kb)).tag
    assert doc["runArgs"] == ["--gpus", "all", "--shm-size", "2g"]
    assert doc["remoteUser"] == "envgen"
    paths = export(_plans(profiles, kb), "devcontainer", tmp_path / "many")
    assert [p.parent.name for p in paths] == ["cpu-smoke", "modern-a100"]
    assert "--gpus" not in json.loads(paths[0].read_text())["runArgs"]


def test_compose_reserves_gpus_for_gpu_profiles(kb, profiles, tmp_path: Path) -> None:
    [path] = export(_plans(profiles, kb), "compose", tmp_path)
    services = yaml.safe_load(path.read_text())["services"]
    gpu = services["modern-a100"]["deploy"]["resources"]["reservations"]["devices"][0]
    assert gpu == {"driver": "nvidia", "count": "all", "capabilities": ["gpu"]}
    assert "deploy" not in services["cpu-smoke"]
    assert services["cpu-smoke"]["image"].startswith("envgen/cpu-smoke:")


def test_apptainer_definition(kb, profiles, tmp_path: Path) -> None:
    paths = export(_plans(profiles, kb), "apptainer", tmp_path)
    text = (tmp_path / "modern-a100.def").read_text()
    assert len(paths) == 2
    assert text.startswith("Bootstrap: docker-daemon\nFrom: envgen/modern-a100:")
    assert "export PATH=/opt/env/bin:$PATH" in text and "--nv" in text
    assert "--nv" not in (tmp_path / "cpu-smoke.def").read_text()


def test_bake_file_renders_contexts_and_targets(kb, profiles, tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("x")
    config = UserConfig(registry="localhost:5000/envgen", ca_bundle=ca)
    paths = export(_plans(profiles, kb), "bake", tmp_path / "out", config)
    assert paths == [tmp_path / "out" / "docker-bake.hcl"]
    text = paths[0].read_text()
    for p in profiles:
        ctx = render_in_memory(plan_image(p, kb), config)
        assert (tmp_path / "out" / "contexts" / p.name / "Dockerfile").is_file()
        assert f'target "{p.name}"' in text and f'context    = "contexts/{p.name}"' in text
        assert ctx.tag in text
    assert 'targets = ["cpu-smoke", "modern-a100"]' in text
    assert "type=registry,ref=${REGISTRY}/modern-a100:buildcache,mode=max" in text
    assert f'"id=ca_bundle,src={ca}"' in text
    assert 'default = "localhost:5000/envgen"' in text


def test_unknown_format_and_empty_list(kb, profiles, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown export format"):
        export(_plans(profiles, kb), "helm", tmp_path)
    with pytest.raises(InputError, match="at least one"):
        export([], "compose", tmp_path)
