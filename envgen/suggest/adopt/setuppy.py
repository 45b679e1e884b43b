"""A setup.py read from its syntax tree (``ast``), never run: the ``setup(...)`` call's ``install_requires``,
``extras_require`` (one of them with ``--group NAME``) and ``python_requires``, each a literal or a name bound to one
at module level. A value computed at run time (a list comprehension over a file, a function's result) cannot be
read without running the file: it is said in one note, with the way to adopt what it reads."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from envgen.errors import InputError
from envgen.suggest.adopt.model import Item, Origin, Read, Skip
from envgen.suggest.adopt.project import note_project
from envgen.suggest.adopt.reqfile import take_line
from envgen.suggest.adopt.sniff import _callee


def _setup_call(tree: ast.Module) -> ast.Call | None:
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and _callee(n.func) == "setup"]
    return calls[-1] if calls else None


def _bindings(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level ``NAME = value`` (the last one of each name)."""
    out: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            out[node.target.id] = node.value
    return out


def _literal(node: ast.expr, bound: dict[str, ast.expr], depth: int = 0) -> Any:
    """The value of ``node`` if it is a literal, or a name (or list of names) bound to literals; raises ValueError."""
    if isinstance(node, ast.Name) and node.id in bound and depth < 8:
        return _literal(bound[node.id], bound, depth + 1)
    if isinstance(node, ast.List | ast.Tuple):
        return [_literal(e, bound, depth + 1) for e in node.elts]
    if isinstance(node, ast.Dict) and all(k is not None for k in node.keys):
        return {_literal(k, bound, depth + 1): _literal(v, bound, depth + 1)  # type: ignore[arg-type]
                for k, v in zip(node.keys, node.values, strict=True)}
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _literal(node.left, bound, depth + 1) + _literal(node.right, bound, depth + 1)
    return ast.literal_eval(node)


def _form(node: ast.expr) -> str:
    kinds = {ast.ListComp: "a list comprehension", ast.Call: "a function call", ast.Name: "a name bound at run time",
             ast.Subscript: "a subscript", ast.GeneratorExp: "a generator"}
    return next((text for kind, text in kinds.items() if isinstance(node, kind)), type(node).__name__)


def read_setup_py(path: Path, group: str | None = None) -> Read:
    try:
        text = path.read_text(encoding="utf-8")
        tree = ast.parse(text, filename=str(path))
    except (OSError, SyntaxError, ValueError) as exc:
        raise InputError(f"{path}: cannot read it as Python ({exc})",
                         fix="give a setup.py that Python parses") from None
    call = _setup_call(tree)
    if call is None:
        raise InputError(f"{path}: no setup(...) call", fix="give a setup.py, or the requirements file it reads")
    read, shown, bound = Read(kind="setup.py"), str(path), _bindings(tree)
    keywords = {k.arg: k.value for k in call.keywords if k.arg}
    name = keywords.get("name")
    note_project(read, Origin(shown, call.lineno),
                 name.value if isinstance(name, ast.Constant) and isinstance(name.value, str) else None)
    python = keywords.get("python_requires")
    if isinstance(python, ast.Constant) and isinstance(python.value, str):
        read.python = Item(python.value, Origin(shown, python.lineno))
    wanted = [("install_requires", None)] + ([("extras_require", group)] if group else [])
    for key, extra in wanted:
        node = keywords.get(key)
        if node is None:
            if extra is not None:
                raise InputError(f"option --group = {group!r}: {path} has no extras_require", fix="leave --group out")
            continue
        try:
            value = _literal(node, bound)
        except (ValueError, TypeError, SyntaxError):
            read.skipped.append(Skip(f"{key}=...", Origin(shown, node.lineno), f"{key} is {_form(node)}, computed "
                                     "when setup.py runs, and envgen reads setup.py without running it: adopt the "
                                     "file it reads (envgen init --from requirements.txt), or list the requirements"))
            continue
        _take(value, key, extra, path, shown, _node_of(node, extra, bound), read)
    return read


def _node_of(node: ast.expr, extra: str | None, bound: dict[str, ast.expr]) -> ast.expr:
    """The literal list a value's lines are read from: through a bound name, and into the extra's entry."""
    for _ in range(8):
        if isinstance(node, ast.Name) and node.id in bound:
            node = bound[node.id]
    if extra is not None and isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values, strict=True):
            if isinstance(k, ast.Constant) and k.value == extra:
                return v
    return node


def _take(value: Any, key: str, extra: str | None, path: Path, shown: str, node: ast.expr, read: Read) -> None:
    if extra is not None:
        if not isinstance(value, dict) or extra not in value:
            known = ", ".join(sorted(value)) if isinstance(value, dict) else ""
            raise InputError(f"option --group = {extra!r}: {path}'s extras_require has no such extra",
                             fix=f"use one of: {known}" if known else "leave --group out")
        value = value[extra]
    if isinstance(value, str):
        value = value.splitlines()
    if not isinstance(value, list):
        read.skipped.append(Skip(key, Origin(shown, node.lineno), "not a list of requirements"))
        return
    lines = _lines(node)
    for index, entry in enumerate(value):
        line = lines[index] if index < len(lines) else node.lineno
        if isinstance(entry, str) and entry.strip():
            take_line(entry.strip(), Origin(shown, line), read, path)


def _lines(node: ast.expr) -> list[int]:
    """The line of each element of a literal list (the list's own line where it is not one)."""
    return [e.lineno for e in node.elts] if isinstance(node, ast.List | ast.Tuple) else []
