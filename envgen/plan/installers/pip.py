"""pip: a venv made by the base's Python (or base_provides' interpreter), the frameworks' pins and packages.pip
installed by pip (render/dockerfile.py: VenvPip); locked by uv (``envgen lock``: lock/lock.py)."""

from __future__ import annotations

from typing import ClassVar

from envgen.plan.installers.base import Installer


class Pip(Installer):
    name = "pip"
    lock_tool = "uv"
    lock_command = "lock.lock_line"
    pip_lock = True
    lock_missing = ("its base image, apt and pip packages are resolved at build time",
                    "needs the package indexes and the Docker engine")
    check_rules: ClassVar[tuple[str, ...]] = ("frameworks.python.python_base",)
