"""`envgen lock PROFILE`: the lock of the profile's installer (``Installer.lock_command`` in ``plan.installers``: uv's
pip lock, py-rattler's explicit conda list), so that the command names no installer and a new one brings its own
lock module without touching the CLI."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

from envgen.errors import InputError

if TYPE_CHECKING:
    from envgen.kb import KnowledgeBase


def lock_profile(ref: str, *, kb: KnowledgeBase, wheelhouse: Path | None = None, channels: Sequence[str] = (),
                 platforms: Sequence[str] = (), env: Mapping[str, str] | None = None) -> str:
    """Lock profile ``ref`` with its installer's lock; the one line that says what was written."""
    from envgen.plan.installers import installer_of
    from envgen.profile import load_profile

    installer = installer_of(load_profile(ref, env, kb=kb))
    if not installer.lock_command:
        raise InputError(f"installer {installer.name!r} has no lock envgen makes", fix="build it unlocked")
    module, _, function = installer.lock_command.rpartition(".")
    line: str = getattr(import_module(f"envgen.lock.{module}"), function)(ref, kb=kb, wheelhouse=wheelhouse,
                                                                          channels=channels, platforms=platforms)
    return line
