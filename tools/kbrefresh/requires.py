"""Record frameworks' own dependency pins (their wheels' ``Requires-Dist``) from PyPI's metadata into the KB.

Usage::

    python -m tools.kbrefresh.requires 'tensorflow>=2.1' 'torch>=1.13' [--into FILE]
    python -m tools.kbrefresh.requires --metadata FILE --wheel URL#sha256=HEX [--python 3.9 3.10 ...]

For each ``name==version`` (or every final release a specifier admits) it reads PyPI's simple index (PEP 691
JSON), picks the newest CPython manylinux x86_64 wheel, and reads its core metadata: the PEP 658
``<wheel>.metadata`` file, or, where the index serves none, the ``*.dist-info/METADATA`` member read out of the
wheel with HTTP range requests (the zip's central directory and that one member, not the whole wheel). Nothing
is typed by hand: every requirement, its specifier and the Python minors its marker holds for (evaluated with
``packaging`` for Linux x86_64 and each CPython minor the release has wheels for) come from that file, and the
row's ``source`` names the wheel and its sha256. Without ``--into`` the rows are printed as YAML; with it they
replace the rows of the same key in that file (others are kept) and the file is rewritten sorted.
"""

from __future__ import annotations

import argparse
import email.parser
import json
import re
import sys
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

from tools.kbrefresh.wheel_stream import open_seekable

SIMPLE = "https://pypi.org/simple/{name}/"
_JSON = "application/vnd.pypi.simple.v1+json"
_CP = re.compile(r"^cp(\d)(\d+)$")
# the pin that names a build's CUDA: nvidia-cuda-runtime-cu12==12.1.105 (torch <= 2.10), cuda-toolkit==13.0.2 (2.11+)
_CUDART = re.compile(r"^(nvidia-cuda-runtime(-cu\d+)?|cuda-toolkit)$")
HEADER = ("# Frameworks' own dependency pins: each row is one release's Requires-Dist, read from the core metadata of\n"
          "# its CPython (else pure-Python) manylinux x86_64 wheel on PyPI (never by hand). Made and refreshed by\n"
          "#   python -m tools.kbrefresh.requires 'tensorflow>=1.15' 'tensorflow-gpu>=1.15,<2.12' \\\n"
          "#     'tensorflow-cpu>=2.1' 'torch>=1.4' 'torchvision>=0.5' 'torchaudio>=0.4' \\\n"
          "#     'jax>=0.4.26,<0.13' 'xformers>=0.0.22' 'bitsandbytes>=0.43,<0.51' 'cupy-cuda11x>=12,<14' \\\n"
          "#     'cupy-cuda12x>=12,<15' 'cupy-cuda13x>=14,<15' --into envgen/kb/data/framework_requires.yaml\n"
          "# (every release `envgen suggest` can pick: pytorch.yaml's from 1.4, tensorflow.yaml's from 1.15; the GPU\n"
          "# extensions.yaml rows with wheels; a pure-Python wheel's Pythons are its Requires-Python's); the\n"
          "# releases PyPI serves as an sdist only, from the sdist's PKG-INFO or egg-info/requires.txt (its source\n"
          "# says which), by\n"
          "#   python -m tools.kbrefresh.sdist_requires 'flash-attn>=2.0' 'deepspeed>=0.10' \\\n"
          "#     --into envgen/kb/data/framework_requires.yaml\n"
          "# `python`: the CPython minors a requirement's marker holds for on Linux x86_64\n"
          "# (absent: all the release's wheels); `extra`: the extra that brings it; `build`: the CUDA build the pins\n"
          "# belong to (from the nvidia-cuda-runtime pin), for PyTorch. Read by check/packages/combined.py.\n")


def _get(url: str, headers: dict[str, str] | None = None) -> bytes:
    request = urllib.request.Request(url, headers={"User-Agent": "envgen-kb-refresh", **(headers or {})})
    with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 (https URLs of PyPI only)
        return bytes(response.read())


def wheel_metadata(url: str, size: int) -> str:
    """The wheel's core metadata: PEP 658's ``.metadata`` file, else its METADATA member by range requests."""
    try:
        return _get(url + ".metadata").decode("utf-8")
    except OSError:
        pass
    with open_seekable(url, size) as handle, zipfile.ZipFile(handle) as wheel:
        member = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
        return wheel.read(member).decode("utf-8")


def _wheels(files: list[dict[str, Any]], name: str, version: str) -> Iterator[tuple[dict[str, Any], frozenset[Tag]]]:
    """The index entries of ``version``'s wheels that are not yanked, with their tags."""
    for entry in files:
        filename = entry["filename"]
        if not filename.endswith(".whl") or entry.get("yanked"):
            continue
        dist, wheel_version, _, tags = parse_wheel_filename(filename)
        if dist == canonicalize_name(name) and wheel_version == Version(version):
            yield entry, tags


def pick_wheels(files: list[dict[str, Any]], name: str, version: str) -> tuple[dict[str, Any], list[str]]:
    """The newest CPython manylinux x86_64 wheel of ``version``, and every CPython minor it has such wheels for."""
    chosen: list[tuple[tuple[int, int], dict[str, Any]]] = []
    for entry, tags in _wheels(files, name, version):
        for tag in tags:
            cp = _CP.match(tag.interpreter)
            if cp and "manylinux" in tag.platform and tag.platform.endswith("x86_64"):
                chosen.append(((int(cp.group(1)), int(cp.group(2))), entry))
    if not chosen:
        return _pure_wheel(files, name, version)
    pythons = sorted({py for py, _ in chosen})
    return max(chosen, key=lambda item: item[0])[1], [f"{a}.{b}" for a, b in pythons]


def _pure_wheel(files: list[dict[str, Any]], name: str, version: str) -> tuple[dict[str, Any], list[str]]:
    """A release with no CPython wheel (jax, bitsandbytes): its ``py3`` wheel for any or manylinux x86_64, and
    the CPython minors (3.6-3.14) its Requires-Python admits."""
    for entry, tags in _wheels(files, name, version):
        if any(t.interpreter == "py3" and (t.platform == "any" or (t.platform.startswith("manylinux")
                                                                    and t.platform.endswith("x86_64"))) for t in tags):
            spec = SpecifierSet(entry.get("requires-python") or "")
            return entry, [f"3.{m}" for m in range(6, 15) if spec.contains(f"3.{m}.0")]
    raise SystemExit(f"{name}=={version}: no CPython or pure-Python manylinux x86_64 wheel on the index")


def requirements(metadata: str, pythons: list[str]) -> list[dict[str, Any]]:
    """Requires-Dist of a core-metadata file, with the extra each needs and the Python minors it holds for."""
    message = email.parser.Parser().parsestr(metadata, headersonly=True)
    out = []
    for line in message.get_all("Requires-Dist") or []:
        req = Requirement(line)
        entry: dict[str, Any] = {"name": canonicalize_name(req.name)}
        if req.specifier:
            entry["spec"] = str(req.specifier)
        if req.marker is not None:
            extra = _extra(req.marker)
            holds = [py for py in pythons if _holds(req.marker, py, extra)]
            if not holds:
                continue  # not on Linux x86_64 (or no Python this release has wheels for)
            if extra:
                entry["extra"] = extra
            if holds != pythons:
                entry["python"] = holds
        out.append(entry)
    return sorted(out, key=lambda e: (e.get("extra", ""), e["name"]))


def _extra(marker: Marker) -> str:
    found = re.search(r"""extra\s*==\s*["']([^"']+)["']""", str(marker))
    return canonicalize_name(found.group(1)) if found else ""


def _holds(marker: Marker, python: str, extra: str) -> bool:
    env = {"python_version": python, "python_full_version": f"{python}.0", "sys_platform": "linux",
           "platform_system": "Linux", "platform_machine": "x86_64", "os_name": "posix",
           "implementation_name": "cpython", "platform_python_implementation": "CPython", "extra": extra}
    return marker.evaluate(env)


def cuda_build(reqs: list[dict[str, Any]]) -> str | None:
    """"cu121" from an exact nvidia-cuda-runtime-cu12==12.1.105 (or cuda-toolkit==13.0.2) pin, else None (a CPU
    or bundling build)."""
    for req in reqs:
        if _CUDART.match(req["name"]) and req.get("spec", "").startswith("==") and not req.get("extra"):
            major, minor_ = req["spec"][2:].split(".")[:2]
            return f"cu{major}{minor_}"
    return None


def row(name: str, version: str, wheel: str, sha256: str, metadata: str, pythons: list[str]) -> dict[str, Any]:
    reqs = requirements(metadata, pythons)
    out: dict[str, Any] = {"distribution": canonicalize_name(name), "version": version}
    build = cuda_build(reqs)
    if build and canonicalize_name(name) == "torch":
        out["build"] = build
    out |= {"python": pythons, "requires": reqs,
            "source": f"{wheel} (core metadata, Requires-Dist; sha256 {sha256})"}
    return out


def releases(files: list[dict[str, Any]], req: Requirement) -> list[str]:
    """The final releases in ``req``'s specifier that have a CPython manylinux x86_64 wheel, oldest first."""
    found: set[Version] = set()
    for entry in files:
        if not entry["filename"].endswith(".whl") or entry.get("yanked"):
            continue
        dist, version, _, tags = parse_wheel_filename(entry["filename"])
        linux = any((_CP.match(t.interpreter) or t.interpreter == "py3")
                    and (t.platform == "any" or ("manylinux" in t.platform and t.platform.endswith("x86_64")))
                    for t in tags)
        if dist == canonicalize_name(req.name) and linux and not version.is_prerelease and not version.local:
            found.add(version)
    return [str(v) for v in sorted(found) if req.specifier.contains(v)]


def fetch(spec: str) -> list[dict[str, Any]]:
    """Rows for ``name==version``, or for every release a specifier (``tensorflow>=2.1``) admits."""
    req = Requirement(spec)
    index = json.loads(_get(SIMPLE.format(name=canonicalize_name(req.name)), {"Accept": _JSON}))
    out = []
    for version in releases(index["files"], req):
        wheel, pythons = pick_wheels(index["files"], req.name, version)
        metadata = wheel_metadata(wheel["url"], int(wheel["size"]))
        sys.stderr.write(f"read {req.name}=={version}: {wheel['filename']}\n")
        out.append(row(req.name, version, wheel["url"], wheel["hashes"]["sha256"], metadata, pythons))
    return out


def key(r: dict[str, Any]) -> tuple[str, str, str]:
    return r["distribution"], r["version"], r.get("build", "")


def merge(path: Path, rows: list[dict[str, Any]]) -> str:
    """The file's rows with ``rows`` replacing those of the same key, sorted by distribution and version."""
    old = yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else None
    table = {key(r): r for r in (old or {}).get("framework_requires", [])}
    table |= {key(r): r for r in rows}
    ordered = sorted(table.values(), key=lambda r: (r["distribution"], Version(r["version"]), r.get("build", "")))
    return HEADER + yaml.safe_dump({"framework_requires": ordered}, sort_keys=False, width=120,
                                   default_flow_style=None)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.kbrefresh.requires", description=__doc__.split("\n")[0])
    parser.add_argument("specs", nargs="*", help="name==version, or a specifier (torch>=2.0) for every release")
    parser.add_argument("--into", type=Path, help="merge the rows into this data file instead of printing them")
    parser.add_argument("--metadata", type=Path, help="a saved core-metadata file instead of the index")
    parser.add_argument("--wheel", help="with --metadata: the wheel's URL#sha256=HEX it came from")
    parser.add_argument("--python", nargs="*", default=[], help="with --metadata: the CPython minors of its wheels")
    args = parser.parse_args(argv)
    if args.metadata:
        if not args.wheel or "#sha256=" not in args.wheel:
            parser.error("--metadata needs --wheel URL#sha256=HEX")
        url, _, sha = args.wheel.partition("#sha256=")
        dist, version, _, _ = parse_wheel_filename(url.rsplit("/", 1)[-1])
        rows = [row(str(dist), str(version), url, sha, args.metadata.read_text(encoding="utf-8"), args.python)]
    else:
        rows = [r for spec in args.specs for r in fetch(spec)]
    emit(merge(args.into, rows) if args.into else yaml.safe_dump({"framework_requires": rows}, sort_keys=False),
         args.into)
    return 0


def emit(text: str, into: Path | None) -> None:
    """Write the table to ``into``, or print it."""
    if into:
        into.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
