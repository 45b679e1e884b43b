"""Issue #32, item 5: the user's image carries the user's metadata, not envgen's. Before, every rendered image
claimed `org.opencontainers.image.licenses="Apache-2.0"`, `source="https://github.com/envgen-dev/envgen"` and envgen's
version as `image.version`, and the default registry was `ghcr.io/envgen-dev/envgen` (an organisation nobody here
owns), so a k8s export pointed there."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from envgen.kb import KnowledgeBase
from envgen.plan.image import plan_image
from envgen.profile import load_profile
from envgen.render import render_in_memory
from envgen.vocabulary import LABEL_VERSION

PROFILE = """\
name: mine
base: debian:bookworm-slim
local_base: true
installer: pip
python: "3.11"
gpu:
  required: false
packages:
  pip: [six==1.16.0]
"""
METADATA = """\
metadata:
  licenses: MIT
  source: https://git.example.org/lab/mine
  version: "2.3"
  authors: Lab <lab@example.org>
"""


def _labels(dockerfile: str) -> dict[str, str]:
    return dict(re.findall(r'^\s*(?:LABEL )?([a-z0-9.-]+)="([^"]*)"(?: \\)?$', dockerfile, flags=re.MULTILINE))


def test_no_metadata_no_claims(tmp_path: Path, kb: KnowledgeBase) -> None:
    (tmp_path / "mine.yaml").write_text(PROFILE)
    plan = plan_image(load_profile(str(tmp_path / "mine.yaml"), kb=kb), kb)
    labels = _labels(render_in_memory(plan).files["Dockerfile"].decode())
    assert labels["org.opencontainers.image.title"] == "mine"
    for key in ("licenses", "source", "version", "authors", "url", "vendor", "documentation"):
        assert f"org.opencontainers.image.{key}" not in labels
    assert labels[LABEL_VERSION]  # envgen's own version, under its own key
    assert not any("envgen-dev" in value for value in labels.values())


def test_profile_metadata_becomes_the_oci_labels(tmp_path: Path, kb: KnowledgeBase) -> None:
    (tmp_path / "mine.yaml").write_text(PROFILE + METADATA)
    plan = plan_image(load_profile(str(tmp_path / "mine.yaml"), kb=kb), kb)
    labels = _labels(render_in_memory(plan).files["Dockerfile"].decode())
    assert labels["org.opencontainers.image.licenses"] == "MIT"
    assert labels["org.opencontainers.image.source"] == "https://git.example.org/lab/mine"
    assert labels["org.opencontainers.image.version"] == "2.3"
    assert labels["org.opencontainers.image.authors"] == "Lab <lab@example.org>"


def test_metadata_keys_are_strict(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text(PROFILE + "metadata:\n  licence: MIT\n")
    result = subprocess.run([sys.executable, "-m", "envgen", "check", "mine.yaml"], capture_output=True, text=True,
                            cwd=tmp_path, timeout=60)
    assert result.returncode == 2
    assert "unknown field 'metadata.licence'; did you mean 'licenses'?" in result.stderr


def test_no_default_registry_push_says_so(tmp_path: Path) -> None:
    """A push with no registry given fails at once with the way out (no build, no engine call first)."""
    from envgen.config import load_config
    from envgen.errors import InputError
    from envgen.pipeline.publish import registry_to_use

    config = load_config({"HOME": str(tmp_path)})
    assert config.registry is None
    with pytest.raises(InputError, match="no registry given") as caught:
        registry_to_use(None, config)
    assert "--registry" in caught.value.one_line()
    assert registry_to_use("localhost:5000/team", config) == "localhost:5000/team"


def test_k8s_export_without_a_registry_names_the_local_image(tmp_path: Path) -> None:
    (tmp_path / "none.yaml").write_text("{}\n")  # a config that names no registry
    result = subprocess.run([sys.executable, "-m", "envgen", "export", "cpu-minimal", "--format", "k8s", "-o",
                             str(tmp_path)], capture_output=True, text=True, timeout=120,
                            env={**os.environ, "ENVGEN_CONFIG": str(tmp_path / "none.yaml")})
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "cpu-minimal.job.yaml").read_text()
    assert "ghcr.io" not in text
    assert re.search(r"image: [a-z0-9-]+/cpu-minimal:[0-9a-f]{12}$", text, flags=re.MULTILINE), text
    assert "note: no registry given" in result.stderr
    assert "envgen push cpu-minimal --registry REGISTRY" in result.stderr
