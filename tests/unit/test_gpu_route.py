"""How a GPU reaches a container: the route envgen picks (the NVIDIA runtime or CDI) and the request it
sends, judged from recorded hosts (tests/fixtures/hosts, each directory's source.txt says where every file came
from: Docker 20.10 without CDI, Docker 26.1 on the H200 with and without the cdi feature, a host with the NVIDIA
runtime) and two CDI specs: the one start-engine wrote on the H200 (recorded there), and one NOT recorded, written
here in the layout `nvidia-ctk cdi generate` writes, for a host with two GPUs whose UUIDs and driver version are
invented (tests/fixtures/cdi/README.md)."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from envgen.errors import HostIncompatible
from envgen.host import RecordedProvider, collect
from envgen.host.cdi import _scan, overridden_env, parse_spec
from envgen.host.doctor import route_reasons
from envgen.host.gate import translate_engine_error
from envgen.host.model import HostFacts
from envgen.host.report import format_facts
from envgen.host.route import choose_route
from envgen.pipeline.tiers import plan_tiers, route_for

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HOSTS = FIXTURES / "hosts"
NVIDIA_CTK = FIXTURES / "cdi" / "nvidia-ctk-2gpu.yaml"
H200_SPEC = HOSTS / "h200-580-cdi" / "cdi" / "nvidia.json"


def facts_of(name: str) -> HostFacts:
    return collect(RecordedProvider(HOSTS / name))


def host_with(tmp_path: Path, docker_info: Path, specs: dict[str, str], base: str = "h200-580-cdi") -> HostFacts:
    """A recorded host with another engine's `docker info` and other CDI spec files."""
    shutil.copytree(HOSTS / base, tmp_path / "host")
    host = tmp_path / "host"
    shutil.copy(docker_info, host / "docker-info.json")
    shutil.rmtree(host / "cdi", ignore_errors=True)
    if specs:
        (host / "cdi").mkdir()
        for name, text in specs.items():
            (host / "cdi" / name).write_text(text)
    return collect(RecordedProvider(host))


def test_specs_parse_as_json_and_as_yaml() -> None:
    h200 = parse_spec(H200_SPEC.read_text(), "/etc/cdi/nvidia.json")
    assert (h200.kind, h200.devices) == ("nvidia.com/gpu", ("0", "all"))
    assert "LD_LIBRARY_PATH=/usr/local/nvidia/lib64" in h200.env
    ctk = parse_spec(NVIDIA_CTK.read_text(), "/etc/cdi/nvidia.yaml")
    assert ctk.devices == ("0", "GPU-9d4a6a2e-3b1c-5f0e-8c2d-1a7b3c4d5e6f", "1",
                           "GPU-2f5e8d7c-6b4a-4e3d-9c1b-0a9f8e7d6c5b", "all")
    assert ctk.env == ("NVIDIA_VISIBLE_DEVICES=void",)
    # without PyYAML (the GPU machine's bare Python), the line scan reads the same names from that layout
    assert _scan(NVIDIA_CTK.read_text(), "x").devices == ctk.devices
    assert parse_spec("kind: [broken", "/etc/cdi/bad.yaml").error is not None


def test_h200_takes_the_cdi_route_and_asks_by_device_name() -> None:
    facts = facts_of("h200-580-cdi")
    assert facts.nvidia_runtime.status == "missing" and facts.cdi.enabled
    assert facts.gpu_access.route == "cdi" and not facts.gpu_access.runtime_ok
    plan = plan_tiers(True, facts)
    assert plan.tiers == "all" and plan.route is not None and plan.route.devices == ("nvidia.com/gpu=all",)
    one = plan_tiers(True, facts, "1")
    assert one.route is not None and one.route.devices == ("nvidia.com/gpu=0",)
    text = format_facts(facts)
    assert "CDI:             enabled" in text and "/etc/cdi/nvidia.json: nvidia.com/gpu (0, all)" in text
    assert "GPU route:       CDI" in text


def test_more_gpus_than_the_spec_declares_is_one_line_naming_the_spec() -> None:
    with pytest.raises(HostIncompatible) as err:
        route_for("2", facts_of("h200-580-cdi"))
    line = err.value.one_line()
    assert "/etc/cdi/nvidia.json declares no nvidia.com/gpu=1" in line and "nvidia-ctk cdi generate" in line
    # the tier plan falls back to the library tier and says why
    plan = plan_tiers(True, facts_of("h200-580-cdi"), "2")
    assert plan.tiers == "libraries" and plan.reason and "nvidia.com/gpu=1" in plan.reason


def test_by_index_on_a_two_gpu_spec(tmp_path: Path) -> None:
    facts = host_with(tmp_path, HOSTS / "h200-580-cdi" / "docker-info.json", {"nvidia.yaml": NVIDIA_CTK.read_text()})
    route = route_for("2", facts)
    assert route is not None and route.devices == ("nvidia.com/gpu=0", "nvidia.com/gpu=1")
    assert route.specs[0].path == "/etc/cdi/nvidia.yaml"


def test_engine_without_the_cdi_feature_leaves_the_spec_unused(tmp_path: Path) -> None:
    facts = host_with(tmp_path, HOSTS / "_engines" / "docker-26.1-cdi-off.json", {"nvidia.json": H200_SPEC.read_text()})
    assert not facts.cdi.enabled and facts.gpu_access.route is None
    detail = facts.gpu_access.detail
    assert "CDI off, or an engine older than 25" in detail and "found but unused" in detail
    assert any('"features": {"cdi": true}' in fix for fix in facts.gpu_access.fixes)
    (reason,) = route_reasons(facts)
    assert reason.code == "host-no-nvidia-runtime" and reason.severity == "error"
    assert "nvidia-container-toolkit" in reason.fix and "nvidia-ctk cdi generate" in reason.fix
    plan = plan_tiers(True, facts)
    assert plan.tiers == "libraries" and plan.reason and '"features": {"cdi": true}' in plan.reason


def test_docker_20_10_has_no_cdi() -> None:
    facts = facts_of("nogpu-dev")  # Debian 12's Docker 20.10.24: no CDISpecDirs in its info at all
    assert not facts.cdi.enabled and facts.cdi.spec_dirs == ()


def test_a_spec_that_names_no_device_or_no_spec_at_all(tmp_path: Path) -> None:
    empty = '{"cdiVersion": "0.5.0", "kind": "nvidia.com/gpu", "devices": []}'
    facts = host_with(tmp_path / "a", HOSTS / "h200-580-cdi" / "docker-info.json", {"nvidia.json": empty})
    assert facts.gpu_access.route is None
    assert "CDI spec /etc/cdi/nvidia.json declares no nvidia.com/gpu device" in facts.gpu_access.detail
    none = host_with(tmp_path / "b", HOSTS / "h200-580-cdi" / "docker-info.json", {})
    assert "no spec in /etc/cdi, /var/run/cdi declares nvidia.com/gpu devices" in none.gpu_access.detail


def test_the_runtime_route_where_the_engine_has_it_and_forcing_a_route() -> None:
    a100 = facts_of("a100-525")  # Runtimes: nvidia runc
    assert a100.gpu_access.route == "runtime"
    assert choose_route(a100.gpu_access, a100.cdi, "all").route == "runtime"
    with pytest.raises(HostIncompatible, match="gpu_route cdi"):
        choose_route(a100.gpu_access, a100.cdi, "all", "cdi")
    h200 = facts_of("h200-580-cdi")
    with pytest.raises(HostIncompatible, match="gpu_route runtime: the engine has no NVIDIA runtime"):
        choose_route(h200.gpu_access, h200.cdi, "all", "runtime")
    forced = plan_tiers(True, h200, gpu_route="runtime")
    assert forced.tiers == "libraries" and forced.reason and "no NVIDIA runtime" in forced.reason
    # both routes open: auto keeps the NVIDIA runtime, `cdi` forces CDI
    both = replace(h200, nvidia_runtime=a100.nvidia_runtime,
                   gpu_access=replace(h200.gpu_access, route="runtime", runtime_ok=True))
    assert plan_tiers(True, both).route is None
    cdi = plan_tiers(True, both, gpu_route="cdi")
    assert cdi.route is not None and cdi.route.devices == ("nvidia.com/gpu=all",)


def test_the_engines_recorded_answers_become_one_line_with_the_fix() -> None:
    lines = [line for line in (HOSTS / "h200-580-cdi" / "docker-run-errors.txt").read_text().splitlines()
             if line and not line.startswith("#")]
    gpus_all, cdi_missing, sdk_missing, sdk_gpus = lines
    for text in (gpus_all, sdk_gpus):
        err = translate_engine_error(text)
        assert err is not None and "through the NVIDIA runtime" in err.message and "--gpu-route cdi" in (err.fix or "")
    for text, device in ((cdi_missing, "nvidia.com/gpu=7"), (sdk_missing, "nvidia.com/gpu=5")):
        err = translate_engine_error(text)
        assert err is not None and err.message == f"the engine's CDI specs declare no device {device}"


def test_a_spec_that_replaces_the_images_search_paths() -> None:
    h200 = parse_spec(H200_SPEC.read_text(), "/etc/cdi/nvidia.json")
    image_env = ["PATH=/opt/env/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                 "LD_LIBRARY_PATH=/opt/env/lib/python3.11/site-packages/nvidia/cudnn/lib", "NVIDIA_VISIBLE_DEVICES=all"]
    restored = overridden_env([h200], image_env)
    assert restored["PATH"].startswith("/opt/env/bin:/usr/local/sbin")
    assert restored["PATH"].endswith(":/usr/local/nvidia/bin")
    assert restored["LD_LIBRARY_PATH"] == ("/opt/env/lib/python3.11/site-packages/nvidia/cudnn/lib:"
                                           "/usr/local/nvidia/lib64")
    # nvidia-ctk's spec sets NVIDIA_VISIBLE_DEVICES=void: not a search path, the spec's to decide
    assert overridden_env([parse_spec(NVIDIA_CTK.read_text())], image_env) == {}
    facts = facts_of("h200-580-cdi")
    assert any(r.code == "host-cdi-env" and "LD_LIBRARY_PATH, PATH" in r.message for r in route_reasons(facts))


def test_recorded_h200_cdi_doctor_json_matches_its_raw_outputs() -> None:
    recorded = json.loads((HOSTS / "h200-580-cdi" / "doctor.json").read_text())
    facts = json.loads(json.dumps(facts_of("h200-580-cdi").to_json()))
    for key in ("gpus", "driver", "gpu_access", "nvidia_runtime"):
        assert recorded["host"][key] == facts[key], key
    # a spec is compared on the fields the recording has (one recorded before a field existed lacks it)
    for seen, now in zip(recorded["host"]["cdi"]["specs"], facts["cdi"]["specs"], strict=True):
        assert seen == {k: now[k] for k in seen}
