"""Issue 38 item 5: `envgen init --from SOURCE --base IMAGE` where IMAGE holds the adopted environment writes
base_provides from what the image holds (read in a container of IMAGE with the source's interpreter); the H200
venv's 191 entries had been written by hand. Here the source is an envgen image holding six and colorama in
/opt/env, adopted onto itself: the profile passes check and builds offline of PyPI for what the base holds."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import yaml
from typer.testing import CliRunner

from envgen.cli import app
from envgen.pipeline.build import build
from tests.pipeline.conftest import alias, built_base


def test_init_from_an_image_onto_itself_writes_base_provides_and_builds(
        envgen_home: Path, write_profile: Callable[[str, str], str], cleanup_tags: list[str]) -> None:
    base = built_base(write_profile, cleanup_tags, "adopt-held-base", '"six==1.16.0", "colorama==0.4.6"')
    out = envgen_home / "profiles" / "adopt-on-base.yaml"
    result = CliRunner().invoke(app, ["init", "--from", base, "--base", base, "-o", str(out)])
    assert result.exit_code == 0 and "0 error(s)" in result.output, result.output
    data = yaml.safe_load(out.read_text(encoding="utf-8"))
    provides = data["base_provides"]
    assert provides["python"].startswith("/opt/env/bin/python"), provides
    assert provides["packages"] == {"colorama": "0.4.6", "six": "1.16.0"}, provides
    assert f"held by {base}'s {provides['python']}" in out.read_text(encoding="utf-8")
    assert "base_provides lists 0 framework(s) and 2 package(s)" in result.output, result.output
    outcome = build("adopt-on-base")
    cleanup_tags.extend([outcome.tag, alias("adopt-on-base")])
    assert outcome.validated, outcome
