"""What kind of file a source is, read from its content where its name does not say: a Dockerfile of any name (its
first instruction is ``FROM``, or ``ARG`` lines before one), a setup.py (Python whose syntax tree calls ``setup``),
a pyproject.toml (TOML with a ``[project]`` or ``[build-system]`` table), an environment.yml (a mapping with
``dependencies:``); anything else is read as a requirements file."""

from __future__ import annotations

import re
from pathlib import Path

KINDS = ("requirements", "environment", "pyproject", "setup.py", "dockerfile")

_INSTRUCTION = re.compile(r"^\s*([A-Za-z]+)\b")
_FIRST = 64 * 1024  # enough of a file to tell its kind


def _dockerfile(head: str) -> bool:
    """Its first instruction (comments, blank lines, parser directives and ARG lines aside) is FROM."""
    for line in head.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _INSTRUCTION.match(line)
        word = m.group(1).upper() if m else ""
        if word == "ARG":
            continue
        words = line.split()
        return word == "FROM" and len(words) >= 2 and "import" not in words  # Python's from X import Y
    return False


def _setup_py(text: str) -> bool:
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return any(isinstance(n, ast.Call) and _callee(n.func) == "setup" for n in ast.walk(tree))


def _callee(func: object) -> str:
    import ast

    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


def _toml(text: str) -> bool:
    return bool(re.search(r"^\s*\[(project|build-system|dependency-groups)\]", text, re.MULTILINE))


def _yaml_env(text: str) -> bool:
    return bool(re.search(r"^dependencies\s*:", text, re.MULTILINE))


def kind_of(path: Path, text: str) -> str:
    """One of ``KINDS``: the name where it is plain (``*.toml``, ``*.yml``), else the content."""
    name = path.name.lower()
    head = text[:_FIRST]
    if _dockerfile(head) and not name.endswith(".py"):
        return "dockerfile"
    if name.endswith(".py") or name == "setup.py":
        return "setup.py" if _setup_py(text) else "requirements"
    if name.endswith(".toml") or _toml(head) and not name.endswith((".yml", ".yaml", ".txt")):
        return "pyproject"
    if name.endswith((".yml", ".yaml")) or _yaml_env(head) and not name.endswith(".txt"):
        return "environment"
    if "dockerfile" in name:
        return "dockerfile"  # read as one, so that a file with no FROM is told so
    if not name.endswith(".txt") and _setup_py(text):
        return "setup.py"
    return "requirements"
