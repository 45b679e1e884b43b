"""The adopted profile as YAML with a comment per value naming where it came from. Scalars are written as JSON
strings (valid YAML, quoted, so "3.10" stays a string); the result is read back and compared with the data."""

from __future__ import annotations

import json
from typing import Any

import yaml

Path = tuple[object, ...]


def _scalar(value: Any) -> str:
    return json.dumps(value)


def _comment(comments: dict[Path, str], path: Path) -> str:
    return f"  # {comments[path]}" if path in comments else ""


def _lines(value: Any, path: Path, indent: str, comments: dict[Path, str]) -> list[str]:
    out: list[str] = []
    if isinstance(value, dict):
        for key, sub in value.items():
            here = (*path, key)
            if isinstance(sub, dict | list) and sub:
                out.append(f"{indent}{key}:{_comment(comments, here)}")
                out += _lines(sub, here, indent + "  ", comments)
            else:
                empty = "[]" if isinstance(sub, list) else "{}" if isinstance(sub, dict) else _scalar(sub)
                out.append(f"{indent}{key}: {empty}{_comment(comments, here)}")
    else:
        for index, sub in enumerate(value):
            out.append(f"{indent}- {_scalar(sub)}{_comment(comments, (*path, index))}")
    return out


def emit(data: dict[str, Any], comments: dict[Path, str], head: list[str], tail: list[str]) -> str:
    """``head`` and ``tail`` are comment lines (without ``#``) before and after the mapping."""
    body = _lines(data, (), "", comments)
    text = "".join(f"# {line}\n" if line else "#\n" for line in head) + "\n".join(body) + "\n"
    text += "".join(f"# {line}\n" for line in tail)
    if yaml.safe_load(text) != data:  # pragma: no cover - the emitter's own guarantee
        raise AssertionError("the adopted profile's YAML does not read back as its data")
    return text
