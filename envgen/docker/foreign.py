"""A container of any image with files copied in before it starts (``put_archive``, as `docker cp`): the image is
not changed, the container is removed afterwards and never committed. `envgen smoke` of an image envgen did not
build brings its probe in this way."""

from __future__ import annotations

import io
import re
import shlex
import tarfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from envgen.docker.run import Gpus, RunResult, run_container
from envgen.errors import InputError

if TYPE_CHECKING:
    from docker import DockerClient


# where images keep their Python, in the order they are tried: PATH first (a venv or conda put there by ENV PATH)
INTERPRETERS = ("python3", "python", "/opt/conda/bin/python", "/opt/venv/bin/python", "/venv/bin/python",
                "/usr/local/bin/python3", "/usr/bin/python3")
_PYTHON_RE = re.compile(r"^(/[A-Za-z0-9._+-]+)+$|^[A-Za-z0-9._+-]+$")


def with_python(python: str | None, rest: str) -> list[str]:
    """``/bin/sh -c`` running ``"$PY" REST`` with the image's interpreter: ``python`` (a path or a name), else the
    first of :data:`INTERPRETERS` the image has; exit 127 naming what was looked for when there is none."""
    if python is not None and not _PYTHON_RE.match(python):
        raise InputError(f"option --python = {python!r} is not an interpreter path or name",
                         fix="give the interpreter's absolute path in the image, such as /opt/venv/bin/python")
    candidates = " ".join(shlex.quote(p) for p in ([python] if python else INTERPRETERS))
    script = (f'PY=; for p in {candidates}; do if command -v "$p" >/dev/null 2>&1; then PY=$(command -v "$p"); '
              'break; fi; done; if [ -z "$PY" ]; then echo "envgen: no Python interpreter in the image (looked '
              f'for {candidates}); name it with --python" >&2; exit 127; fi; '
              f'echo "envgen: python is $PY" >&2; "$PY" {rest}')
    return ["/bin/sh", "-c", script]


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
    return run_container(client, image, list(command), gpus=gpus, cdi_devices=cdi_devices, restore_env=restore_env,
                         timeout_s=timeout_s, files=(dest, archive))


BASE_LABEL = "org.opencontainers.image.base.name"  # OCI's annotation of the base, where a build tool set it


def base_of(client: DockerClient, image: str) -> tuple[str, str] | None:
    """(the image ``image`` was built FROM, how that is known): the OCI base label when the image has it, else the
    tagged image on this engine whose layers are the longest proper prefix of its layers; None when neither."""
    from envgen.docker.images import inspect_image

    found = inspect_image(client, image)
    if found is None:
        return None
    if found.labels.get(BASE_LABEL):
        return found.labels[BASE_LABEL], f"its label {BASE_LABEL}"
    best: tuple[int, str] | None = None
    for other in client.api.images():
        tags = [t for t in other.get("RepoTags") or [] if t != "<none>:<none>"]
        if not tags or other.get("Id") == found.id:
            continue
        layers = tuple((client.api.inspect_image(other["Id"]).get("RootFS") or {}).get("Layers") or ())
        if layers and len(layers) < len(found.layers) and found.layers[:len(layers)] == layers \
                and (best is None or len(layers) > best[0]):
            best = (len(layers), sorted(tags)[0])
    if best is None:
        return None
    return best[1], f"its first {best[0]} layer(s) are that image's"
