"""A container of any image with files copied in before it starts (``put_archive``, as `docker cp`): the image is
not changed, the container is removed afterwards and never committed. `envgen smoke` of an image envgen did not
build brings its probe in this way."""

from __future__ import annotations

import contextlib
import io
import tarfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from envgen.config import DEFAULT_SHM_SIZE
from envgen.docker.run import Gpus, RunResult, _create, _create_kwargs, _refused, _wait, _wrap_env

if TYPE_CHECKING:
    from docker import DockerClient


def directory_tar(directory: Path, name: str) -> bytes:
    """``directory``'s plain files as a tar archive under ``name/`` (read-only modes, root-owned, fixed mtime)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        folder = tarfile.TarInfo(name)
        folder.type, folder.mode = tarfile.DIRTYPE, 0o555
        tar.addfile(folder)
        for path in sorted(p for p in directory.iterdir() if p.is_file() and not p.name.endswith(".pyc")):
            data = path.read_bytes()
            info = tarfile.TarInfo(f"{name}/{path.name}")
            info.size, info.mode = len(data), 0o444
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def run_with_files(client: DockerClient, image: str, command: Sequence[str], archive: bytes, dest: str, *,
                   gpus: Gpus = "none", cdi_devices: Sequence[str] = (), restore_env: Mapping[str, str] | None = None,
                   timeout_s: float | None = None) -> RunResult:
    """Run ``command`` in a new container of ``image`` with ``archive`` (a tar) unpacked at ``dest`` first."""
    from docker.errors import APIError

    kwargs = _create_kwargs(gpus, cdi_devices, None, None, DEFAULT_SHM_SIZE, None)
    if restore_env:
        command = _wrap_env(client, image, command, restore_env, kwargs)
    container = _create(client, image, list(command), kwargs)
    try:
        container.put_archive(dest, archive)
        try:
            container.start()
        except APIError as exc:
            raise _refused(image, exc) from None
        return _wait(container, None, timeout_s)
    finally:
        with contextlib.suppress(APIError):
            container.remove(force=True)
