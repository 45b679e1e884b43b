"""Helpers, no tests: import the standalone probe's modules (they live beside envgen_probe.py, not in a
package)."""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

from envgen.paths import probe_dir


def probe_module(name: str) -> ModuleType:
    folder = str(probe_dir())
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return importlib.import_module(name)
