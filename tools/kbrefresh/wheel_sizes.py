"""Record the Linux x86_64 files of NVIDIA's pinned CUDA wheels with their size (``nvidia_wheel_files.yaml``).

Usage::

    python -m tools.kbrefresh.wheel_sizes [--profiles profiles] [--into FILE] [NAME==VERSION ...]

For every ``nvidia-*==X`` that a profile's ``packages.pip`` names (and each NAME==VERSION given), it reads the name's
PyPI simple index once (PEP 691 JSON, whose PEP 700 ``size`` is the file's length) and records each manylinux
x86_64 wheel of that release: file name, URL, sha256 and size. `envgen check` reads the sizes to say how many
megabytes a second copy of the CUDA libraries costs (check/libraries/cuda_twice.py). Nothing is typed by hand.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path
from typing import Any

import yaml
from packaging.utils import canonicalize_name, parse_wheel_filename

from tools.kbrefresh.requires import _JSON, SIMPLE, _get, emit

HEADER = ("# The Linux x86_64 files of NVIDIA's CUDA wheels that profiles pin, as PyPI's simple index serves them\n"
          "# (PEP 691 JSON; size: PEP 700's, the file's bytes). Made and refreshed by\n"
          "#   python -m tools.kbrefresh.wheel_sizes --into envgen/kb/data/nvidia_wheel_files.yaml\n"
          "# (never typed by hand). Read by check/libraries/cuda_twice.py: the megabytes of a second copy of CUDA.\n")


def profile_pins(directory: Path) -> list[tuple[str, str]]:
    """Every exact ``nvidia-*`` pin of the profiles' packages.pip, as (PEP 503 name, version), sorted."""
    found: set[tuple[str, str]] = set()
    for path in sorted(directory.glob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        for spec in ((data.get("packages") or {}).get("pip") or []):
            name, sep, version = str(spec).partition("==")
            if sep and canonicalize_name(name).startswith("nvidia-"):
                found.add((canonicalize_name(name), version.strip()))
    return sorted(found)


def _linux_x86_64(filename: str) -> bool:
    if not filename.endswith(".whl"):
        return False
    tags = parse_wheel_filename(filename)[3]
    return any(t.platform.startswith("manylinux") and t.platform.endswith("x86_64") for t in tags)


def release_files(index: dict[str, Any], name: str, version: str, read_on: str) -> list[dict[str, Any]]:
    """The rows of ``name==version``'s Linux x86_64 wheels in one PEP 691 index page."""
    rows = []
    for entry in index.get("files", []):
        filename = entry["filename"]
        if not _linux_x86_64(filename) or str(parse_wheel_filename(filename)[1]) != version:
            continue
        rows.append({"name": name, "version": version, "filename": filename, "url": entry["url"].split("#")[0],
                     "sha256": entry["hashes"]["sha256"], "size": int(entry["size"]),
                     "source": f"{SIMPLE.format(name=name)} (PEP 691/700 JSON; read {read_on})"})
    return rows


def table(pins: list[tuple[str, str]], read_on: str) -> str:
    rows: list[dict[str, Any]] = []
    for name, version in pins:
        index = json.loads(_get(SIMPLE.format(name=name), {"Accept": _JSON}))
        rows += release_files(index, name, version, read_on)
    return HEADER + yaml.safe_dump({"nvidia_wheel_files": rows}, sort_keys=False, width=200)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pins", nargs="*", help="NAME==VERSION beside the profiles' pins")
    parser.add_argument("--profiles", type=Path, default=Path("profiles"))
    parser.add_argument("--into", type=Path)
    args = parser.parse_args(argv)
    extra = [(canonicalize_name(p.partition("==")[0]), p.partition("==")[2]) for p in args.pins]
    pins = sorted(set(profile_pins(args.profiles)) | set(extra))
    emit(table(pins, datetime.date.today().isoformat()), args.into)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
