"""`envgen init --from SOURCE`: a profile made from what a user already has (a requirements.txt, an environment.yml,
a pyproject.toml), each value carrying a comment that names where it came from, and what could not be taken listed
with the reason, never dropped in silence.

``read_source`` reads the source by its kind (``reqfile``, ``condafile``, ``pyproject``) into one ``Read``;
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
    """``path`` read by its kind: ``Dockerfile*``/``*.dockerfile`` a Dockerfile, ``*.toml`` a pyproject.toml,
    ``*.yml``/``*.yaml`` an environment.yml, anything else a requirements file."""
    if not path.is_file():
        raise InputError(f"option --from = {str(path)!r}: no such file",
                         fix="give a requirements.txt, an environment.yml, a pyproject.toml or an image on the engine")
    if group is not None and path.suffix != ".toml":
        raise InputError(f"option --group = {group!r}: groups are a pyproject.toml's", fix="leave --group out")
    if path.name.startswith("Dockerfile") or path.suffix == ".dockerfile":
        from envgen.suggest.adopt.dockerfile import read_dockerfile

        return read_dockerfile(path)
    if path.suffix == ".toml":
        from envgen.suggest.adopt.pyproject import read_pyproject

        return read_pyproject(path, group)
    if path.suffix in (".yml", ".yaml"):
        from envgen.suggest.adopt.condafile import read_environment

        return read_environment(path)
    from envgen.suggest.adopt.reqfile import read_requirements

    return read_requirements(path)
