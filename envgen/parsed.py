"""Small YAML files (the user config, the render's tools.yaml) parsed once per content and kept in the store
(``envgen.cache``), so that a run which finds them imports no YAML parser (PyYAML's import is ~0.02 s of CPU, a tenth
of a warm `envgen render`).

An entry (``yaml-<key>.pickle``) is keyed by the text, the loader asked for and PyYAML's own version file: another
text, loader or PyYAML gives another entry. What fails to parse is never kept, so its error is always PyYAML's own.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from envgen.cache import MISSING, Store, package_file


def parse_yaml(text: str, cache: Path | None, *, c_loader: bool = False,
               check: Callable[[str], None] | None = None) -> Any:
    """``text`` parsed by PyYAML's safe loader (its C build with ``c_loader``, where PyYAML has one), from ``cache``
    when parsed before (None: no cache); raises PyYAML's YAMLError as the loader does. ``check``: run on a text
    before it is parsed (its limits; a kept text passed it when it was parsed)."""
    store = Store(cache, "yaml-")
    key = store.key(package_file("yaml"), "C" if c_loader else "Python", text) if cache is not None else ""
    found = store.get(key)
    if found is not MISSING:
        return found
    if check is not None:
        check(text)
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader) if c_loader else yaml.SafeLoader
    data = yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader, chosen above
    store.put(key, data)
    return data


def yaml_error() -> type[Exception]:
    """PyYAML's YAMLError, for an ``except`` clause (imported here: Python looks a clause's class up only when
    something was raised, so a parse served from the cache imports no PyYAML)."""
    import yaml

    return yaml.YAMLError
