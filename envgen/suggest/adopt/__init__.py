"""`envgen init --from SOURCE`: a profile made from what a user already has (a requirements.txt, an environment.yml,
a pyproject.toml, a setup.py, a Dockerfile), each value carrying a comment that names where it came from, and what
could not be taken listed with the reason, never dropped in silence.

``read_source`` reads the source by its kind, told by its content (``sniff``: ``reqfile``, ``condafile``,
``pyproject``, ``setuppy``, ``dockerfile``) into one ``Read``;
``adopt`` turns it into profile fields (``frameworks``: the framework lines, their release and PyTorch build;
``pythons``: the Python; ``compose``: the rest) and commented YAML (``emit``). The CLI runs `envgen check` on it.
"""

from __future__ import annotations

from pathlib import Path

from envgen.errors import InputError
from envgen.suggest.adopt.compose import Adopted, AdoptOptions, adopt
from envgen.suggest.adopt.model import Read

__all__ = ["AdoptOptions", "Adopted", "adopt", "read_source"]


def read_source(path: Path, group: str | None = None) -> Read:
    """``path`` read as what its content says it is (``sniff.kind_of``): a Dockerfile of any name, a setup.py, a
    pyproject.toml, an environment.yml, else a requirements file."""
    if not path.is_file():
        raise InputError(f"option --from = {str(path)!r}: no such file",
                         fix="give a requirements.txt, an environment.yml, a pyproject.toml, a setup.py, a "
                             "Dockerfile, an image on the engine or a Python environment")
    from envgen.suggest.adopt.sniff import kind_of

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read it ({getattr(exc, 'strerror', None) or exc})",
                         fix="give a text file: a requirements.txt, an environment.yml, a pyproject.toml, a "
                             "setup.py or a Dockerfile") from None
    kind = kind_of(path, text)
    if group is not None and kind not in ("pyproject", "setup.py"):
        raise InputError(f"option --group = {group!r}: groups are a pyproject.toml's or a setup.py's extras "
                         f"({path} reads as a {kind} file)", fix="leave --group out")
    return _READERS[kind](path, group)


def _dockerfile(path: Path, group: str | None) -> Read:
    from envgen.suggest.adopt.dockerfile import read_dockerfile

    return read_dockerfile(path)


def _pyproject(path: Path, group: str | None) -> Read:
    from envgen.suggest.adopt.pyproject import read_pyproject

    return read_pyproject(path, group)


def _setup_py(path: Path, group: str | None) -> Read:
    from envgen.suggest.adopt.setuppy import read_setup_py

    return read_setup_py(path, group)


def _environment(path: Path, group: str | None) -> Read:
    from envgen.suggest.adopt.condafile import read_environment

    return read_environment(path)


def _requirements(path: Path, group: str | None) -> Read:
    from envgen.suggest.adopt.reqfile import read_requirements

    return read_requirements(path)


_READERS = {"dockerfile": _dockerfile, "pyproject": _pyproject, "setup.py": _setup_py, "environment": _environment,
            "requirements": _requirements}
