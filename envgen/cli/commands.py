"""The `envgen` Typer app: the commands of ``cmd_*`` registered in help's order, the root options, and the
metavariables help shows.

Each command parses options, calls one library function and prints its result. Library errors
(`envgen.errors.EnvgenError`) become one line on stderr and the error's exit code. Imports of
the heavy layers happen inside the commands, so `envgen --help` stays instant.
"""

from __future__ import annotations

from typing import Any

import typer

from envgen.cli import cmd_build, cmd_profiles, cmd_registry, cmd_render
from envgen.cli.common import handles_errors

__all__ = ["app", "command", "handles_errors"]

app = typer.Typer(
    name="envgen",
    help="Reproducible, validated GPU deep-learning environments in containers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # plain click help: Typer's rich help costs ~70 ms of imports (rich, markdown-it) on every `--help`
    rich_markup_mode=None,
)
for _module in (cmd_profiles, cmd_render, cmd_build, cmd_registry):
    _module.register(app)


# What help shows for a value (Typer's plain help would show <str>, <list[str]>, <path>): by the parameter's name,
# else by its type.
_METAVARS = {"profile": "PROFILE", "profiles": "PROFILE", "gpu": "GPU", "compute_capability": "X.Y",
             "driver": "VERSION", "out": "DIR", "wheelhouse": "DIR", "workdir": "DIR", "builder": "buildkit|classic",
             "fmt": "FORMAT", "gpus": "N", "python": "X.Y", "tier": "TIER", "bundle": "FILE", "image": "IMAGE",
             "conda_channel": "CHANNEL", "gpu_route": "runtime|cdi", "command": "COMMAND"}
_TYPE_METAVARS = {"str": "TEXT", "Path": "PATH", "int": "N", "float": "NUMBER"}


def _version(value: bool) -> None:
    if value:
        from envgen import __version__

        typer.echo(f"envgen {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print envgen's version and exit.")) -> None:
    """Reproducible, validated GPU deep-learning environments in containers."""


def command() -> Any:
    """The click command behind ``app``, every value's metavariable named (``--gpu GPU``, ``PROFILE``)."""
    root = typer.main.get_command(app)
    for sub in [root, *getattr(root, "commands", {}).values()]:
        for param in sub.params:
            if param.metavar is None and not getattr(param, "is_flag", False):
                bare = param.bare_type() if callable(getattr(param, "bare_type", None)) else ""
                param.metavar = _METAVARS.get(param.name or "") or _TYPE_METAVARS.get(str(bare), "VALUE")
            if getattr(param, "param_type_name", "") == "argument":  # the name says it: no "<str>" after it
                param.display_type_rich = lambda ctx: None
    return root
