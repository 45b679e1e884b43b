"""YAML loading that remembers where each key stands, so errors can name the line.

Duplicate keys are errors (PyYAML silently keeps the last one).

A profile may come from anywhere (a colleague, a repository, a CI variable), so the work of reading
one is bounded before anything is built from it: the file's size, the nesting depth (checked on
the parser's event stream, which does not recurse), the number of aliases, and the number of
values the document holds once every alias is expanded. Each limit answers with one line naming
the file, the line and the limit. The limits are named in README ("Profile limits").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from envgen.errors import InputError, ProfileError, shown

KeyPath = tuple[object, ...]

# The largest built-in profile is about 2 KiB, 3 levels deep and holds at most 61 values; these
# limits leave a wide margin for real profiles and refuse an alias bomb or a nesting bomb at once.
MAX_FILE_BYTES = 256 * 1024
MAX_DEPTH = 32
MAX_ALIASES = 100
MAX_VALUES = 20_000  # values after alias expansion (every mapping, list and scalar counts once)


@dataclass
class LocatedDoc:
    path: Path
    data: Any
    lines: dict[KeyPath, int] = field(default_factory=dict)

    def line_of(self, loc: KeyPath) -> int | None:
        """Line of the deepest key on ``loc`` that the file has (1-based)."""
        for end in range(len(loc), -1, -1):
            if loc[:end] in self.lines:
                return self.lines[loc[:end]]
        return None


# Plain YAML only: mappings, sequences, strings, numbers, booleans, null. Anything else (python/*
# tags, custom !tags, binary, timestamps, merge keys) is refused with its line.
_ALLOWED_TAGS = frozenset(f"tag:yaml.org,2002:{t}" for t in ("map", "seq", "str", "int", "float", "bool", "null"))

# libyaml's parser when PyYAML has it (the wheels do): the same events and nodes, with the same marks, in C;
# `check` reads the profile on every edit and the pure-Python parser was a third of its own run time.
_PARSER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class _Walk:
    path: Path
    lines: dict[KeyPath, int]
    scalars: yaml.SafeLoader
    active: set[int] = field(default_factory=set)  # nodes being built: an alias back to one is a cycle
    values: int = 0  # values built so far, alias expansions included

    def error(self, node: yaml.Node, message: str, fix: str) -> ProfileError:
        return ProfileError(f"{self.path}:{node.start_mark.line + 1}: {message}", fix=fix)


def _construct(node: yaml.Node, where: KeyPath, walk: _Walk) -> Any:
    if node.tag == "tag:yaml.org,2002:merge":
        raise walk.error(node, "YAML merge keys (<<) are not supported", "repeat the keys, or use `extends:`")
    if node.tag not in _ALLOWED_TAGS:
        raise walk.error(node, f"YAML tag {shown(node.tag)} is not allowed in a profile",
                         "remove the tag: profiles hold plain mappings, lists, strings and numbers")
    if id(node) in walk.active:
        raise walk.error(node, "a YAML alias refers to itself", "write the value out")
    walk.values += 1
    if walk.values > MAX_VALUES:
        # An alias points back at its anchor's lines: name the top-level key being built instead.
        line = walk.lines.get(where[:1], node.start_mark.line + 1)
        key = f" (in '{where[0]}')" if where else ""
        raise ProfileError(f"{walk.path}:{line}: the profile expands to more than {MAX_VALUES} values{key}: YAML "
                           "aliases repeat what they point at", fix="write the values out; a profile needs far fewer")
    walk.active.add(id(node))
    try:
        return _build(node, where, walk)
    finally:
        walk.active.discard(id(node))


def _build(node: yaml.Node, where: KeyPath, walk: _Walk) -> Any:
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = _construct(key_node, where, walk)
            if not isinstance(key, str):
                raise walk.error(key_node, f"key {shown(key)} must be a string", "quote the key")
            if key in out:
                raise walk.error(key_node, f"duplicate key {'.'.join(map(str, where + (key,)))}",
                                 "keep one of the two entries")
            walk.lines[where + (key,)] = key_node.start_mark.line + 1
            out[key] = _construct(value_node, where + (key,), walk)
        return out
    if isinstance(node, yaml.SequenceNode):
        items = []
        for index, item in enumerate(node.value):
            walk.lines[where + (index,)] = item.start_mark.line + 1
            items.append(_construct(item, where + (index,), walk))
        return items
    # Scalars: resolve with the safe loader's rules (ints, floats, bools, strings, null).
    try:
        return walk.scalars.construct_object(node, deep=True)
    except (yaml.YAMLError, ValueError, OverflowError) as exc:
        raise walk.error(node, f"cannot read the value {shown(node.value)}: {shown(str(exc), 120)}",
                         "quote it as a string") from None


def _read_bounded(path: Path) -> str:
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ProfileError(f"{path}: cannot read: {exc.strerror}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ProfileError(f"{path}:1: the file is larger than {MAX_FILE_BYTES // 1024} KiB, the limit for a profile",
                           fix="a profile is a few KiB; split it with `extends:` or remove the bulk")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProfileError(f"{path}: not UTF-8 text (byte {exc.start})", fix="save the profile as UTF-8") from None


def _line(event: yaml.Event) -> int:
    return event.start_mark.line + 1 if event.start_mark is not None else 1


def _flow_depth(text: str, path: Path, error: type[InputError]) -> None:
    """Refuse flow collections (``[``, ``{``) nested deeper than MAX_DEPTH with a linear scan of the text.

    PyYAML's scanner reads a run of nested ``[[[[…`` to its end before the parser emits the first event,
    checking every pending simple key at each step (quadratic: 5000 levels take a second, 200,000 take
    hours), so this bound must come before it. Quotes count only where YAML starts a quoted scalar (at the
    start of a token), comments are skipped."""
    depth, line, quote, previous = 0, 1, "", "\n"
    index, size = 0, len(text)
    while index < size:
        char = text[index]
        if char == "\n":
            line += 1
        if quote:
            if char == "\\" and quote == '"':
                index += 1
            elif char == quote:
                quote = ""
        elif char in "'\"" and previous in " \t\n[{,:-?":
            quote = char
        elif char == "#" and previous in " \t\n":
            end = text.find("\n", index)
            index = size if end < 0 else end
            continue
        elif char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise error(f"{path}:{line}: nested deeper than {MAX_DEPTH} levels, the limit for a profile",
                            fix="flatten the value; a profile needs a few levels")
        elif char in "]}":
            depth = max(0, depth - 1)
        previous = char
        index += 1


def check_structure(text: str, path: Path, error: type[InputError] = ProfileError) -> None:
    """Refuse a document nested deeper than MAX_DEPTH or holding more than MAX_ALIASES aliases: a linear scan
    for flow nesting, then the parser's events (no recursion, nothing built) for block nesting and aliases.
    YAML syntax errors are left to the composer."""
    _flow_depth(text, path, error)
    depth = aliases = 0
    try:
        for event in yaml.parse(text, Loader=_PARSER):
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    raise error(f"{path}:{_line(event)}: nested deeper than {MAX_DEPTH} levels, "
                                "the limit for a profile", fix="flatten the value; a profile needs a few levels")
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                depth -= 1
            elif isinstance(event, yaml.AliasEvent):
                aliases += 1
                if aliases > MAX_ALIASES:
                    raise error(f"{path}:{_line(event)}: more than {MAX_ALIASES} YAML aliases, "
                                "the limit for a profile", fix="write the values out")
    except yaml.YAMLError:
        return


def load_yaml(path: Path) -> LocatedDoc:
    text = _read_bounded(path)
    check_structure(text, path)
    try:
        node = yaml.compose(text, Loader=_PARSER)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        last = max(len(text.splitlines()), 1)  # a mark past the end (an unclosed bracket) is the last line's
        line = f":{min(mark.line + 1, last)}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ProfileError(f"{path}{line}: invalid YAML: {problem}", fix="correct the YAML syntax") from None
    if node is None:
        raise ProfileError(f"{path}: the file is empty", fix="write a profile mapping (name:, base:, ...)")
    lines: dict[KeyPath, int] = {(): 1}
    data = _construct(node, (), _Walk(path, lines, yaml.SafeLoader("")))
    if not isinstance(data, dict):
        raise ProfileError(f"{path}:1: a profile must be a mapping of keys, not {type(data).__name__}")
    return LocatedDoc(path=path, data=data, lines=lines)
