"""`envgen init --from SOURCE`: a profile adopted (``envgen.suggest.adopt``) from a requirements.txt, an
environment.yml, a pyproject.toml, a Dockerfile, an image on the engine or a Python environment on this host, written,
then judged by `envgen check` (its findings printed, its exit code kept); and `envgen doctor --python PATH`."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from envgen.cli.common import err
from envgen.errors import InputError

if TYPE_CHECKING:
    from envgen.suggest.adopt.model import Read


def init_from(source: Path, out: Path | None, gpu: str | None, driver: str | None, python: str | None,
              group: str | None, base: str | None, name: str) -> int:
    """Write the adopted profile (stdout without ``out``), print what was not taken and check's verdict."""
    from envgen.check.findings import parse_driver
    from envgen.pipeline.session import Session
    from envgen.suggest.adopt import AdoptOptions, adopt

    kb = Session().kb
    gpus: tuple[str, ...] = ()
    driver = parse_driver(driver)
    if gpu == "here":
        from envgen.suggest.adopt.here import host_gpus

        gpus, found = host_gpus(kb)
        driver = driver or found
        err(f"--gpu here: {', '.join(gpus)}, driver {found or 'unknown'}")
    elif gpu:
        gpus = (gpu,)
    read = _read(source, group, python)
    held = _base_holds(base, read)
    adopted = adopt(read, str(source), kb, AdoptOptions(
        name=name, python=None if read.kind == "image" else python, gpus=gpus, driver=driver, base=base,
        base_python=read.interpreter.text if held is not None and read.interpreter else None,
        base_holds=tuple(sorted((held or {}).items()))))
    for line in adopted.notes:
        err(f"note: {line}")
    if out is None:
        typer.echo(adopted.text, nl=False)
        with tempfile.TemporaryDirectory(prefix="envgen-adopt-") as tmp:
            path = Path(tmp) / f"{name}.yaml"
            path.write_text(adopted.text, encoding="utf-8")
            return _check(str(path), gpus, driver)
    from envgen.files import USER_FILE, write_atomically

    write_atomically(out, adopted.text, USER_FILE)
    err(f"wrote {out} (profile {name}, from {source}); envgen check {out}:")
    return _check(str(out), gpus, driver)


def _base_holds(base: str | None, read: Read) -> dict[str, str] | None:
    """What --base holds in the environment of the interpreter the source was read with (a venv or an image):
    None for a file source, or where the image has no such interpreter (said in a note)."""
    if base is None or read.interpreter is None:
        return None
    from envgen.docker import connect, inspect_image
    from envgen.suggest.adopt.image import base_holds

    client = connect()
    if inspect_image(client, base) is None:
        err(f"note: --base {base} is not on this engine: base_provides not written (`docker load` it, then "
            "adopt again)")
        return None
    try:
        return base_holds(client, base, read.interpreter.text)
    except InputError as exc:
        err(f"note: --base {base}: {read.interpreter.text} not read there ({exc.message}): base_provides not "
            "written")
        return None


def _read(source: Path, group: str | None, python: str | None) -> Read:
    """A file by its kind; a name that is no file but an image on the engine: the image (``python``: its
    interpreter's path inside it, where it is not found by itself)."""
    from envgen.suggest.adopt import read_source

    if source.is_dir() or source.name.startswith("python") and os.access(source, os.X_OK):
        from envgen.suggest.adopt.local import read_python

        return read_python(source)
    if not source.exists() and group is None:
        from envgen.docker import connect, inspect_image

        client = connect()
        if inspect_image(client, str(source)) is not None:
            from envgen.suggest.adopt.image import read_image

            return read_image(client, str(source), python)
    return read_source(source, group)


def doctor_python(path: Path) -> int:
    """`envgen doctor --python PATH`: the report, and 1 when the probe or check finds an error."""
    from envgen.host import RealProvider, collect
    from envgen.pipeline.session import Session
    from envgen.suggest.adopt.doctor import doctor_python as judge

    kb = Session().kb
    facts = collect(RealProvider(), kb)
    result = judge(path, kb, tuple(dict.fromkeys(g.name for g in facts.gpus)), facts.driver)
    typer.echo(result.text(), nl=False)
    return 0 if result.ok else 1


def _check(profile: str, gpus: tuple[str, ...], driver: str | None) -> int:
    from envgen.cli.check import check

    return check(profile, list(gpus) or None, None, driver, "linux", False, False, echo=_to_stderr)


def _to_stderr(text: str = "", err: bool = False) -> None:
    typer.echo(text, err=True)


def refuse_mixed(frameworks: str | None) -> None:
    if frameworks is not None:
        raise InputError("option --frameworks: with --from, the frameworks are the source's",
                         fix="leave --frameworks out, or pin the framework in the source")
