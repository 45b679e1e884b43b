"""Small YAML files (the user config, the render's tools.yaml) parsed once per content and kept in envgen's cache
directory, so that a run which finds them imports no YAML parser (PyYAML's import is ~0.02 s of CPU, a tenth of a
warm `envgen render`).

An entry (``yaml-<key>.pickle``) is named after a SHA-256 over the text, the loader asked for and PyYAML's own
version file: another text, loader or PyYAML gives another entry. What fails to parse is never kept, so its error is
always PyYAML's own. Entries not written for ``MAX_AGE_DAYS`` are pruned when one is written.
"""

from __future__ import annotations

import contextlib
import hashlib
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

from envgen.files import CACHE_DAYS, prune_stale, write_atomically

_PREFIX = "yaml-"
MAX_AGE_DAYS = CACHE_DAYS  # files.prune_stale's


def _pyyaml_version() -> bytes:
    """PyYAML's ``__init__.py`` (it holds ``__version__``), found without importing it."""
    import importlib.util

    spec = importlib.util.find_spec("yaml")
    if spec is None or spec.origin is None:
        return b"no yaml"
    try:
        return Path(spec.origin).read_bytes()
    except OSError:
        return b"unreadable"


def parse_yaml(text: str, cache: Path | None, *, c_loader: bool = False,
               check: Callable[[str], None] | None = None) -> Any:
    """``text`` parsed by PyYAML's safe loader (its C build with ``c_loader``, where PyYAML has one), from ``cache``
    when parsed before (None: no cache); raises PyYAML's YAMLError as the loader does. ``check``: run on a text
    before it is parsed (its limits; a kept text passed it when it was parsed)."""
    target = None
    if cache is not None:
        digest = hashlib.sha256(_pyyaml_version() + (b"\0C\0" if c_loader else b"\0Python\0") + text.encode())
        target = cache / f"{_PREFIX}{digest.hexdigest()[:32]}.pickle"
        with contextlib.suppress(Exception):  # absent, torn or unreadable: parsed again
            return pickle.loads(target.read_bytes())
    if check is not None:
        check(text)
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader) if c_loader else yaml.SafeLoader
    data = yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader, chosen above
    if target is not None:
        with contextlib.suppress(Exception):  # a cache that cannot be written is simply not kept
            write_atomically(target, pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))
            prune_stale(target, f"{_PREFIX}*.pickle")
    return data


def yaml_error() -> type[Exception]:
    """PyYAML's YAMLError, for an ``except`` clause (imported here: Python looks a clause's class up only when
    something was raised, so a parse served from the cache imports no PyYAML)."""
    import yaml

    return yaml.YAMLError

