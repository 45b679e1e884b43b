"""The `envgen` command line: a thin layer over the library (the Typer app: ``envgen.cli.commands``).

``main`` runs a plain, well-formed `envgen check`, `envgen render` or `envgen run` without starting Typer
(``envgen.cli.check.fast``, ``envgen.cli.render.fast``, ``envgen.cli.run.fast``); every other command line, and any
line a fast path is not sure of, goes to the Typer app. Nothing here imports
Typer at import time; ``app``, ``command`` and ``handles_errors`` are served from ``envgen.cli.commands`` on first use.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any


def main() -> None:
    # envgen runs no pydantic plugins; without this, the first model build scans every installed distribution's
    # entry points (importlib.metadata, ~25 ms of a 0.3 s `envgen check`)
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    # SIGTERM (a job scheduler, `timeout`, `docker stop` of a CI runner) ends envgen as Ctrl-C does: the containers
    # and files it was making are removed on the way out, and it exits with one line
    import signal

    signal.signal(signal.SIGTERM, _terminated)
    argv = sys.argv[1:]
    fast = _fast_path(argv[0]) if argv else None
    if fast is not None:
        code = fast(argv[1:])
        if code is not None:
            sys.exit(code)
    from envgen.cli.commands import command

    command()(prog_name="envgen")


def _terminated(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def _fast_path(name: str) -> Callable[[list[str]], int | None] | None:
    """The commands run on every edit have a path that skips Typer for a plain, well-formed command line."""
    if name == "check":
        from envgen.cli import check

        return check.fast
    if name == "render":
        from envgen.cli import render

        return render.fast
    if name == "run":
        from envgen.cli import run

        return run.fast
    return None


def __getattr__(name: str) -> Any:
    if name in ("app", "command", "handles_errors"):
        from envgen.cli import commands as module

        return getattr(module, name)
    raise AttributeError(f"module 'envgen.cli' has no attribute {name!r}")
