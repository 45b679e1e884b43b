"""YAML loading that remembers where each key stands, so errors can name the line.

Duplicate keys are errors (PyYAML silently keeps the last one).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from envgen.errors import ProfileError

KeyPath = tuple[object, ...]


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


def _construct(node: yaml.Node, where: KeyPath, lines: dict[KeyPath, int], path: Path,
               scalars: yaml.SafeLoader) -> Any:
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = _construct(key_node, where, lines, path, scalars)
            if not isinstance(key, str):
                raise ProfileError(
                    f"{path}:{key_node.start_mark.line + 1}: key {key!r} must be a string",
                    fix="quote the key",
                )
            if key in out:
                raise ProfileError(
                    f"{path}:{key_node.start_mark.line + 1}: duplicate key {'.'.join(map(str, where + (key,)))}",
                    fix="keep one of the two entries",
                )
            lines[where + (key,)] = key_node.start_mark.line + 1
            out[key] = _construct(value_node, where + (key,), lines, path, scalars)
        return out
    if isinstance(node, yaml.SequenceNode):
        items = []
        for index, item in enumerate(node.value):
            lines[where + (index,)] = item.start_mark.line + 1
            items.append(_construct(item, where + (index,), lines, path, scalars))
        return items
    # Scalars: resolve with the safe loader's rules (ints, bools, strings, null).
    return scalars.construct_object(node, deep=True)


def load_yaml(path: Path) -> LocatedDoc:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ProfileError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ProfileError(f"{path}{line}: invalid YAML: {problem}", fix="correct the YAML syntax") from None
    if node is None:
        raise ProfileError(f"{path}: the file is empty", fix="write a profile mapping (name:, base:, ...)")
    lines: dict[KeyPath, int] = {(): 1}
    data = _construct(node, (), lines, path, yaml.SafeLoader(""))
    if not isinstance(data, dict):
        raise ProfileError(f"{path}:1: a profile must be a mapping of keys, not {type(data).__name__}")
    return LocatedDoc(path=path, data=data, lines=lines)
