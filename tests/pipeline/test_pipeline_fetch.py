"""Issue 38 item 7: a build that cannot fetch stops before it starts. A +cpu torch profile whose PyTorch index this
host cannot reach (a mirror on a refused port: the same refusal download.pytorch.org gives on a host that reaches
only PyPI) failed ~70 s into the build on pip's retries; `envgen build` now stops in seconds naming the index and the
routes around it, builds nothing, and `envgen doctor` says the same per profile."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from envgen.errors import BuildFailed
from envgen.pipeline.build import build
from envgen.pipeline.doctor import doctor_report

REFUSED = "http://127.0.0.1:9/whl"

PROFILE = f"""\
description: a torch CPU build whose PyTorch index cannot be reached
base: debian:bookworm-slim
local_base: true
installer: pip
python: "3.11"
gpu: {{required: false}}
frameworks: {{pytorch: "2.12.0+cpu"}}
mirrors: {{pytorch_wheels: "{REFUSED}"}}
"""


def test_a_build_whose_index_is_unreachable_stops_before_building(
        envgen_home: Path, write_profile: Callable[[str, str], str], docker_client: object) -> None:
    name = write_profile("pipe-fetch-refused", PROFILE)
    started = time.monotonic()
    with pytest.raises(BuildFailed) as info:
        build(name)
    took = time.monotonic() - started
    text = info.value.one_line()
    assert f"PyTorch's index (torch==2.12.0+cpu) {REFUSED}/cpu (Connection refused)" in text, text
    assert "mirrors.pytorch_wheels" in text and f"`envgen doctor --profile {name}`" in text, text
    assert took < 60, took  # the check and plan included; pip's retries took ~70 s inside the build
    assert not list((envgen_home / "state").glob("logs/pipe-fetch-refused-*.log"))  # no build was started
    [verdict] = doctor_report(name).report.verdicts
    reasons = {r.code: r for r in verdict.reasons}
    assert "Connection refused" in reasons["download-unreachable"].message, verdict
    assert verdict.verdict == "cannot-run", verdict
