"""uv: a locked pip profile under BuildKit installs the lock's sets straight into the image's environment with uv's
pinned wheel, no build stage to copy from (render/dockerfile.py: Uv). Not a value of ``installer:``: the pip
installer's lock, when its conditions hold (``applies``)."""

from __future__ import annotations

from envgen.plan.installers.base import ContextFile, Installer

# the python_setups rows whose Python runs uv's venv (the base's own python3: Debian and python images)
UV_SETUPS = ("debian", "python-image")


class Uv(Installer):
    name = "uv"
    lock_tool = "uv"
    pip_lock = True
    context_files = (ContextFile("envgen/fetch-uv.py", "context/fetch-uv.py.j2"),)

    @staticmethod
    def applies(installer: Installer, locked_uv: bool, setup_key: str, source_builds: bool) -> bool:
        """A pip profile whose lock names uv's wheel (``locked_uv``), on a base whose own Python runs it, without
        source builds (built in stages of their own: the staged pip path)."""
        return not source_builds and installer.pip_lock and locked_uv and setup_key in UV_SETUPS
