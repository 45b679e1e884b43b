"""Typed errors raised by library code. The CLI maps them to one-line messages and exit codes.

Library code never prints or exits; it raises one of these. Each carries a message that names
what was wrong (field, value) and, where one exists, the fix.

Exit codes (README, "Exit codes"): 1 the check found an error (and anything not listed here), 2 bad input, 3 the
knowledge base is inconsistent, 4 the Docker engine (unreachable, or it refused a request), 5 a build failed, 6 a
smoke test failed (or an image has not passed one), 7 the host cannot run the image, 8 a registry (unreachable,
refused the login or the push, has no such image), 130 interrupted.
"""

from __future__ import annotations

from pathlib import Path


class EnvgenError(Exception):
    """Base class. ``exit_code`` is what the CLI exits with."""

    exit_code = 1

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix
        # Output worth showing above the one-line message (a build's last lines, a smoke table).
        self.tail = ""

    def with_tail(self, tail: str) -> EnvgenError:
        self.tail = tail
        return self

    def one_line(self) -> str:
        text = self.message
        if self.fix:
            text = f"{text} (fix: {self.fix})"
        return " ".join(text.split())


class InputError(EnvgenError):
    """Bad input from the user: a profile, an option, a path. Exit 2."""

    exit_code = 2


class ProfileError(InputError):
    """A profile that cannot be loaded: YAML syntax, unknown key, wrong type, bad value. ``more``: the profile's
    other problems, one line each, in file order after the first (the message)."""

    def __init__(self, message: str, *, fix: str | None = None, more: list[str] | None = None) -> None:
        super().__init__(message, fix=fix)
        self.more = list(more or [])


class ProfileNotFound(InputError):
    """No built-in or user profile of that name, and no such file."""


class KnowledgeBaseError(EnvgenError):
    """The knowledge base itself is inconsistent (a bug in envgen's data, not the user's input)."""

    exit_code = 3


class CheckFailed(EnvgenError):
    """`envgen check` (or the check before a build) found at least one error-level finding."""

    exit_code = 1


class RenderError(EnvgenError):
    """A template could not be rendered (missing variable, bad output directory)."""


class EngineError(EnvgenError):
    """The Docker engine failed or refused a request (raised by ``envgen.docker``, the layer that talks to it)."""

    exit_code = 4


class DockerUnavailable(EngineError):
    """The Docker engine cannot be reached (not installed, not running, no permission)."""


class GpuRequestRefused(EngineError):
    """The engine refused a container's GPU request (raised by ``envgen.docker``). ``reason``: "no-cdi" (the engine
    reads no CDI specs), "no-runtime" (no NVIDIA runtime), "cdi-unresolvable" (``detail``: the devices no spec
    declares), "cuda-requirement" (``detail``: the CUDA the image needs of the driver), "wsl-no-adapter" or
    "container-cli" (any other refusal of the NVIDIA container runtime). ``pipeline/`` turns it into the host
    error (HostIncompatible) in the doctor's words."""

    def __init__(self, engine_message: str, *, reason: str, detail: str = "") -> None:
        super().__init__(f"the engine refused the GPU request ({reason}): {' '.join(engine_message.split())}",
                         fix="run `envgen doctor`")
        self.engine_message = engine_message
        self.reason = reason
        self.detail = detail


class BuildFailed(EnvgenError):
    """An image build failed. ``log_path`` points at the full build log."""

    exit_code = 5

    def __init__(self, message: str, *, fix: str | None = None, log_path: str | None = None,
                 tail: str = "") -> None:
        super().__init__(message, fix=fix)
        self.log_path = log_path
        self.tail = tail


class SmokeFailed(EnvgenError):
    """The smoke test ran and at least one check failed."""

    exit_code = 6


class ImageNotValidated(EnvgenError):
    """`envgen run` was asked to start an image that has not passed its smoke test."""

    exit_code = 6


class ImageMismatch(EnvgenError):
    """A pulled or named image does not carry the labels (hash) of the local profile."""


class RegistryError(EnvgenError):
    """Push or pull failed: registry down, unknown, or refused. ``cause`` is one of "unreachable",
    "denied", "missing" (no such image there), "local" (no such local image) or "other". Exit 8."""

    exit_code = 8

    def __init__(self, message: str, *, fix: str | None = None, cause: str = "other") -> None:
        super().__init__(message, fix=fix)
        self.cause = cause


class HostIncompatible(EnvgenError):
    """The host (driver, GPU, runtime) cannot run the image; raised by the run-time gate."""

    exit_code = 7


class ResolverUnavailable(EnvgenError):
    """`check --resolve`: the package index could not be reached, so the resolver gave no verdict."""

    exit_code = 4


class DiskFull(EnvgenError):
    """No space left (ENOSPC, or the quota: EDQUOT) where envgen writes; what was being written was not kept. Exit 1."""


class BundleError(InputError):
    """An offline bundle (`envgen load`) that is truncated, altered, or not a bundle at all."""


def shown(value: object, limit: int = 60) -> str:
    """``repr(value)`` for a message, cut to ``limit`` characters: control characters, direction marks
    and newlines come out escaped, and a 100,000-character value stays a short line."""
    text = repr(value)
    if len(text) <= limit:
        return text
    size = f" ({len(value)} characters)" if isinstance(value, (str, bytes, list, dict)) else ""
    return text[:limit] + "…" + size


def no_space(exc: OSError, path: Path, what: str, fix: str = "") -> DiskFull | None:
    """The one-line error for ``exc`` when it says the file system of ``path`` is full (ENOSPC, EDQUOT): the path,
    the space left there and what was not kept; None for any other OSError (the caller raises it as it is)."""
    import errno
    import shutil

    if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
        return None
    where = path
    while not where.exists() and where != where.parent:
        where = where.parent
    try:
        free = f"{shutil.disk_usage(where).free / 1e6:.1f} MB free"
    except OSError:
        free = "free space unknown"
    return DiskFull(f"no space left on the file system of {path} ({free}) while writing {what}; nothing half-written "
                    "was kept", fix=fix or f"free space on the file system of {where}, then run the command again")
