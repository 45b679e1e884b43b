"""An environment.yml read as conda reads it: ``channels``, ``dependencies`` (conda specs, each with its line) and
the ``pip:`` section (requirements lines, read as a requirements.txt: ``envgen.suggest.adopt.reqfile``). A
``python`` spec gives the Python; the spec is kept as written (``numpy=1.26.4``, ``numpy>=1.24``, ``numpy``) for
``compose`` to place."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from envgen.errors import InputError
from envgen.profile.yamlsrc import load_yaml
from envgen.suggest.adopt.installs import conda_spec
from envgen.suggest.adopt.model import Item, Origin, Read, Skip
from envgen.suggest.adopt.reqfile import take_line


def read_environment(path: Path) -> Read:
    doc = load_yaml(path)
    if not isinstance(doc.data, dict) or not isinstance(doc.data.get("dependencies", []), list):
        raise InputError(f"{path}: not an environment.yml (a mapping with a dependencies: list)",
                         fix="give a conda environment file, such as the one `conda env export --from-history` "
                             "writes")
    read = Read(kind="environment")
    shown = str(path)

    def origin(*loc: object) -> Origin:
        return Origin(shown, doc.line_of(loc))

    for index, channel in enumerate(doc.data.get("channels") or []):
        read.channels.append(Item(str(channel), origin("channels", index)))
    for index, dep in enumerate(doc.data.get("dependencies") or []):
        _dependency(dep, origin, index, read, path)
    for key in sorted(set(doc.data) - {"name", "channels", "dependencies", "prefix"}):
        read.skipped.append(Skip(f"{key}:", origin(key), _KEYS.get(key, "not a key envgen reads")))
    return read


_KEYS = {"variables": "set them under env: in the profile (NAME: value)"}


def _dependency(dep: Any, origin: Any, index: int, read: Read, path: Path) -> None:
    if isinstance(dep, dict) and set(dep) == {"pip"} and isinstance(dep["pip"], list):
        for sub, line in enumerate(dep["pip"]):
            take_line(str(line).strip(), origin("dependencies", index, "pip", sub), read, path)
        return
    if not isinstance(dep, str | int | float):
        read.skipped.append(Skip(str(dep), origin("dependencies", index), "not a conda spec"))
        return
    conda_spec(str(dep).strip(), origin("dependencies", index), read)
