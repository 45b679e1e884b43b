"""Where envgen's data lives: in an installed wheel (``envgen/_data``) or in a source checkout.

Functions, not module constants: nothing is computed at import time.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def _data_dir(name: str) -> Path:
    installed = _PACKAGE_DIR / "_data" / name
    if installed.is_dir():
        return installed
    return _PACKAGE_DIR.parent / name


def builtin_profiles_dir() -> Path:
    return _data_dir("profiles")


def templates_dir() -> Path:
    return _data_dir("templates")


def build_scripts_dir() -> Path:
    """envgen's build scripts (POSIX sh), shipped in every build context as envgen/sh/."""
    return templates_dir() / "sh"


def render_data_dir() -> Path:
    """The render's own data (labels, the tools the Dockerfiles fetch or pin)."""
    return _PACKAGE_DIR / "render" / "data"


def kb_data_dir() -> Path:
    return _PACKAGE_DIR / "kb" / "data"


def probe_dir() -> Path:
    """The self-contained smoke-test probe that every image carries: its entry point and its package."""
    return _PACKAGE_DIR / "smoke" / "probe"


def probe_package_dir() -> Path:
    """The probe's checks (``core/``, ``library/``, ``gpu/`` and their data files), beside its entry point."""
    return probe_dir() / "envgen_checks"
