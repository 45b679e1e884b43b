"""Offline bundles for real: build a tiny validated image, `save` it to one file, remove it from
the engine, reject a truncated and two altered copies (nothing loaded), `load` the good one (its signed
validation verified, not smoke-tested on this host), then the first `run` smoke-tests it here. Cost: one small build
(seconds when the pipeline tests' layers are cached, ~1 min cold) and a ~40 MB bundle."""

from __future__ import annotations

import io
import json
import secrets
import tarfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from envgen.docker import inspect_image, remove_image
from envgen.errors import BundleError
from envgen.pipeline.build import BuildOutcome, build
from envgen.pipeline.bundle import IMAGE, MANIFEST, load, save
from envgen.pipeline.image_list import image_rows
from envgen.pipeline.run import run
from envgen.pipeline.state import ValidationStore
from tests.pipeline.conftest import alias, minimal_profile

if TYPE_CHECKING:
    from docker import DockerClient


@pytest.fixture(scope="module")
def saved(envgen_home: Path, write_profile: Callable[[str, str], str], docker_client: DockerClient,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[BuildOutcome, Path]]:
    name = write_profile(f"bundle-rt-{secrets.token_hex(3)}", minimal_profile('"six==1.16.0"'))
    outcome = build(name)
    bundle = tmp_path_factory.mktemp("bundles") / f"{name}.envgen"
    start = time.monotonic()
    message = save(name, bundle)
    print(f"\nsave: {time.monotonic() - start:.1f}s, {bundle.stat().st_size / 1e6:.1f} MB: {message}")
    # Gone from the engine (only this module's tags and image), so the load below is real.
    for tag in (outcome.tag, alias(name)):
        remove_image(docker_client, tag)
    remove_image(docker_client, outcome.image_id, force=True)
    assert inspect_image(docker_client, outcome.image_id) is None
    yield outcome, bundle
    for ref in (outcome.tag, outcome.image_id):
        remove_image(docker_client, ref, force=True)


def _rewrite(src: Path, dst: Path, change: Callable[[str, bytes], bytes]) -> Path:
    with tarfile.open(src, "r:") as tar, tarfile.open(dst, "w") as out:
        for member in tar.getmembers():
            handle = tar.extractfile(member)
            data = change(member.name, handle.read() if handle else b"")
            info = tarfile.TarInfo(member.name)
            info.size = len(data)
            out.addfile(info, io.BytesIO(data))
    return dst


def _flip_byte(name: str, data: bytes) -> bytes:
    if name != IMAGE:
        return data
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1:]


def _other_label(name: str, data: bytes) -> bytes:
    if name != MANIFEST:
        return data
    manifest = json.loads(data)
    manifest["labels"]["io.envgen.freeze-sha256"] = "0" * 64
    return json.dumps(manifest).encode()


def test_damaged_bundles_are_rejected_and_load_nothing(saved: tuple[BuildOutcome, Path], tmp_path: Path,
                                                       docker_client: DockerClient) -> None:
    outcome, bundle = saved
    data = bundle.read_bytes()
    truncated = tmp_path / "truncated.envgen"
    truncated.write_bytes(data[: len(data) * 2 // 3])
    cases = {
        "truncated": (truncated, "truncated or damaged"),
        "flipped": (_rewrite(bundle, tmp_path / "flipped.envgen", _flip_byte), "checksum"),
        "relabelled": (_rewrite(bundle, tmp_path / "relabelled.envgen", _other_label), "labels differ"),
        "not a bundle": (tmp_path / "README.md", "not an envgen bundle"),
    }
    (tmp_path / "README.md").write_text("hello\n", encoding="utf-8")
    for case, (path, words) in cases.items():
        with pytest.raises(BundleError) as info:
            load(path)
        line = info.value.one_line()
        assert words in line and "nothing was loaded" in line and "\n" not in line, (case, line)
        assert inspect_image(docker_client, outcome.image_id) is None, case


def test_round_trip_then_first_run_validates_here(saved: tuple[BuildOutcome, Path], envgen_home: Path,
                                                  docker_client: DockerClient) -> None:
    outcome, bundle = saved
    store = ValidationStore(envgen_home / "state")
    build_record = store.get(outcome.image_id)
    assert build_record is not None
    store._path(outcome.image_id).unlink()  # the bundle arrives on a host that never validated it
    start = time.monotonic()
    message = load(bundle)
    print(f"\nload: {time.monotonic() - start:.1f}s: {message}")
    assert "signed validation (cpu) names its digest; not smoke-tested on this host yet" in message
    image = inspect_image(docker_client, outcome.tag)
    assert image is not None and image.id == outcome.image_id
    row = next(r for r in image_rows() if r["id"] == outcome.image_id)
    assert row["validation"] == "signed pass, not smoke-tested on this host" and row["signed_by"]
    out = io.StringIO()
    code = run(outcome.tag, command=["python", "-c", "import six; print(six.__version__)"], gpus="none",
               out=out.write)
    assert code == 0 and "1.16.0" in out.getvalue() and "smoke test" in out.getvalue()
    record = store.get(outcome.image_id)
    assert record is not None and record.passed
    with tarfile.open(bundle, "r:") as tar:
        manifest = json.loads(tar.extractfile(MANIFEST).read())  # type: ignore[union-attr]
    assert manifest["schema"] == "envgen.bundle/2" and manifest["content_hash"] == image.labels[
        "io.envgen.content-hash"] and manifest["validation"]["status"] == "pass"
    assert set(manifest["files"]) == {"image.tar.gz", "validation.json", "smoke-report.json", "attestations.json"}
