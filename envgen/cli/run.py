"""`envgen run TARGET [--] COMMAND...` without Typer: a plain line (no option before or among the command's words,
or every word of the command after ``--``) starts the container as the Typer command does, with its defaults; any
other line (an option, ``--help``) goes to Typer, which parses it and words its errors. Starting Typer (and the
pydantic adapters it parses options through) was a third of a run's own time (bench/bench_run.py)."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def plain(argv: Sequence[str]) -> tuple[str, list[str]] | None:
    """(target, command) of a line Typer would read the same way with every option at its default; None otherwise.
    Click keeps words that are not options, in order, and everything after ``--``, as the command."""
    if not argv or argv[0].startswith("-"):
        return None
    target, rest = argv[0], list(argv[1:])
    if rest[:1] == ["--"]:
        return target, rest[1:]
    if any(word.startswith("-") for word in rest):
        return None
    return target, rest


def fast(argv: Sequence[str]) -> int | None:
    """Run a plain `envgen run` line (its exit code); None when the line is not plain."""
    from envgen.cli.spec import echo

    line = plain(argv)
    if line is None:
        return None
    target, command = line
    try:
        from envgen.pipeline.run import run
        from envgen.pipeline.session import Session

        return run(target, command=command, gpus=None, workdir=None, force=False, out=sys.stdout.write,
                   as_root=False, session=Session())
    except (Exception, KeyboardInterrupt) as exc:
        from envgen.cli.errors import report

        code = report(exc, lambda text: echo(text, err=True))
        if code is None:
            raise
        return code
