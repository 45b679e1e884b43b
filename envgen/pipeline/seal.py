"""The seal: what `envgen build` adds to an image once its probe passed, as one child layer: the probe's verdict
(``/etc/envgen/smoke-report.json``) and the resolved package list (``/etc/envgen/requirements.freeze.txt``), and
the labels that name them.

The same build and the same verdict give the same layer, byte for byte (issue #45): the report sealed is the verdict
alone (``envgen.smoke.report.sealed_verdict``: no time, no measured figure, nothing of the host that ran it; the whole
report stays in the validation record of the state directory), and every entry of the layer's tar has the built
image's own creation time (``SOURCE_DATE_EPOCH`` on a BuildKit that rewrites times), owner root and a fixed mode,
the folders included (/etc too: creating the container touched it), so the commit's diff holds nothing that depends
on when or where the seal ran. The image
config the commit writes still carries the commit's time, so the image ID is new on each build; the layers are not."""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import tempfile
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from envgen import layout
from envgen.smoke.report import SmokeReport, sealed_verdict
from envgen.vocabulary import (
    LABEL_FREEZE_SHA256,
    LABEL_SMOKE,
    LABEL_SMOKE_MODE,
    LABEL_SMOKE_TESTED_IMAGE,
    LABEL_SMOKE_TIER,
)

if TYPE_CHECKING:
    from docker import DockerClient

    from envgen.docker import BuilderInfo

SEALED_DIR = PurePosixPath(layout.SEALED_REPORT).parent
assert PurePosixPath(layout.SEALED_FREEZE).parent == SEALED_DIR


def sealed_files(report: SmokeReport, frozen: str) -> dict[str, bytes]:
    """The files the seal writes (names under SEALED_DIR): the same bytes for the same verdict and package list."""
    verdict = json.dumps(sealed_verdict(report.raw), indent=2, sort_keys=True) + "\n"
    return {PurePosixPath(layout.SEALED_REPORT).name: verdict.encode(),
            PurePosixPath(layout.SEALED_FREEZE).name: frozen.encode()}


def seal_tar(files: dict[str, bytes], mtime: int) -> bytes:
    """The tar handed to the container, unpacked at ``/``: SEALED_DIR and each folder above it (``etc``: creating
    the container touches it, for /etc/hosts and the like), then the files, all owned by root with the time
    ``mtime`` (unpacking sets a folder's time from the tar, after its files, not from the clock)."""
    archive = io.BytesIO()
    with tarfile.open(fileobj=archive, mode="w", format=tarfile.PAX_FORMAT) as tar:
        parts = SEALED_DIR.relative_to("/").parts
        for depth in range(1, len(parts) + 1):
            folder = tarfile.TarInfo("/".join(parts[:depth]))
            folder.type, folder.mode, folder.mtime = tarfile.DIRTYPE, 0o755, mtime
            tar.addfile(folder)
        for name, payload in sorted(files.items()):
            info = tarfile.TarInfo(str(SEALED_DIR.relative_to("/") / name))
            info.size, info.mode, info.mtime = len(payload), 0o644, mtime
            tar.addfile(info, io.BytesIO(payload))
    return archive.getvalue()


def image_time(created: str) -> int:
    """The epoch seconds of an image's ``Created`` (RFC 3339, nanoseconds, ``Z``): the seal's file times."""
    try:
        moment = datetime.strptime(created[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
    except ValueError:
        return 0
    return max(int(moment.timestamp()), 0)


def seal(client: DockerClient, image_id: str, report: SmokeReport, frozen: str) -> str:
    """A child image that carries its smoke verdict and its resolved package list (files + labels); returns the
    new image ID. The environment is byte-for-byte the one that was tested."""
    mtime = image_time(str(client.images.get(image_id).attrs.get("Created", "")))
    # Created, never started: the image's own CMD/USER/ENV stay as they are in the commit. Owned by its name (a
    # label would be committed into the image): the next envgen removes it if this one is killed.
    from envgen.docker.owner import remove_orphans, seal_name

    remove_orphans(client)
    container = client.containers.create(image_id, name=seal_name())
    try:
        container.put_archive("/", seal_tar(sealed_files(report, frozen), mtime))
        freeze_hash = hashlib.sha256(frozen.encode()).hexdigest()
        # one label per change: Podman's commit reads everything after the first key as its value
        labels = [f'LABEL {key}="{value}"' for key, value in (
            (LABEL_SMOKE, report.status), (LABEL_SMOKE_MODE, report.mode), (LABEL_SMOKE_TIER, report.tier or ""),
            (LABEL_SMOKE_TESTED_IMAGE, image_id), (LABEL_FREEZE_SHA256, freeze_hash))]
        committed = container.commit(changes=labels, message="envgen: smoke report sealed into the image")
    finally:
        container.remove(force=True)
    return str(committed.id)


def recompressed(client: DockerClient, builder: BuilderInfo, sealed_id: str, log_path: Path) -> str:
    """The sealed image ``sealed_id`` with every layer compressed as ``builder`` asks (zstd): the commit above writes
    its new layer with gzip whatever its parent's are (moby's daemon/containerd/image_commit.go, ``createDiff``), and
    a registry client pushes the layers as the engine stores them. So BuildKit exports it again (``FROM`` it, nothing
    added, ``force-compression``; its log: ``log_path``): the same diff IDs (checked: BuildFailed otherwise), config
    and labels; the commit's image is removed. The new image's ID."""
    from envgen.docker import build_image, inspect_image, remove_image
    from envgen.docker.images import tag_all
    from envgen.errors import BuildFailed

    source = f"envgen-seal-{builder.compression}:{os.getpid()}-{os.urandom(4).hex()}"  # BuildKit's FROM needs a name
    sealed = inspect_image(client, sealed_id)
    tag_all(client, sealed_id, [source])
    try:
        with tempfile.TemporaryDirectory(prefix="envgen-seal-") as tmp:
            Path(tmp, "Dockerfile").write_text(f"FROM {source}\n", encoding="utf-8")
            built = build_image(Path(tmp), builder=builder, log_path=log_path, client=client,
                                compression=builder.compression)
    finally:
        remove_image(client, source)  # the commit's image goes with its only name
    again = inspect_image(client, built.image_id)
    if sealed is None or again is None or again.layers != sealed.layers:
        remove_image(client, built.image_id, force=True)
        raise BuildFailed(f"the sealed image exported again with {builder.compression} layers "
                          f"({built.image_id[:19]}) does not hold the sealed image's layers ({sealed_id[:19]}); "
                          "nothing was tagged", log_path=str(log_path), fix=f"see the export's log: {log_path}")
    return built.image_id
