"""Issue #32, items 10 and 11: `envgen doctor` said "runs here" for a profile whose base this host can neither find
nor fetch (here: `ubuntu:20.04`, as `envgen init --python 3.8` picks; no public registry is reachable from this
machine). Against the real engine: the local base of cpu-minimal is found, the Docker Hub one is not."""

from __future__ import annotations

from pathlib import Path

import pytest

from envgen.pipeline.doctor import doctor_report

pytestmark = pytest.mark.docker

HUB = """\
name: hub-base
base: ubuntu:20.04
installer: pip
python: "3.8"
gpu:
  required: false
packages:
  pip: [six==1.16.0]
"""


def test_a_base_this_host_cannot_fetch_is_said(tmp_path: Path, docker_client: object) -> None:
    (tmp_path / "hub-base.yaml").write_text(HUB)
    report = doctor_report(str(tmp_path / "hub-base.yaml")).report
    [verdict] = report.verdicts
    reasons = {r.code: r for r in verdict.reasons}
    if "base-fetched" in reasons:  # a machine that reaches Docker Hub: nothing to prove here, say so
        pytest.fail("this machine reaches Docker Hub; the test needs a host without a public registry")
    assert verdict.verdict == "cannot-run", verdict
    assert "ubuntu:20.04 is not on this engine" in reasons["base-unreachable"].message
    assert "docker load" in reasons["base-unreachable"].fix


def test_a_local_base_that_is_here_adds_nothing(docker_client: object) -> None:
    [verdict] = doctor_report("cpu-minimal").report.verdicts
    assert not {"base-unreachable", "base-missing"} & {r.code for r in verdict.reasons}
    assert verdict.verdict in ("runs", "runs-with-warning")
