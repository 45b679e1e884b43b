"""Run inside an image (stdlib only): for each distribution named on the command line, the top-level modules its
RECORD installs (a package directory with __init__.py, a top-level .py or extension module; never *.dist-info,
*.data, *.libs, __pycache__ or bin), each imported by a plain ``python -c 'import M'`` in a process of its own
(three at a time).
A module whose import misses a distribution its own distribution requires only under an extra (blackd: aiohttp, in
black's "d" extra) is not a failure: its value is "extra: ...". Prints one JSON object: {module: null (imported),
"extra: ..." or the last line of its error}. With ``--modules M ...``: those modules, each imported alike."""

import json
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata


def _modules(dist):
    names = set()
    for entry in dist.files or ():
        parts = entry.parts
        top = parts[0]
        if top.endswith((".dist-info", ".data", ".libs", ".egg-info")) or top in ("__pycache__", "..", "bin"):
            continue
        if not dist.locate_file(entry).exists():  # listed in RECORD, not installed (a stray setup.py)
            continue
        if len(parts) == 1 and (top.endswith(".py") or ".cpython-" in top or top.endswith(".so")):
            names.add(top.split(".")[0])
        elif len(parts) == 2 and parts[1] == "__init__.py":
            names.add(top)
    return sorted(n for n in names if n.isidentifier() and not n.startswith("_"))


def _extra_only(dist):
    """Canonical names of what ``dist`` requires only under an extra."""
    out = set()
    for req in dist.requires or ():
        if "extra ==" in req.replace("extra==", "extra =="):
            out.add(re.sub(r"[-_.]+", "-", re.split(r"[\s\[<>=!~;(]", req, maxsplit=1)[0]).lower())
    return out


def _verdict(dist, error):
    missing = re.search(r"No module named '([^'.]+)", error)
    if missing and re.sub(r"[-_.]+", "-", missing.group(1)).lower() in _extra_only(dist):
        return "extra: " + error
    return error


def _import(module):
    run = subprocess.run([sys.executable, "-c", "import " + module], capture_output=True, text=True, timeout=300)
    lines = (run.stderr or "").strip().splitlines()
    return None if run.returncode == 0 else (lines[-1] if lines else f"exit {run.returncode}")


def main():
    if sys.argv[1:2] == ["--modules"]:  # the modules named, each imported as it is
        with ThreadPoolExecutor(max_workers=3) as pool:
            print(json.dumps(dict(zip(sys.argv[2:], pool.map(_import, sys.argv[2:]))), sort_keys=True))  # noqa: B905
        return
    named = {}
    for name in sys.argv[1:]:
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:  # a line whose marker leaves it out (dataclasses; python_version<"3.7")
            continue
        named.update({module: dist for module in _modules(dist)})
    with ThreadPoolExecutor(max_workers=3) as pool:  # each import in a process of its own, three at a time
        errors = dict(zip(named, pool.map(_import, named)))  # noqa: B905 (the image's Python may be < 3.10)
    out = {m: None if errors[m] is None else _verdict(named[m], errors[m]) for m in named}
    print(json.dumps(out, sort_keys=True))


main()
