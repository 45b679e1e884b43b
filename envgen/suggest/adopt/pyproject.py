"""A pyproject.toml read for what the project installs: ``[project] dependencies``, ``requires-python``, and with
``--group NAME`` one group: a PEP 735 ``[dependency-groups]`` group (its ``include-group`` entries followed), else an
extra of ``[project.optional-dependencies]`` (said so); where both have the name, the group is taken and the extra
named as left out. Each requirement is judged by the profile's own rules, as a requirements.txt line is, and its
comment cites the line inside its own table. The project itself is noted: envgen does not install it."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from envgen.errors import InputError
from envgen.suggest.adopt.model import Item, Origin, Read, Skip
from envgen.suggest.adopt.project import note_project
from envgen.suggest.adopt.reqfile import take_line

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib


def _line_of(lines: list[str], text: str, after: int = 0) -> int | None:
    """The first line (1-based, from line ``after``, 0-based) quoting ``text``: tomllib keeps no positions."""
    for number in range(after, len(lines)):
        if f'"{text}"' in lines[number] or f"'{text}'" in lines[number]:
            return number + 1
    return None


def _start(lines: list[str], table: str, key: str) -> int:
    """The 0-based line where ``key`` of ``table`` begins (``[table]`` then ``key =``, or ``table.key =``, or a
    dotted ``optional-dependencies.key =`` under ``[project]``), else 0."""
    short = table.rsplit(".", 1)[-1]
    in_table = False
    for number, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("["):
            in_table = stripped in (f"[{table}]", "[project]" if table.startswith("project.") else "")
            continue
        key_re = rf"^(?:{re.escape(short)}\.)?[\"']?{re.escape(key)}[\"']?\s*="
        if in_table and re.match(key_re, stripped) or re.match(rf"^{re.escape(table)}\.{re.escape(key)}\s*=",
                                                               stripped):
            return number
    return 0


def _group_entries(doc: dict[str, Any], group: str, path: Path, seen: tuple[str, ...] = ()) -> list[tuple[Any, str]]:
    """(entry, group it is listed in) of a PEP 735 group, ``{include-group = "..."}`` followed."""
    groups = doc.get("dependency-groups", {})
    if group in seen:
        raise InputError(f"{path}: [dependency-groups] {group!r} includes itself ({' -> '.join((*seen, group))})",
                         fix="remove the include-group entry that closes the cycle")
    out: list[tuple[Any, str]] = []
    for entry in groups.get(group, []):
        if isinstance(entry, dict) and set(entry) == {"include-group"} and entry["include-group"] in groups:
            out += _group_entries(doc, entry["include-group"], path, (*seen, group))
        else:
            out.append((entry, group))
    return out


def _selected(doc: dict[str, Any], group: str, path: Path, read: Read) -> list[tuple[Any, str, str]]:
    """(entry, table, key) of ``--group NAME``: the PEP 735 group, else the extra of that name."""
    optional = doc.get("project", {}).get("optional-dependencies", {})
    groups = doc.get("dependency-groups", {})
    if group in groups:
        if group in optional:
            read.notes.append(f"--group {group}: [dependency-groups] {group} taken; the extra of the same name "
                              f"([project.optional-dependencies] {group}) is not (pip and uv install it with "
                              f"'.[{group}]', a group with --group)")
        return [(e, "dependency-groups", g) for e, g in _group_entries(doc, group, path)]
    if group in optional:
        read.notes.append(f"--group {group}: no [dependency-groups] {group}; the extra [project.optional-dependencies] "
                          f"{group} is taken")
        return [(e, "project.optional-dependencies", group) for e in optional[group]]
    known = sorted({*optional, *groups})
    raise InputError(f"option --group = {group!r}: {path} has no such group",
                     fix=f"use one of: {', '.join(known)}" if known else "leave --group out")


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
    note_project(read, Origin(shown, _start(lines, "project", "name") + 1 or None), project.get("name"))
    if isinstance(project.get("requires-python"), str):
        spec = project["requires-python"]
        read.python = Item(spec, Origin(shown, _line_of(lines, spec)))
    if "dependencies" in (project.get("dynamic") or []):
        files = doc.get("tool", {}).get("setuptools", {}).get("dynamic", {}).get("dependencies", {}).get("file")
        read.skipped.append(Skip("dynamic = [\"dependencies\"]", Origin(shown, _start(lines, "project", "dynamic") + 1),
                                 "the dependencies are filled in by the build backend: adopt the file they come from"
                                 + (f" (envgen init --from {files[0] if isinstance(files, list) else files})"
                                    if files else "")))
    entries: list[tuple[Any, str, str]] = [(d, "project", "dependencies") for d in project.get("dependencies", [])]
    if group is not None:
        entries += _selected(doc, group, path, read)
    for dep, table, key in entries:
        start = _start(lines, table, key)
        if not isinstance(dep, str):
            read.skipped.append(Skip(str(dep), Origin(shown, start + 1), f"an entry of [{table}] {key} that is not a "
                                     "requirement"))
            continue
        take_line(dep.strip(), Origin(shown, _line_of(lines, dep, start)), read, path)
    return read
