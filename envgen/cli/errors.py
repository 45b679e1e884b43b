"""What a failed command prints and exits with, shared by the Typer commands and the fast `check` path.

Library errors (`envgen.errors.EnvgenError`) become one line on stderr (plus the error's tail and its other
problems, each at its own line) and the error's exit code; the Docker SDK's own errors become the engine's.
No Typer here: the fast path must not import it.
"""

from __future__ import annotations

from collections.abc import Callable

from envgen.errors import EnvgenError

INTERRUPTED = ("interrupted: envgen tags an image only after its build and smoke test finish; "
               "run the command again (the build cache is kept)")


def error_lines(exc: BaseException) -> tuple[list[str], int] | None:
    """The stderr lines and exit code ``exc`` becomes; None for an exception that is neither envgen's nor the
    engine's (a bug: let it raise)."""
    if isinstance(exc, EnvgenError):
        lines = []
        tail = getattr(exc, "tail", "")
        if tail:
            lines.append(tail.rstrip())
        lines.append(f"error: {exc.one_line()}")
        lines += [f"error: {line}" for line in getattr(exc, "more", ())]  # a profile's other problems
        return lines, exc.exit_code
    if isinstance(exc, KeyboardInterrupt):
        return [INTERRUPTED], 130
    from envgen.docker.client import as_engine_error

    engine = as_engine_error(exc) if isinstance(exc, Exception) else None
    if engine is None:
        return None
    return [f"error: {engine.one_line()}"], engine.exit_code


def report(exc: BaseException, write: Callable[[str], None]) -> int | None:
    """Write ``exc``'s lines with ``write`` and give its exit code; None (nothing written) when it is not one of
    envgen's or the engine's errors."""
    mapped = error_lines(exc)
    if mapped is None:
        return None
    lines, code = mapped
    for line in lines:
        write(line)
    return code
