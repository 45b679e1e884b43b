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
from envgen.layout import WORKSPACE

if TYPE_CHECKING:
    from docker import DockerClient


# where images keep their Pythons, in the order they are tried after the interpreter the image's entrypoint or command
# names and PATH's python3/python: conda and its environments, venvs under the usual folders, the system's
INTERPRETERS = ("/opt/conda/bin/python", "/opt/conda/envs/*/bin/python", "/opt/*/bin/python", "/opt/*/.venv/bin/python",
                "/opt/*/venv/bin/python", "/venv/bin/python", "/.venv/bin/python", "/root/.venv/bin/python",
                "/root/*/.venv/bin/python", "/root/miniconda3/bin/python", "/root/miniconda3/envs/*/bin/python",
                "/root/miniforge3/bin/python", "/home/*/.venv/bin/python", f"{WORKSPACE}/.venv/bin/python",
                "/app/.venv/bin/python", "/usr/local/bin/python3", "/usr/bin/python3")
# what makes an environment worth probing: the frameworks and GPU packages the probe has checks for (probe_torch,
# probe_tf, probe_ext.KNOWN)
FRAMEWORKS = ("torch", "tensorflow", "jax", "cupy", "triton", "flash_attn", "xformers", "bitsandbytes", "deepspeed",
              "vllm", "sglang", "apex")
_PYTHON_RE = re.compile(r"^(/[A-Za-z0-9._+-]+)+$|^[A-Za-z0-9._+-]+$")
# run by each candidate: its environment (sys.prefix), how many of FRAMEWORKS it holds, and which
_SCORE = ("import sys, importlib.util as u\ndef has(n):\n    try:\n        return u.find_spec(n) is not None\n"
          "    except Exception:\n        return False\nf = [n for n in sys.argv[1:] if has(n)]\n"
          "print(sys.prefix.replace(' ', '_'), len(f), ','.join(f) or '-')")


def entry_interpreter(config: Mapping[str, object]) -> str | None:
    """The Python an image's entrypoint or command starts (``["/opt/venv/bin/python", ...]``), None when neither
    starts one by an absolute path."""
    for key in ("Entrypoint", "Cmd"):
        words = config.get(key) or []
        if isinstance(words, list) and words and str(words[0]).startswith("/") \
                and str(words[0]).rsplit("/", 1)[-1].startswith("python") and _PYTHON_RE.match(str(words[0])):
            return str(words[0])
    return None


def with_python(python: str | None, rest: str, first: str | None = None) -> list[str]:
    """``/bin/sh -c`` running ``"$PY" REST`` with the image's interpreter: ``python`` (a path or a name), else of the
    image's Pythons (``first``: the one its entrypoint starts; PATH's; :data:`INTERPRETERS`, one per environment) the
    one holding the most of :data:`FRAMEWORKS`, the first on a tie; stderr says which and what each holds, and that
    none holds one where none does; exit 127 naming what was looked for when there is no Python."""
    if python is not None and not _PYTHON_RE.match(python):
        raise InputError(f"option --python = {python!r} is not an interpreter path or name",
                         fix="give the interpreter's absolute path in the image, such as /opt/venv/bin/python")
    if python is not None:
        quoted = shlex.quote(python)
        return ["/bin/sh", "-c", f'PY=$(command -v {quoted}); if [ -z "$PY" ]; then echo "envgen: no Python '
                f'interpreter in the image (looked for {quoted}); name it with --python" >&2; exit 127; fi; '
                f'echo "envgen: python is $PY (named by --python)" >&2; "$PY" {rest}']
    start = shlex.quote(first) if first and _PYTHON_RE.match(first) else ""
    script = (f'PY=; N=-1; SEEN=; ALL=; for p in {start} $(command -v python3 python 2>/dev/null) '
              f'{" ".join(INTERPRETERS)}; do [ -x "$p" ] || continue; '
              f'out=$("$p" -c {shlex.quote(_SCORE)} {" ".join(FRAMEWORKS)} 2>/dev/null) || continue; set -- $out; '
              'case " $SEEN " in *" $1 "*) continue;; esac; SEEN="$SEEN $1"; ALL="$ALL $p ($3)"; '
              'if [ "$2" -gt "$N" ]; then PY=$p; N=$2; HOLDS=$3; fi; done; '
              'if [ -z "$PY" ]; then echo "envgen: no Python interpreter in the image (looked on PATH and in '
              f'{" ".join(INTERPRETERS)}); name it with --python" >&2; exit 127; fi; '
              'if [ "$N" -gt 0 ]; then echo "envgen: python is $PY, which holds $HOLDS (Pythons in the image:$ALL)" '
              '>&2; else echo "envgen: python is $PY; no Python in the image holds a framework to validate '
              '(looked at:$ALL); name another with --python" >&2; fi; '
              f'"$PY" {rest}')
    return ["/bin/sh", "-c", script]


def directory_tar(directory: Path, name: str) -> bytes:
    """``directory``'s folders and plain files, recursively, as a tar archive under ``name/`` (read-only modes,
    root-owned, fixed mtime; no ``__pycache__``)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        folder = tarfile.TarInfo(name)
        folder.type, folder.mode = tarfile.DIRTYPE, 0o555
        tar.addfile(folder)
        for path in sorted(directory.rglob("*")):
            rel = path.relative_to(directory)
            if "__pycache__" in rel.parts or path.name.endswith(".pyc") or not (path.is_file() or path.is_dir()):
                continue
            info = tarfile.TarInfo(f"{name}/{rel.as_posix()}")
            if path.is_dir():
                info.type, info.mode = tarfile.DIRTYPE, 0o555
                tar.addfile(info)
                continue
            data = path.read_bytes()
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
