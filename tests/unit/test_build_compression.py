"""The layers' compression (issue #44 item 4): zstd through BuildKit's OCI exporter (Docker >= 26, the containerd
image store), gzip everywhere else; zstd asked of a builder that cannot write it (Docker 20.10) is one input error.
The real engines' side: tests/docker/test_build_zstd.py and bench/bench_pull.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from envgen.docker.build import COMPRESSIONS, cli_command, oci_archive, with_compression
from envgen.docker.builder import BuilderInfo
from envgen.errors import InputError

CURRENT = BuilderInfo("buildx", "/usr/bin/docker", "0.13.1", "test", oci_rewrite=True)
OLD = BuilderInfo("buildkit-legacy", "/usr/bin/docker", "20.10.24", "test")


def test_zstd_asks_buildkit_to_compress_every_layer_with_it(tmp_path: Path) -> None:
    iid = tmp_path / "iid"
    cmd = cli_command(with_compression(CURRENT, "zstd"), tmp_path, "Dockerfile", iid, {}, {}, {})
    assert (f"--output=type=oci,dest={oci_archive(iid)},rewrite-timestamp=true,compression=zstd,"
            "force-compression=true") in cmd
    gzip = cli_command(with_compression(CURRENT, "gzip"), tmp_path, "Dockerfile", iid, {}, {}, {})
    assert f"--output=type=oci,dest={oci_archive(iid)},rewrite-timestamp=true" in gzip
    assert not any("compression=" in word for word in gzip) and "--provenance=false" not in gzip
    assert COMPRESSIONS == ("gzip", "zstd") and with_compression(OLD, "gzip").compression == "gzip"
    # one manifest (no provenance index: the seal's image is one manifest) and, without SOURCE_DATE_EPOCH (an
    # unlocked Dockerfile, or the seal's export again), still the OCI export: --load would drop the compression (the
    # real route, an unlocked profile on Docker 26: tests/pipeline/test_pipeline_zstd.py)
    assert "--provenance=false" in cmd and "--load" not in cmd
    unlocked = cli_command(with_compression(CURRENT, "zstd"), tmp_path, "Dockerfile", iid, {}, {}, {}, rewrite=False)
    assert f"--output=type=oci,dest={oci_archive(iid)},compression=zstd,force-compression=true" in unlocked


def test_zstd_on_a_builder_without_the_oci_exporter_is_refused_with_the_way_out() -> None:
    with pytest.raises(InputError, match="Docker 20.10 cannot store or pull them") as caught:
        with_compression(OLD, "zstd")
    assert "engine-current" in (caught.value.fix or "")
    with pytest.raises(InputError, match="'brotli' is not one envgen knows"):
        with_compression(CURRENT, "brotli")
