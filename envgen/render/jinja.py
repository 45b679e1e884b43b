"""The Jinja2 environment for envgen's templates: strict, no autoescape, stable whitespace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jinja2

from envgen.errors import RenderError
from envgen.mirrors import pytorch_shell
from envgen.paths import templates_dir


def dockerfile_quote(value: object) -> str:
    """Escape a value for a double-quoted Dockerfile word (LABEL/ENV): backslash, quote, dollar."""
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")


def shell_dq(value: object) -> str:
    """A value as one double-quoted shell word: backslash, quote, dollar and backquote escaped (a requirement
    with a marker, ``x; python_version < "3.9"``, stays one argument)."""
    text = str(value)
    for char in ("\\", '"', "$", "`"):
        text = text.replace(char, "\\" + char)
    return f'"{text}"'


def make_environment(directory: Path | None = None) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(directory or templates_dir())),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["dq"] = dockerfile_quote
    env.filters["shell_dq"] = shell_dq
    env.filters["tojson"] = lambda value: json.dumps(value, sort_keys=True)
    env.filters["torch_route"] = pytorch_shell  # download.pytorch.org through the build arg PYTORCH_WHEELS
    return env


def render_template(env: jinja2.Environment, name: str, context: dict[str, Any]) -> str:
    """Render one template; every Jinja failure becomes a RenderError naming the template."""
    try:
        return env.get_template(name).render(context)
    except jinja2.UndefinedError as exc:
        raise RenderError(f"template {name}: undefined value ({exc.message})") from exc
    except jinja2.TemplateNotFound as exc:
        raise RenderError(f"template {exc.name} not found in {env.loader}") from exc
    except jinja2.TemplateError as exc:
        raise RenderError(f"template {name}: {exc}") from exc
