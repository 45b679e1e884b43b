"""A command's parameters written once, as data: the Typer command is made from them (``envgen.cli.typed``)
and so is the fast path that runs `envgen check` without starting Typer (``parse``).

``parse`` understands only well-formed command lines (the argument, ``--name value``, ``--name=value``, flags,
repeated options where the option takes several); anything else (``--help``, an unknown or misspelt option, a
missing value or argument, ``--``) returns None, and the caller hands the whole command line to Typer, so every
message about a malformed command line is Typer's own.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

Kind = Literal["argument", "option", "flag"]


@dataclass(frozen=True)
class Param:
    """One parameter: ``name`` is the Python name the command function takes."""

    name: str
    kind: Kind
    help: str
    flag: str = ""  # the option's spelling, "--gpu"; empty for the argument
    multiple: bool = False  # repeatable option: a list (None when not given)
    default: str | None = None  # an option's value when not given (flags: False)
    metavar: str | None = None
    aliases: tuple[str, ...] = ()  # other spellings, listed first in help ("-o, --output")

    @property
    def unset(self) -> object:
        """What the command receives when the option is not given."""
        return False if self.kind == "flag" else None if self.multiple else self.default


def argument(name: str, help: str) -> Param:
    return Param(name, "argument", help)


def option(name: str, flag: str, help: str, *, multiple: bool = False, default: str | None = None,
           metavar: str | None = None, aliases: tuple[str, ...] = ()) -> Param:
    return Param(name, "option", help, flag, multiple, default, metavar, aliases)


def switch(name: str, flag: str, help: str) -> Param:
    return Param(name, "flag", help, flag)


def defaults(params: Sequence[Param]) -> dict[str, object]:
    return {p.name: p.unset for p in params if p.kind != "argument"}


def parse(params: Sequence[Param], argv: Sequence[str]) -> dict[str, object] | None:
    """The values ``argv`` gives (as the Typer command would receive them), or None when the line is not one
    this parser is sure of (then Typer parses it, and words any error)."""
    by_flag = {flag: p for p in params if p.kind != "argument" for flag in (p.flag, *p.aliases)}
    positional = [p for p in params if p.kind == "argument"]
    values, given = defaults(params), []
    tokens = list(argv)
    while tokens:
        token = tokens.pop(0)
        if not token.startswith("-") or token == "-":
            given.append(token)
            continue
        name, eq, inline = token.partition("=")
        param = by_flag.get(name)
        if param is None:  # --help, an unknown option, a short option, "--"
            return None
        if param.kind == "flag":
            if eq:
                return None
            values[param.name] = True
            continue
        if not eq and not tokens:
            return None  # an option without its value
        value = inline if eq else tokens.pop(0)
        if param.multiple:
            values[param.name] = [*(values[param.name] or []), value]  # type: ignore[misc]
        else:
            values[param.name] = value
    if len(given) != len(positional):
        return None
    values.update({p.name: value for p, value in zip(positional, given, strict=True)})
    return values


def echo(text: str = "", err: bool = False) -> None:
    """A line on stdout (or stderr), as typer.echo writes it, without importing Typer."""
    stream = sys.stderr if err else sys.stdout
    stream.write(f"{text}\n")
    stream.flush()


def run_parsed(params: Sequence[Param], impl: Callable[..., int], argv: Sequence[str]) -> int | None:
    """Run ``impl`` with the values of a plain, well-formed ``argv`` (its exit code; library errors mapped as the
    Typer commands map them, ``envgen.cli.errors``); None when the line is not one ``parse`` is sure of."""
    from envgen.cli.errors import report

    values = parse(params, argv)
    if values is None:
        return None
    try:
        return impl(**values)
    except (Exception, KeyboardInterrupt) as exc:
        code = report(exc, lambda line: echo(line, err=True))
        if code is None:
            raise
        return code
