"""Record what PyPI serves of every release the frameworks' Requires-Dist pins exactly (``pinned_releases.yaml``).

Usage::

    python -m tools.kbrefresh.pins [--requires envgen/kb/data/framework_requires.yaml] [--into FILE]

For each ``name==version`` that ``framework_requires.yaml`` holds (``tensorrt-libs==8.6.1`` from
``tensorflow[and-cuda]==2.15.0``) it reads the name's PyPI simple index (PEP 691 JSON) once and records the CPython
minors that have a wheel pip installs on Linux x86_64 (a ``cpXY``, ``abi3``, ``py3`` or ``any`` tag on a
manylinux x86_64 or pure platform, within the file's Requires-Python) and whether an sdist exists. A release the
index does not have gets no Pythons and no sdist: pip refuses every set that needs it. Nothing is typed by hand.
"""

from __future__ import annotations

import argparse
import datetime
import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag
from packaging.utils import canonicalize_name, parse_sdist_filename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from tools.kbrefresh.requires import _JSON, SIMPLE, _get, emit

PYTHONS = [f"3.{m}" for m in range(5, 15)]
_CP = re.compile(r"^cp3(\d+)$")
HEADER = ("# What PyPI serves of each release a framework's Requires-Dist pins exactly (framework_requires.yaml): the\n"
          "# CPython minors with a wheel pip installs on Linux x86_64, and whether an sdist exists; a release PyPI\n"
          "# does not have gets neither. Made and refreshed by\n"
          "#   python -m tools.kbrefresh.pins --into envgen/kb/data/pinned_releases.yaml\n"
          "# (never typed by hand). Read by check/packages/combined.py: "
          "a pin with nothing for the Python is an error.\n")


def exact_pins(requires: Path) -> list[tuple[str, str]]:
    """Every (name, version) an ``==X`` specifier of the recorded Requires-Dist names, sorted."""
    rows = yaml.safe_load(requires.read_text(encoding="utf-8"))["framework_requires"]
    found = {(req["name"], req["spec"][2:]) for row in rows for req in row["requires"]
             if req.get("spec", "").startswith("==") and "," not in req["spec"] and "*" not in req["spec"]}
    return sorted(found)


def _tag_installs(tag: Tag, minor: int) -> bool:
    if not (tag.platform == "any" or (tag.platform.startswith("manylinux") and tag.platform.endswith("x86_64"))):
        return False
    if tag.interpreter in ("py3", f"py3{minor}"):
        return True
    cp = _CP.match(tag.interpreter)
    if cp is None:
        return False
    return int(cp.group(1)) == minor or (tag.abi == "abi3" and int(cp.group(1)) <= minor)


def _python_ok(requires_python: str | None, python: str) -> bool:
    try:
        return not requires_python or SpecifierSet(requires_python).contains(f"{python}.0")
    except InvalidSpecifier:
        return True


def served(files: list[dict[str, Any]], name: str, version: str) -> tuple[list[str], bool]:
    """(CPython minors with an installable wheel, whether an sdist exists) of one release."""
    want, pythons, sdist = Version(version), set(), False
    for entry in files:
        filename = entry["filename"]
        if entry.get("yanked"):
            continue
        try:
            if filename.endswith(".whl"):
                dist, got, _, tags = parse_wheel_filename(filename)
            else:
                dist, got = parse_sdist_filename(filename)
                tags = frozenset()
                sdist = sdist or (dist == canonicalize_name(name) and got == want)
                continue
        except (ValueError, InvalidVersion):
            continue
        if dist != canonicalize_name(name) or got != want:
            continue
        for python in PYTHONS:
            minor = int(python.split(".")[1])
            if _python_ok(entry.get("requires-python"), python) and any(_tag_installs(t, minor) for t in tags):
                pythons.add(python)
    return sorted(pythons, key=lambda p: int(p.split(".")[1])), sdist


def rows(pins: list[tuple[str, str]], today: str) -> list[dict[str, Any]]:
    out, indexes = [], {}
    for name, version in pins:
        if name not in indexes:
            indexes[name] = json.loads(_get(SIMPLE.format(name=name), {"Accept": _JSON}))["files"]
            sys.stderr.write(f"read {SIMPLE.format(name=name)}\n")
        pythons, sdist = served(indexes[name], name, version)
        out.append({"name": name, "version": version, "pythons": pythons, "sdist": sdist,
                    "source": f"{SIMPLE.format(name=name)} (PEP 691 JSON: the files of {version}; read {today})"})
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.kbrefresh.pins", description=__doc__.split("\n")[0])
    data = Path(__file__).resolve().parents[2] / "envgen" / "kb" / "data"
    parser.add_argument("--requires", type=Path, default=data / "framework_requires.yaml")
    parser.add_argument("--into", type=Path, help="write the table here instead of printing it")
    args = parser.parse_args(argv)
    found = rows(exact_pins(args.requires), datetime.date.today().isoformat())
    emit(HEADER + yaml.safe_dump({"pinned_releases": found}, sort_keys=False, width=120, default_flow_style=None),
         args.into)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
