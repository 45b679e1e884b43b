"""The Jinja2 environment for envgen's templates: strict, no autoescape, stable whitespace."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import jinja2

from envgen.errors import RenderError
from envgen.mirrors import pytorch_shell
from envgen.paths import templates_dir

ARG_LINE = " \\\n        "  # a Dockerfile command's arguments, continued one a line


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


def words(items: Sequence[str], sep: str | None = None) -> str:
    """Arguments after a command: each led by a blank, or (more than four, ``sep`` unset) one a line."""
    if not items:
        return ""
    sep = sep or (ARG_LINE if len(items) > 4 else " ")
    return sep + sep.join(items)


def env_instruction(pairs: Iterable[tuple[str, str]]) -> str:
    """The profile's ``env:`` as one ENV instruction, a line per variable, each ending in a newline."""
    lines = [f'{key}="{value}"' for key, value in pairs]
    return "".join(("ENV " if i == 0 else "    ") + line + (" \\\n" if i < len(lines) - 1 else "\n")
                   for i, line in enumerate(lines))


def label_instruction(pairs: Iterable[tuple[str, str]]) -> str:
    """One LABEL instruction, a line per label (values escaped for a double-quoted word); no trailing newline."""
    lines = [f'{key}="{dockerfile_quote(value)}"' for key, value in pairs]
    return " \\\n".join(("LABEL " if i == 0 else "      ") + line for i, line in enumerate(lines))


def bytecode_cache(env: Mapping[str, str] | None = None) -> jinja2.BytecodeCache | None:
    """Jinja's compiled templates kept beside the KB cache (``ENVGEN_CACHE_DIR``; none with ``ENVGEN_NO_CACHE``), so
    a render does not compile the templates again (a third of `envgen render`'s time): Jinja keys each entry by
    the template's name and source checksum, so an edited template is compiled anew."""
    from envgen.cache import cache_dir

    directory = cache_dir(os.environ if env is None else env)
    if directory is None:
        return None
    try:
        (directory / "jinja").mkdir(parents=True, exist_ok=True)
    except OSError:  # a read-only home: compile every time
        return None
    return jinja2.FileSystemBytecodeCache(str(directory / "jinja"))


def make_environment(directory: Path | None = None, cache: jinja2.BytecodeCache | None = None) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(directory or templates_dir())),
        bytecode_cache=cache,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["dq"] = dockerfile_quote
    env.filters["shell_dq"] = shell_dq
    env.filters["words"] = words
    env.filters["env_instruction"] = env_instruction
    env.filters["label_instruction"] = label_instruction
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
