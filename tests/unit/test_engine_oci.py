"""Identical layers on Docker >= 26: when the builder exports OCI with rewrite-timestamp, and the build argument
SOURCE_DATE_EPOCH that BuildKit's exporter reads (recorded /version and /info answers: tests/fixtures/engines)."""

from __future__ import annotations

import json
from pathlib import Path

from envgen.docker.build import cli_command, oci_archive, source_date_epoch
from envgen.docker.builder import BuilderInfo
from envgen.docker.engine import CONTAINERD_SNAPSHOTTER, engine_from_version

ENGINES = Path(__file__).parents[1] / "fixtures" / "engines"


def test_the_containerd_store_is_read_from_the_driver_status() -> None:
    version = json.loads((ENGINES / "docker-version-20.10.json").read_text())
    classic = engine_from_version(version, {"DriverStatus": [["Backing Filesystem", "extfs"]]})
    containerd = engine_from_version({**version, "Version": "26.1.5+dfsg1"},
                                     {"DriverStatus": [["driver-type", CONTAINERD_SNAPSHOTTER]]})
    assert (classic.major, classic.containerd_store) == (20, False)
    assert (containerd.major, containerd.containerd_store) == (26, True)


def test_an_oci_export_replaces_load_and_gets_the_dockerfiles_epoch(tmp_path: Path) -> None:
    builder = BuilderInfo("buildx", "/usr/bin/docker", "0.13.1", "test", oci_rewrite=True)
    iid = tmp_path / "iid"
    cmd = cli_command(builder, tmp_path, "Dockerfile", iid, {}, {}, {})
    assert f"--output=type=oci,dest={oci_archive(iid)},rewrite-timestamp=true" in cmd and "--load" not in cmd
    text = "FROM x\nARG SOURCE_DATE_EPOCH=1795470249\nRUN true\n"
    assert source_date_epoch(text, {"A": "1"}) == {"A": "1", "SOURCE_DATE_EPOCH": "1795470249"}
    assert source_date_epoch(text, {"SOURCE_DATE_EPOCH": "5"}) == {"SOURCE_DATE_EPOCH": "5"}
    assert source_date_epoch("FROM x\n", {}) == {}
