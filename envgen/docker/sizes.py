"""What an image's bytes are: its layers (``docker history``: size and the step that made each) and, read by a
short Python run in a container of it (never committed), its Python distributions, its largest files and what a
runtime image could leave out. Reports only: nothing is removed."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from envgen.errors import EngineError

if TYPE_CHECKING:
    from docker import DockerClient

MARK = "envgen-sizes: "
# Run with the image's Python: walks the filesystem once (one device, no /proc, /sys, /dev) and prints one JSON line.
# Distributions: the files each *.dist-info/RECORD lists that the image still holds, measured on disk: a line whose
# file is gone (the leave-out removed it: plan/slim.py) counts as "left out", not as bytes; a file two lines (or two
# distributions) list, or a hard link of one counted already, counts once. Leavable: bytecode caches, test
# directories inside site-packages, C headers and static libraries (what issue #44 names; reported, not removed).
_SCAN = r"""
import json, os, stat, sys, heapq
top, leave, dists, seen = [], {"__pycache__": 0, "tests": 0, "headers": 0, "static libraries": 0}, {}, set()
gone, owned = {}, set()
def held(sp, record):
    total, missing = 0, 0
    for line in open(record, encoding="utf-8", errors="replace"):
        rel = line.rsplit(",", 2)[0].strip()
        if not rel: continue
        try: st = os.lstat(os.path.normpath(os.path.join(sp, rel)))
        except OSError:
            missing += 1
            continue
        if stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) not in owned:
            owned.add((st.st_dev, st.st_ino))
            total += st.st_size
    return total, missing
def kind(path, name):
    if "/__pycache__/" in path: return "__pycache__"
    if "site-packages/" in path and ("/tests/" in path or "/test/" in path): return "tests"
    if name.endswith((".h", ".hpp", ".cuh")): return "headers"
    if name.endswith(".a"): return "static libraries"
dev = os.lstat("ROOT").st_dev
for root, dirs, files in os.walk("ROOT"):
    dirs[:] = [d for d in dirs if os.path.join(root, d) not in ("/proc", "/sys", "/dev")]
    for name in files:
        path = os.path.join(root, name)
        try: st = os.lstat(path)
        except OSError: continue
        if st.st_dev != dev or (st.st_ino in seen and st.st_nlink > 1): continue
        if st.st_nlink > 1: seen.add(st.st_ino)
        size = 0 if os.path.islink(path) else st.st_size
        if len(top) < LARGEST: heapq.heappush(top, (size, path))
        else: heapq.heappushpop(top, (size, path))
        k = kind(path, name)
        if k: leave[k] += size
        if name == "RECORD" and root.endswith(".dist-info"):
            dist = os.path.basename(root)[:-len(".dist-info")]
            dists[dist], gone[dist] = held(os.path.dirname(root), path)
print("MARK" + json.dumps({"files": sorted(top, reverse=True), "leave": leave, "dists": dists,
                           "gone": {k: v for k, v in gone.items() if v}}))
"""


@dataclass(frozen=True)
class Layer:
    size: int  # bytes
    created_by: str  # the Dockerfile step, as the engine recorded it


def layers(client: DockerClient, image: str) -> list[Layer]:
    """The image's layers, oldest first (``docker history``), empty ones (ENV, LABEL...) left out."""
    from docker.errors import APIError

    try:
        history = client.api.history(image)
    except APIError as exc:
        raise EngineError(f"the engine cannot list the layers of {image}: {' '.join(str(exc).split())}") from None
    return [Layer(int(h.get("Size") or 0), " ".join(str(h.get("CreatedBy") or "").split()))
            for h in reversed(history) if h.get("Size")]


def scan_script(largest: int, root: str = "/") -> str:
    """The Python program that walks ``root`` and prints the scan (``MARK`` + JSON)."""
    return _SCAN.replace("MARK", MARK).replace("LARGEST", str(int(largest))).replace('"ROOT"', json.dumps(root))


def scan_command(largest: int) -> list[str]:
    """The container command that prints the scan (``MARK`` + JSON) with the image's Python."""
    from envgen.docker.foreign import with_python

    return with_python(None, "-c " + shlex.quote(scan_script(largest)))


def scan(client: DockerClient, image: str, largest: int = 15) -> dict[str, Any]:
    """Distributions, largest files and leavable bytes of ``image``, from a container of it (removed after)."""
    from envgen.docker.run import run_container

    result = run_container(client, image, scan_command(largest), timeout_s=600)
    for line in result.output.splitlines():
        if line.startswith(MARK):
            data: dict[str, Any] = json.loads(line[len(MARK):])
            return data
    tail = " ".join(result.output.split())[-300:]
    raise EngineError(f"the size scan of {image} printed no result (exit {result.exit_code}): {tail}")
