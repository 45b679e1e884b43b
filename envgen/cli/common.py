"""What every Typer command shares: the error mapping (``envgen.cli.errors``), stderr, JSON output, --gpu-route."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any, TypeVar

import typer

from envgen.cli.errors import report

F = TypeVar("F", bound=Callable[..., Any])


def err(message: str) -> None:
    typer.echo(message, err=True)


def handles_errors(func: F) -> F:
    """Map library errors to one line and an exit code; Ctrl-C to exit 130 (``envgen.cli.errors``)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (Exception, KeyboardInterrupt) as exc:
            code = report(exc, err)
            if code is None:
                raise
            raise typer.Exit(code) from None

    return wrapper  # type: ignore[return-value]


def gpu_route_option() -> Any:
    """The ``--gpu-route`` option of the commands that start containers (build, smoke, run, pull)."""
    return typer.Option(None, "--gpu-route", metavar="auto|runtime|cdi",
                        help="auto | runtime | cdi: how GPUs reach the container (default: config gpu_route, else "
                             "auto).")


def route_env(gpu_route: str | None) -> dict[str, str] | None:
    """--gpu-route for one command: the environment with $ENVGEN_GPU_ROUTE set (None: unchanged)."""
    if gpu_route is None:
        return None
    from envgen.config import GPU_ROUTE_ENV, check_gpu_route

    return {**os.environ, GPU_ROUTE_ENV: check_gpu_route(gpu_route, "option --gpu-route")}


def echo_json(data: Any) -> None:
    import json

    typer.echo(json.dumps(data, indent=2, sort_keys=True))
