"""The `envgen` command line: a thin layer over the library (the Typer app: ``envgen.cli.commands``).

``main`` runs a plain, well-formed `envgen check` without starting Typer (``envgen.cli.check.fast``); every
other command line, and any check line the fast path is not sure of, goes to the Typer app. Nothing here imports
Typer at import time; ``app``, ``command`` and ``handles_errors`` are served from ``envgen.cli.commands`` on first use.
"""

from __future__ import annotations

import os
import sys
from typing import Any


def main() -> None:
    # envgen runs no pydantic plugins; without this, the first model build scans every installed distribution's
    # entry points (importlib.metadata, ~25 ms of a 0.3 s `envgen check`)
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    argv = sys.argv[1:]
    if argv[:1] == ["check"]:
        from envgen.cli.check import fast

        code = fast(argv[1:])
        if code is not None:
            sys.exit(code)
    from envgen.cli.commands import command

    command()(prog_name="envgen")


def __getattr__(name: str) -> Any:
    if name in ("app", "command", "handles_errors"):
        from envgen.cli import commands as module

        return getattr(module, name)
    raise AttributeError(f"module 'envgen.cli' has no attribute {name!r}")
