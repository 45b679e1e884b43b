"""Helpers, no tests: import the probe's modules as its entry point does (its folder first on the path, the package
``envgen_checks`` from there): ``probe_module("core.common")``."""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

from envgen.paths import probe_dir, probe_package_dir


def probe_module(name: str) -> ModuleType:
    folder = str(probe_dir())
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return importlib.import_module(f"{probe_package_dir().name}.{name}")
