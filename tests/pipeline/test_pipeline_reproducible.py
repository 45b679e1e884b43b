"""Measured reproducibility: `cpu-smoke` built twice from its lock (BuildKit, `--no-cache` and a fresh
uv cache id each time, so no layer and no downloaded wheel is shared between the two builds; the global
build cache of this shared engine is left alone), then the manifests inside the two images compared:
`dpkg-query -W`, `pip freeze`, `pip list --format=json` and every file of /opt/env with its size and
sha256 (bytecode included: uv compiles it with SOURCE_DATE_EPOCH from the lock, which makes Python write
hash-checked .pyc files that do not embed a time). They must be identical.

Layer digests are reported (and written to $ENVGEN_REPRO_REPORT when set). On an engine whose BuildKit rewrites
file times to SOURCE_DATE_EPOCH (Docker >= 26: BuilderInfo.oci_rewrite, scripts/engine-current) they must be
identical too; on Docker 20.10 they differ (docs/benchmarks.md says why). About 5-6 minutes on 2 cores (two
cold 2.6 GB builds).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import pytest

from envgen.config import load_config
from envgen.docker import build_image, detect_builder, remove_image
from envgen.kb import load_kb
from envgen.lock.wheels import configured_wheelhouse
from envgen.profile import load_profile
from envgen.render.core import render

if TYPE_CHECKING:
    from docker import DockerClient

pytestmark = pytest.mark.slow

MANIFEST = r"""
set -eu
echo '== dpkg'; dpkg-query -W
echo '== freeze'; /opt/env/bin/python -m pip freeze --all
echo '== list'; /opt/env/bin/python -m pip list --format=json
echo '== files'; cd /opt/env && find . -xdev \( -type f -o -type l \) -printf '%y %p %s\n' | LC_ALL=C sort
echo '== sha256'; find . -xdev -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
"""


def test_two_cold_builds_from_the_lock_have_identical_contents(
        docker_client: DockerClient, tmp_path: Path, unavailable: Callable[[str], NoReturn]) -> None:
    from envgen.docker.engine import engine_info
    from envgen.errors import InputError

    engine = engine_info(docker_client)
    try:
        builder = detect_builder(choice="buildkit", engine=engine)
    except InputError as exc:
        unavailable(exc.one_line())
    wheelhouse = configured_wheelhouse() or Path("/opt/wheels")
    if not list(wheelhouse.glob("torch-2.13.0+cpu-*.whl")):
        unavailable(f"no torch 2.13.0+cpu wheel in {wheelhouse} (cpu-smoke's lock takes it from a wheelhouse)")
    result = render(load_profile("cpu-smoke", env={}), load_kb(), tmp_path / "ctx", wheelhouse=wheelhouse)
    config = load_config()
    secrets = {"ca_bundle": config.ca_bundle} if config.ca_bundle else {}
    nonce = uuid.uuid4().hex[:10]
    tags = [f"envgen-test-repro-{nonce}:{n}" for n in (1, 2)]
    manifests, layers = [], []
    try:
        for n, tag in enumerate(tags):
            built = build_image(result.dir, builder=builder, log_path=tmp_path / f"build{n}.log", tags=[tag],
                                secrets=secrets, no_cache=True, client=docker_client,
                                build_args={**result.build_args, "ENVGEN_CACHE_ID": f"repro-{nonce}-{n}"})
            out = docker_client.containers.run(tag, ["/bin/sh", "-c", MANIFEST], remove=True, user="0:0")
            manifests.append(out.decode())
            layers.append(docker_client.images.get(built.image_id).attrs["RootFS"]["Layers"])
    finally:
        for tag in tags:
            remove_image(docker_client, tag, force=True)
        # the two uv cache sub-directories this test filled
        (tmp_path / "clean").mkdir()
        (tmp_path / "clean" / "Dockerfile").write_text(
            "FROM debian:bookworm-slim\nRUN --mount=type=cache,target=/root/.cache/uv "
            f"rm -rf /root/.cache/uv/repro-{nonce}-0 /root/.cache/uv/repro-{nonce}-1\n")
        build_image(tmp_path / "clean", builder=builder, log_path=tmp_path / "clean.log", no_cache=True,
                    client=docker_client)
    same = [a == b for a, b in zip(layers[0], layers[1], strict=False)]
    report = {"engine": f"{engine.name} {engine.version}", "builder": builder.reason, "layers": len(layers[0]),
              "identical_layers": sum(same), "per_layer": same, "manifest_lines": len(manifests[0].splitlines()),
              "digests": layers}
    print(json.dumps(report))
    if os.environ.get("ENVGEN_REPRO_REPORT"):
        Path(os.environ["ENVGEN_REPRO_REPORT"]).write_text(json.dumps(report, indent=2) + "\n"
                                                           + "\n".join(_diff(manifests)))
    sections = {name: [m.split(f"== {name}\n", 1)[1].split("\n== ", 1)[0] for m in manifests]
                for name in ("dpkg", "freeze", "list", "files", "sha256")}
    for name in ("dpkg", "freeze", "list", "files"):
        assert sections[name][0] == sections[name][1], f"{name} differs:\n" + "\n".join(_diff(manifests)[:40])
    assert "tensorflow-cpu==2.12.0" in sections["freeze"][0] and "torch==2.13.0+cpu" in sections["freeze"][0]
    assert sections["sha256"][0] == sections["sha256"][1], "file contents differ:\n" + "\n".join(_diff(manifests)[:40])
    if builder.oci_rewrite:
        assert layers[0] == layers[1], f"{builder.reason}: layer digests differ: {json.dumps(report)}"


def _diff(manifests: list[str]) -> list[str]:
    import difflib

    return list(difflib.unified_diff(manifests[0].splitlines(), manifests[1].splitlines(), "build1", "build2",
                                     lineterm="", n=0))
