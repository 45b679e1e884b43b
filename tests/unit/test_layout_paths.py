"""The image's paths are stated once, in envgen/layout.py: no other module of envgen/ writes them as a string (its
docstrings and comments may name them), and the Dockerfile and export templates get them from the template
context (``layout``), so that moving one is one edit."""

from __future__ import annotations

import ast
from pathlib import Path

import envgen
from envgen import layout

PACKAGE = Path(envgen.__file__).resolve().parent
TEMPLATES = PACKAGE.parent / "templates"
PATHS = (layout.SMOKE_COMMAND, layout.SMOKE_REPORT, layout.WORKSPACE, layout.ENTRYPOINT)


def _strings(tree: ast.AST) -> list[tuple[int, str]]:
    """Every string constant but docstrings, f-strings' literal parts included."""
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs]


def test_no_module_but_layout_writes_an_image_path() -> None:
    wrong = [f"{path.relative_to(PACKAGE.parent)}:{line}: {value!r}"
             for path in sorted(PACKAGE.rglob("*.py")) if path.name != "layout.py" and "probe" not in path.parts
             for line, value in _strings(ast.parse(path.read_text(encoding="utf-8")))
             if any(p in value for p in PATHS)]
    assert not wrong, "use envgen.layout's constant:\n" + "\n".join(wrong)


def test_the_templates_take_the_image_paths_from_layout() -> None:
    wrong = [f"{path.relative_to(TEMPLATES.parent)}: {p}" for folder in ("docker", "exports")
             for path in sorted((TEMPLATES / folder).rglob("*.j2")) for p in PATHS
             if p in path.read_text(encoding="utf-8")]
    assert not wrong, "write {{ layout.NAME }}:\n" + "\n".join(wrong)
