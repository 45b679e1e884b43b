"""`envgen smoke IMAGE` of an image whose framework lives in a venv off PATH (issue #38: the probe ran
/usr/bin/python3, found nothing and said "validated: gpu"): a hand-written Dockerfile (tests/docker/foreign-offpath:
Debian's python3 on PATH, JAX in /opt/tool/.venv), built by the real engine. The venv is probed and named; the
system Python, named with --python, holds nothing to validate, and the verdict says so and proves no tier."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from typer.testing import CliRunner

from envgen.cli import app

if TYPE_CHECKING:
    from envgen.docker import BuilderInfo

OFFPATH = Path(__file__).resolve().parent / "foreign-offpath"


def _report(output: str) -> dict:
    return json.loads(output[output.index("\n{") + 1:] if "\n{" in output else output[output.index("{"):])


def test_the_python_holding_the_framework_is_probed(buildkit_builder: BuilderInfo, base_image: str,
                                                    tmp_path: Path, new_tag: Callable[[str], str]) -> None:
    from envgen.config import default_ca_bundle
    from envgen.docker import build_image

    ref = new_tag("offpath")
    bundle = default_ca_bundle(os.environ)
    build_image(OFFPATH, builder=buildkit_builder, tags=[ref], log_path=tmp_path / "build.log",
                secrets={"ca_bundle": str(bundle)} if bundle else {})
    found = CliRunner().invoke(app, ["smoke", ref, "--tier", "libraries"])
    assert found.exit_code == 0, found.output
    assert "Python 3.11.2 (/opt/tool/.venv/bin/python)" in found.output  # the one probed, named
    assert "validated: libraries" in found.output and "nothing validated" not in found.output
    assert "package=jax module=jax version=0.4.30" in found.output
    system = CliRunner().invoke(app, ["smoke", ref, "--python", "/usr/bin/python3", "--tier", "libraries", "--json"])
    assert system.exit_code == 0, system.output
    report = _report(system.output)
    assert report["tier"] is None
    nothing = [c for c in report["checks"] if c["name"] == "nothing-validated"]
    assert nothing and "/usr/bin/python3 holds no framework" in nothing[0]["message"]
    table = CliRunner().invoke(app, ["smoke", ref, "--python", "/usr/bin/python3", "--tier", "libraries"])
    assert "smoke PASS, nothing validated:" in table.output, table.output
    assert not any(f"validated: {tier}" in table.output for tier in ("gpu", "cpu", "libraries")), table.output
