"""A requirements.txt read as pip reads it: comments (a ``#`` at the start or after a space), continuation lines,
``-r`` includes followed (relative to the including file), ``--index-url`` / ``--extra-index-url`` /
``--trusted-host`` kept for the profile's mirrors, ``--hash`` options removed (and counted: `envgen lock` makes the
lock), and each requirement judged by the profile's own rules (``envgen.profile.requirements.parse_line``): what
they refuse (a ``git+https`` URL, a local path, an editable install) is listed with their reason, not loosened."""

from __future__ import annotations

import re
from pathlib import Path

from envgen.errors import InputError
from envgen.profile.requirements import RefusedLine, parse_line
from envgen.suggest.adopt.model import Item, Origin, Read, Skip

_COMMENT = re.compile(r"(^|\s+)#.*$")
_INCLUDE = ("-r", "--requirement")
_TAKEN = {"-i": "index_url", "--index-url": "index_url", "--extra-index-url": "extra_index_urls",
          "--trusted-host": "trusted_hosts"}
_MAX_DEPTH = 16


def logical_lines(text: str) -> list[tuple[int, str]]:
    """(first line number, line) with comments removed and backslash continuations joined, blank lines left out."""
    out: list[tuple[int, str]] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), 1):
        line = _COMMENT.sub("", raw)
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        whole = (pending + line).strip()
        pending = ""
        if whole:
            out.append((start, whole))
    if pending.strip():
        out.append((start, pending.strip()))
    return out


def _split_option(line: str) -> tuple[str, str]:
    """("--index-url", "URL") from "--index-url URL" or "--index-url=URL"; a flag gives ("--pre", "")."""
    head, _, rest = line.partition(" ")
    name, eq, value = head.partition("=")
    return name, (value if eq else rest.strip())


def _requirement(line: str, origin: Origin, read: Read) -> None:
    """A requirement line: its own options (``--hash=...``) removed, then judged by the profile's rules."""
    text, hashed = line, False
    if " --" in f" {line}" and not line.startswith("-"):
        parts = re.split(r"\s+(?=--)", line)
        text = parts[0].strip()
        opts = [p.split("=", 1)[0].split()[0] for p in parts[1:]]
        hashed = any(o == "--hash" for o in opts)
        other = sorted({o for o in opts if o != "--hash"})
        if other:
            read.notes.append(f"{origin}: the options {', '.join(other)} of {text!r} are not kept (envgen sets the "
                              "install options itself)")
    try:
        parse_line(text)
    except RefusedLine as exc:
        read.skipped.append(Skip(text, origin, str(exc)))
        return
    read.pip.append(Item(text, origin))
    if hashed:
        read.notes.append(f"{origin}: the --hash of {text!r} is not copied: `envgen lock` pins every archive by "
                          "sha256 (run it on the profile)")


def _option(line: str, origin: Origin, read: Read, path: Path, depth: int) -> None:
    name, value = _split_option(line)
    if name in _INCLUDE:
        _read_file(path.parent / value, read, depth + 1, shown=_shown(origin.file, value))
        return
    field = _TAKEN.get(name)
    if field is None:
        try:
            parse_line(line)
        except RefusedLine as exc:
            read.skipped.append(Skip(line, origin, str(exc)))
        return
    item = Item(value, origin)
    if field == "index_url":
        read.index_url = item
    else:
        getattr(read, field).append(item)


def _shown(including: str, value: str) -> str:
    parent = Path(including).parent
    return str(parent / value) if str(parent) != "." else value


def _read_file(path: Path, read: Read, depth: int, shown: str) -> None:
    if depth > _MAX_DEPTH:
        raise InputError(f"{shown}: -r includes nest deeper than {_MAX_DEPTH} files (a cycle?)",
                         fix="remove the -r line that includes a file already included")
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{shown}: cannot read it ({exc.strerror or exc})",
                         fix="give the path of an existing requirements file") from None
    for number, line in logical_lines(text):
        take_line(line, Origin(shown, number), read, path, depth)


def take_line(line: str, origin: Origin, read: Read, path: Path, depth: int = 0) -> None:
    """One logical requirements line (an option or a requirement) from the file at ``path`` (``-r`` is relative to
    it); an environment.yml's ``pip:`` entries are read with it too."""
    if line.startswith("-"):
        _option(line, origin, read, path, depth)
    else:
        _requirement(line, origin, read)


def read_requirements(path: Path, read: Read | None = None) -> Read:
    """The requirements file at ``path`` (and every file it includes), read into ``read`` (a new one by default)."""
    out = read if read is not None else Read(kind="requirements")
    _read_file(path, out, 0, shown=str(path))
    return out
