"""A pyproject.toml read for what the project installs: ``[project] dependencies``, ``requires-python``, and with
``--group NAME`` one optional group (``[project.optional-dependencies]``, or a PEP 735 ``[dependency-groups]``
group). Each requirement is judged by the profile's own rules, as a requirements.txt line is."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from envgen.errors import InputError
from envgen.suggest.adopt.model import Item, Origin, Read, Skip
from envgen.suggest.adopt.reqfile import take_line

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


def _line_of(lines: list[str], text: str, after: int = 0) -> int | None:
    """The first line (1-based, from ``after``) quoting ``text``: tomllib keeps no positions."""
    for number in range(after, len(lines)):
        if f'"{text}"' in lines[number] or f"'{text}'" in lines[number]:
            return number + 1
    return None


def _group(doc: dict[str, Any], group: str) -> tuple[list[Any], str] | None:
    optional = doc.get("project", {}).get("optional-dependencies", {})
    if group in optional:
        return optional[group], "[project.optional-dependencies]"
    groups = doc.get("dependency-groups", {})
    if group in groups:
        return groups[group], "[dependency-groups]"
    return None


def read_pyproject(path: Path, group: str | None = None) -> Read:
    try:
        text = path.read_text(encoding="utf-8")
        doc = tomllib.loads(text)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"{path}: cannot read it as TOML ({exc})", fix="give a valid pyproject.toml") from None
    project = doc.get("project")
    if not isinstance(project, dict):
        raise InputError(f"{path}: no [project] table (PEP 621)",
                         fix="give a pyproject.toml with [project] dependencies, or export the requirements "
                             "(for example `uv export --no-hashes > requirements.txt`) and adopt that")
    lines, read, shown = text.splitlines(), Read(kind="pyproject"), str(path)
    if isinstance(project.get("requires-python"), str):
        spec = project["requires-python"]
        read.python = Item(spec, Origin(shown, _line_of(lines, spec)))
    entries: list[tuple[Any, str]] = [(d, "dependencies") for d in project.get("dependencies", [])]
    if group is not None:
        found = _group(doc, group)
        if found is None:
            known = sorted({*project.get("optional-dependencies", {}), *doc.get("dependency-groups", {})})
            raise InputError(f"option --group = {group!r}: {path} has no such group",
                             fix=f"use one of: {', '.join(known)}" if known else "leave --group out")
        entries += [(d, group) for d in found[0]]
    for dep, where in entries:
        if not isinstance(dep, str):  # a PEP 735 {include-group = "..."} table
            read.skipped.append(Skip(str(dep), Origin(shown), f"an entry of {where} that is not a requirement"))
            continue
        take_line(dep.strip(), Origin(shown, _line_of(lines, dep)), read, path)
    return read
