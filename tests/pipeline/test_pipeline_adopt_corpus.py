"""The CPU files of the adoption corpus (tests/corpus/adopt) built: each adopted with `envgen init --from`, on the
local Debian 12 base (this host reaches no image registry, so the profile says local_base: true), built and smoke-
tested by `envgen build`, and the image holds every pinned line at its version. Files needing conda channels or the
PyTorch index are not built here (the host reaches PyPI alone); tests/unit/test_adopt.py checks them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import yaml

from tests.pipeline.conftest import adopt_on_local_base, alias

if TYPE_CHECKING:
    from docker import DockerClient

CORPUS = Path(__file__).resolve().parents[1] / "corpus" / "adopt"
pytestmark = pytest.mark.slow

BUILT = [("adopt-cpu-minimal", "requirements-cpu-minimal.txt", []),
         ("adopt-compiled", "requirements-compiled.txt", []),
         ("adopt-pyproject", "pyproject-groups.toml", ["--group", "test"])]


def test_the_cpu_corpus_builds_with_its_pins(docker_client: DockerClient, envgen_home: Path,
                                             cleanup_tags: list[str]) -> None:
    from envgen.pipeline.build import build
    from envgen.suggest.adopt.image import image_facts

    for name, source, options in BUILT:
        out = adopt_on_local_base(envgen_home, CORPUS / source, name, options)
        outcome = build(name)
        cleanup_tags += [outcome.tag, alias(name)]
        assert outcome.smoke is not None and outcome.smoke.passed, name
        held = {d["name"].lower(): d["version"] for d in image_facts(docker_client, outcome.image_id)["distributions"]}
        pins = [line.split("==") for line in yaml.safe_load(out.read_text(encoding="utf-8"))["packages"]["pip"]]
        assert pins and all(held.get(pkg.lower()) == version for pkg, version in pins), (name, pins, held)
