"""A Typer command made from a parameter list (``envgen.cli.spec``): the function Typer inspects gets its
signature and annotations from the list, so the options are written once for Typer and the fast path alike."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

import typer

from envgen.cli.spec import Param


def _annotation(param: Param) -> Any:
    if param.kind == "flag":
        return bool
    if param.multiple:
        return list[str] | None
    return str if param.kind == "argument" or param.default is not None else str | None


def _typer_default(param: Param) -> Any:
    if param.kind == "argument":
        return typer.Argument(..., help=param.help, metavar=param.metavar)
    return typer.Option(param.unset, *param.aliases, param.flag, help=param.help, metavar=param.metavar)


def typer_function(params: Sequence[Param], impl: Callable[..., None], doc: str) -> Callable[..., None]:
    """A function taking ``params`` as keywords and calling ``impl`` with them, shaped for Typer."""

    def command(**values: Any) -> None:
        impl(**values)

    command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, default=_typer_default(p),
                           annotation=_annotation(p)) for p in params])
    command.__annotations__ = {p.name: _annotation(p) for p in params} | {"return": None}
    command.__doc__ = doc
    command.__name__ = command.__qualname__ = f"{impl.__name__}_cmd"
    return command
