"""CDI (Container Device Interface) specs: which devices a spec file names, read from its text.

A spec is JSON or YAML (`nvidia-ctk cdi generate` writes YAML by default, JSON with `--format json`):
`cdiVersion`, `kind` ("vendor/class", such as ``nvidia.com/gpu``) and `devices`, each with a `name`
(``all``, ``0``, ``GPU-<uuid>``, ``0:1`` for a MIG slice). A container asks for one by its fully
qualified name, ``nvidia.com/gpu=0`` (CDI specification, "Fully-qualified device names":
https://github.com/cncf-tags/container-device-interface/blob/main/SPEC.md).

Standard library first: JSON with `json`, YAML with PyYAML when it is importable (the host layer must
also run where only the standard library is, such as a GPU machine with no envgen dependencies), else a
line scan that reads the two keys this module needs from the layout `nvidia-ctk` writes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

NVIDIA_GPU_KIND = "nvidia.com/gpu"
SPEC_SUFFIXES = (".yaml", ".yml", ".json")
# search-path variables: an image's value and a spec's can both be kept (joined); any other variable a
# spec sets is the spec's to decide
PATH_LISTS = ("PATH", "LD_LIBRARY_PATH", "PYTHONPATH", "LIBRARY_PATH")

_KIND_LINE = re.compile(r"""^kind:\s*["']?([A-Za-z0-9._/-]+)["']?\s*$""")
# a device's name: "- name: x" (the item's first key) or "  name: x" (a later key of the item)
_NAME_LINE = re.compile(r"""^(?:- |  )name:\s*["']?([A-Za-z0-9:._-]+)["']?\s*$""")


@dataclass(frozen=True)
class CdiSpec:
    """One spec file: its kind and the device names it declares, or why it could not be read."""

    path: str
    kind: str | None
    devices: tuple[str, ...] = ()
    error: str | None = None
    # the spec's own containerEdits.env ("NAME=value"): CDI applies them over the image's environment,
    # so a spec that sets PATH or LD_LIBRARY_PATH replaces the image's values
    env: tuple[str, ...] = ()

    @property
    def is_nvidia_gpu(self) -> bool:
        return self.kind == NVIDIA_GPU_KIND

    def qualified(self, name: str) -> str:
        """``nvidia.com/gpu=0``: the name a container's device request uses."""
        return f"{self.kind}={name}"


def parse_spec(text: str, path: str = "<spec>") -> CdiSpec:
    """The kind and device names of one spec text (JSON or YAML)."""
    data = _load(text)
    if data is None:
        return _scan(text, path)
    if not isinstance(data, dict):
        return CdiSpec(path, None, error="not a CDI spec (expected a mapping with cdiVersion, kind, devices)")
    kind = data.get("kind")
    devices = data.get("devices")
    names = tuple(str(d["name"]) for d in devices or () if isinstance(d, dict) and d.get("name") not in (None, ""))
    if not isinstance(kind, str) or not kind:
        return CdiSpec(path, None, names, error="the spec has no kind")
    edits = data.get("containerEdits")
    env = edits.get("env") if isinstance(edits, dict) else None
    return CdiSpec(path, kind, names, env=tuple(str(e) for e in env or () if isinstance(e, str) and "=" in e))


def _load(text: str) -> Any:
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            return json.loads(text)
        except ValueError:
            return None
    try:
        import yaml
    except ImportError:
        return None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return None


def _scan(text: str, path: str) -> CdiSpec:
    """YAML without PyYAML: `kind:` at the top level and `- name:` items under `devices:`."""
    kind = None
    names: list[str] = []
    in_devices = False
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if not line.startswith((" ", "-")):
            in_devices = line.startswith("devices:")
            match = _KIND_LINE.match(line)
            if match:
                kind = match.group(1)
            continue
        match = _NAME_LINE.match(line)
        if in_devices and match:
            names.append(match.group(1))
    if kind is None:
        return CdiSpec(path, None, tuple(names), error="unreadable: neither JSON nor YAML with a kind")
    return CdiSpec(path, kind, tuple(names))


def spec_files(dirs: Iterable[str | Path]) -> list[Path]:
    """The spec files in the engine's CDI spec directories, in the order the CDI library reads them."""
    found: list[Path] = []
    for directory in dirs:
        folder = Path(directory)
        if folder.is_dir():
            found.extend(p for p in sorted(folder.iterdir()) if p.suffix in SPEC_SUFFIXES and p.is_file())
    return found


def read_specs(dirs: Sequence[str | Path]) -> list[tuple[str, str]]:
    """(path, text) of every spec file under ``dirs``; an unreadable file is left out."""
    texts: list[tuple[str, str]] = []
    for path in spec_files(dirs):
        try:
            texts.append((str(path), path.read_text(encoding="utf-8", errors="replace")))
        except OSError:
            continue
    return texts


def gpu_devices(specs: Iterable[CdiSpec]) -> tuple[str, ...]:
    """Every ``nvidia.com/gpu`` device name the specs declare (first spec wins on a repeated name)."""
    names: list[str] = []
    for spec in specs:
        if spec.is_nvidia_gpu:
            names.extend(n for n in spec.devices if n not in names)
    return tuple(names)


def overridden_env(specs: Iterable[CdiSpec], image_env: Iterable[str]) -> dict[str, str]:
    """The search-path variables the image sets that the GPU specs' env replaces, each merged as the image
    meant it plus the spec's value (``PATH``: the image's entries first; ``LD_LIBRARY_PATH``: the image's, then the
    spec's driver directory). Empty when no spec touches the image's variables."""
    image = dict(item.split("=", 1) for item in image_env if "=" in item)
    merged: dict[str, str] = {}
    for spec in specs:
        if not spec.is_nvidia_gpu:
            continue
        for item in spec.env:
            name, value = item.split("=", 1)
            if name in PATH_LISTS and name in image and image[name] != value:
                ours = [p for p in image[name].split(":") if p]
                merged[name] = ":".join(ours + [p for p in value.split(":") if p and p not in ours])
    return merged
