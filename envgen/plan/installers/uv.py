"""uv: a locked pip profile under BuildKit installs the lock's sets straight into the image's environment with uv's
pinned wheel, no build stage to copy from (render/dockerfile.py: Uv). Not a value of ``installer:``: the pip
installer's lock, when its conditions hold (``applies``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from envgen.plan.installers.base import ContextFile, Installer
from envgen.plan.installers.pip import Pip
from envgen.profile.installers import PROFILE_INSTALLERS, ProfileInstaller

if TYPE_CHECKING:
    from envgen.plan.lockfile import Lock, LockEntry

# the python_setups rows whose Python runs uv's venv (the base's own python3: Debian and python images)
UV_SETUPS = ("debian", "python-image")
# The CUDA layer's requirements: the lock's NVIDIA CUDA library wheels (``cuda_layer``).
CUDA_FILE = ContextFile("requirements.cuda.txt", "context/requirements.cuda.txt.j2")


def cuda_layer(names: frozenset[str], lock: Lock) -> tuple[LockEntry, ...]:
    """What uv installs in a layer of its own, first, right after the venv is made: the lock's NVIDIA CUDA library
    wheels (``names``: ``plan.packages.cuda_wheel_names``, the KB's tables name them), those of packages.pip (the
    extras set) and those the frameworks' Requires-Dist pins (the environment set), in the lock's order. They are
    most of a pip GPU stack's bytes (a100-pypi: 3.0 GB of 5.4) and change with the CUDA release, not with the
    framework or the next package a user adds: the layers above them (the environment, the extras) are rebuilt
    and this one kept. The environment and extras sets still list them; uv finds them installed."""
    return tuple(e for e in (*lock.environment, *lock.extras) if e.name.lower() in names)


class Uv(Installer):
    name = "uv"
    lock_tool = "uv"
    pip_lock = True
    context_files = (ContextFile("envgen/fetch-uv.py", "context/fetch-uv.py.j2"),)

    @property
    def facts(self) -> ProfileInstaller:
        """uv installs a pip profile's lock: the profile's row is pip's."""
        return PROFILE_INSTALLERS[Pip.name]

    @staticmethod
    def applies(installer: Installer, locked_uv: bool, setup_key: str, source_builds: bool) -> bool:
        """A pip profile whose lock names uv's wheel (``locked_uv``), on a base whose own Python runs it, without
        source builds (built in stages of their own: the staged pip path)."""
        return not source_builds and installer.pip_lock and locked_uv and setup_key in UV_SETUPS
