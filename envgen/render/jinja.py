"""The Jinja2 environment for envgen's templates: strict, no autoescape, stable whitespace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jinja2

from envgen.errors import RenderError
from envgen.mirrors import apt_mirror_shell, pytorch_shell
from envgen.paths import templates_dir


def dockerfile_quote(value: object) -> str:
    """Escape a value for a double-quoted Dockerfile word (LABEL/ENV): backslash, quote, dollar."""
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")


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
    env.filters["tojson"] = lambda value: json.dumps(value, sort_keys=True)
    env.filters["torch_route"] = pytorch_shell  # download.pytorch.org through the build arg PYTORCH_WHEELS
    env.globals["apt_mirror_shell"] = apt_mirror_shell  # one substitution for the Dockerfile and `envgen lock`
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
