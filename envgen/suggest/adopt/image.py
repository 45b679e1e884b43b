"""An image on the engine read for `envgen init --from IMAGE`: its Python (found as `envgen smoke` finds it), every
installed distribution at its version (``image_facts.py``, run in a container that is never committed), the
frameworks' builds as they report them (torch's CUDA: its build tag), and its base (``docker.foreign.base_of``)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import tarfile
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envgen.errors import InputError
from envgen.suggest.adopt.model import Item, Origin, Read

if TYPE_CHECKING:
    from docker import DockerClient

    from envgen.docker.run import RunResult

FACTS = Path(__file__).resolve().parent / "image_facts.py"


def run_script(client: DockerClient, image: str, script: Path, args: str = "", python: str | None = None,
               timeout_s: float = 300) -> RunResult:
    """``script`` (a file here) run by the image's Python (``python``, else the one found) in a new container that
    is never committed, with ``args`` (shell words) after it."""
    from envgen.docker.foreign import run_with_files, with_python

    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        data = script.read_bytes()
        info = tarfile.TarInfo(script.name)
        info.size, info.mode = len(data), 0o444
        tar.addfile(info, io.BytesIO(data))
    return run_with_files(client, image, with_python(python, f"/tmp/{script.name} {args}".rstrip()),
                          buffer.getvalue(), "/tmp", timeout_s=timeout_s)


def image_facts(client: DockerClient, image: str, python: str | None = None) -> dict[str, Any]:
    """What ``image_facts.py`` prints in a container of ``image`` (no GPU, no network needed)."""
    result = run_script(client, image, FACTS, python=python)
    lines = [line for line in result.output.splitlines() if line.startswith("{")]
    if result.exit_code != 0 or not lines:
        tail = result.output.strip().splitlines()[-1:] or [f"exit {result.exit_code}"]
        raise InputError(f"--from {image}: could not read its Python environment ({tail[0]})",
                         fix="name the interpreter with --python PATH (its path inside the image)")
    facts: dict[str, Any] = json.loads(lines[-1])
    return facts


def facts_read(facts: dict[str, Any], source: str, kind: str) -> Read:
    """What ``image_facts.py`` printed, as a ``Read``: the Python, each distribution pinned at its version (torch's
    CUDA build named where PyPI's wheel does not say it: its local version is bare), the frameworks that failed to
    import noted."""
    where = f"{source} ({facts['python']})"
    read = Read(kind=kind)
    read.python = Item(str(facts["version"]), Origin(f"{where}: its Python"))
    read.interpreter = Item(str(facts["python"]), Origin(f"{where}: its interpreter"))
    torch = facts.get("frameworks", {}).get("torch") or {}
    for dist in facts["distributions"]:
        name, version = dist["name"], dist["version"]
        if name.lower() == "torch" and torch.get("cuda") and "+" not in version:
            cuda = str(torch["cuda"]).split(".")
            version = f"{version}+cu{cuda[0]}{cuda[1]}"
        read.pip.append(Item(f"{name}=={version}", Origin(f"{where}: installed")))
    for name, reported in sorted(facts.get("frameworks", {}).items()):
        if "error" in reported:
            read.notes.append(f"{source}: importing {name} failed ({reported['error']}): its build is not read")
    return read


def base_holds(client: DockerClient, image: str, python: str) -> dict[str, str]:
    """What the environment of interpreter ``python`` holds in ``image``, by PEP 503 name, at the versions
    ``facts_read`` writes (torch with its CUDA build's label): what `init --from … --base IMAGE` writes under
    base_provides. InputError where the image has no such interpreter."""
    from envgen.profile.requirements import canonical

    read = facts_read(image_facts(client, image, python), image, "image")
    held = {}
    for item in read.pip:
        name, _, version = item.text.partition("==")
        held[canonical(name)] = version
    return held


def read_image(client: DockerClient, image: str, python: str | None = None) -> Read:
    from envgen.docker.foreign import base_of

    read = facts_read(image_facts(client, image, python), image, "image")
    base = base_of(client, image)
    if base is not None:
        from envgen.docker.images import inspect_image

        read.base = Item(base[0], Origin(f"{image}: {base[1]}"))
        found = inspect_image(client, base[0])
        read.local_base = found is not None and not found.digests
    return read


@contextlib.contextmanager
def image_profile(image: str, gpus: list[str], driver: str | None,
                  env: Mapping[str, str] | None = None) -> Iterator[tuple[Path, list[str]]]:
    """(a temporary profile of ``image``'s actual stack, the adoption's notes), for as long as the block runs:
    what `envgen check --image` judges."""
    from envgen.cache import cache_dir
    from envgen.check.findings import parse_driver
    from envgen.docker import connect, inspect_image
    from envgen.kb.cache import load_kb_cached
    from envgen.suggest.adopt.compose import AdoptOptions, adopt

    client = connect()
    if inspect_image(client, image) is None:
        raise InputError(f"--image {image}: no such image on this engine", fix="give an image from `docker images`")
    kb = load_kb_cached(cache_dir(os.environ if env is None else env))
    adopted = adopt(read_image(client, image), image, kb, AdoptOptions(name="image", gpus=tuple(gpus),
                                                                          driver=parse_driver(driver)))
    with tempfile.TemporaryDirectory(prefix="envgen-image-") as tmp:
        path = Path(tmp) / "image.yaml"
        path.write_text(adopted.text, encoding="utf-8")
        yield path, adopted.notes
