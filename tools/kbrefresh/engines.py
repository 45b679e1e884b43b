"""Record the serving engines' own pins (vLLM, SGLang) and their kernel packages' (sgl-kernel, FlashInfer) from
the wheels PyPI serves into ``engine_requires.yaml``.

Usage::

    python -m tools.kbrefresh.engines [--since 2024-12-01] [--into envgen/kb/data/engine_requires.yaml]
    python -m tools.kbrefresh.engines 'vllm==0.11.0' 'sglang>=0.5'

For every final release uploaded since ``--since`` (default: two years before today) it picks the release's
Linux x86_64 wheel (a CPython manylinux one, an ``abi3`` one, or a pure ``py3-none-any`` one), reads its core
metadata as ``requires.py`` does (PEP 658 file, else the ``*.dist-info/METADATA`` member by HTTP range requests,
never the whole wheel) and keeps ``Requires-Python`` and the Requires-Dist lines of the chain: torch and its
companions, xformers, triton, FlashInfer, sgl-kernel, the NVIDIA CUDA wheels. ``python``: the CPython minors
(3.8-3.14) the wheel installs for (its tags, and ``Requires-Python``). ``build``: the CUDA build the PyPI wheel
carries: its own exact ``nvidia-cuda-runtime``/``cuda-toolkit`` pin, else the build of the torch it pins exactly,
read from that torch wheel's row in ``framework_requires.yaml`` (``build_from`` says which). Nothing is typed by
hand; every row's ``source`` names the wheel and its sha256 from PyPI's index.
"""

from __future__ import annotations

import argparse
import datetime
import email.parser
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

from tools.kbrefresh.requires import (
    _CP,
    _JSON,
    SIMPLE,
    _extra,
    _get,
    cuda_build,
    emit,
    requirements,
    wheel_metadata,
)

ENGINES = ("vllm", "sglang", "sgl-kernel", "sglang-kernel", "flashinfer-python", "flashinfer-cubin",
           "flashinfer-jit-cache")
# the Requires-Dist lines kept: the chain a serving engine brings (the rest are ordinary Python libraries)
CHAIN = frozenset({"torch", "torchvision", "torchaudio", "xformers", "triton", "flashinfer-python", "flashinfer",
                   "flashinfer-cubin", "flashinfer-jit-cache", "sgl-kernel", "sglang-kernel", "vllm", "cuda-python",
                   "cuda-toolkit", "nvidia-cutlass-dsl", "flash-attn", "deep-gemm", "xgrammar"})
MINORS = [f"3.{m}" for m in range(8, 15)]
TORCH_ROWS = Path(__file__).resolve().parents[2] / "envgen" / "kb" / "data" / "framework_requires.yaml"
HEADER = ("# Serving engines' own pins (vLLM, SGLang) and their kernel packages' (sgl-kernel, FlashInfer): each row\n"
          "# is one release's Requires-Python and the Requires-Dist lines of its chain, read from the core metadata\n"
          "# of its Linux x86_64 wheel on PyPI (never typed by hand). Made and refreshed by\n"
          "#   python -m tools.kbrefresh.engines --since 2024-12-01 --into envgen/kb/data/engine_requires.yaml\n"
          "# `python`: the CPython minors the wheels install for; `build`: the CUDA build the PyPI wheel carries\n"
          "# (its own nvidia/cuda-toolkit pin, else its exact torch pin's build: `build_from`); an extra that\n"
          "# includes another (sglang[all] -> [srt]) repeats its lines. `engine_unread`: what could not be read.\n"
          "# Read by check/engines/pins.py and check/engines/kernels.py.\n")


def _linux_wheel(filename: str) -> tuple[str, Version, list[str]] | None:
    """(name, version, the minors its tags admit) of a wheel that installs on CPython Linux x86_64, else None."""
    dist, version, _, tags = parse_wheel_filename(filename)
    minors: set[str] = set()
    for tag in tags:
        linux = tag.platform == "any" or ("linux" in tag.platform and tag.platform.endswith("x86_64"))
        cp = _CP.match(tag.interpreter)
        if not linux:
            continue
        if tag.interpreter.startswith("py3"):
            minors |= set(MINORS)
        elif cp and tag.abi == "abi3":
            minors |= {m for m in MINORS if Version(m) >= Version(f"{cp.group(1)}.{cp.group(2)}")}
        elif cp:
            minors.add(f"{cp.group(1)}.{cp.group(2)}")
    return (str(dist), version, sorted(minors, key=Version)) if minors else None


def pick(files: list[dict[str, Any]], since: str) -> dict[Version, tuple[dict[str, Any], list[str]]]:
    """Per final release uploaded since ``since``: its Linux x86_64 wheel for the newest CPython (the one whose
    metadata is read), and every minor its Linux wheels install for."""
    found: dict[Version, list[tuple[str, dict[str, Any], list[str]]]] = {}
    for entry in files:
        name = entry["filename"]
        if not name.endswith(".whl") or entry.get("yanked") or entry.get("upload-time", "")[:10] < since:
            continue
        wheel = _linux_wheel(name)
        if wheel is None or wheel[1].is_prerelease or wheel[1].local:
            continue
        found.setdefault(wheel[1], []).append((wheel[2][-1], entry, wheel[2]))
    out = {}
    for version, wheels in found.items():
        minors = sorted({m for _, _, ms in wheels for m in ms}, key=Version)
        out[version] = (max(wheels, key=lambda w: (Version(w[0]), w[1]["filename"]))[1], minors)
    return out


def _self_extras(name: str, metadata: str, reqs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``reqs`` with the extras a release includes in another (``sglang[srt]; extra == "all"``) expanded: the
    included extra's lines again, under the including extra."""
    message = email.parser.Parser().parsestr(metadata, headersonly=True)
    includes: dict[str, set[str]] = {}
    for line in message.get_all("Requires-Dist") or []:
        req = Requirement(line)
        if canonicalize_name(req.name) == canonicalize_name(name) and req.marker is not None:
            outer = _extra(req.marker)
            includes.setdefault(outer, set()).update(canonicalize_name(e) for e in req.extras)
    out = list(reqs)
    for _ in range(len(includes)):  # enough passes for a chain of includes
        seen = {(r["name"], r.get("spec", ""), r.get("extra", "")) for r in out}
        for outer, inner in includes.items():
            for r in list(out):
                if r.get("extra") in inner and (r["name"], r.get("spec", ""), outer) not in seen:
                    out.append({**r, "extra": outer})
                    seen.add((r["name"], r.get("spec", ""), outer))
    return sorted(out, key=lambda e: (e.get("extra", ""), e["name"], e.get("spec", "")))


def read_row(name: str, version: Version, entry: dict[str, Any], minors: list[str],
             torch_builds: dict[str, str]) -> dict[str, Any]:
    """One release's row, its wheel's core metadata read from PyPI."""
    metadata = wheel_metadata(entry["url"], int(entry["size"])) if entry.get("core-metadata") else \
        _member_metadata(entry["url"], int(entry["size"]))
    sys.stderr.write(f"read {name}=={version}: {entry['filename']}\n")
    return row_of(name, str(version), entry, minors, torch_builds, metadata)


def row_of(name: str, version: str, entry: dict[str, Any], minors: list[str], torch_builds: dict[str, str],
           metadata: str) -> dict[str, Any]:
    """One release's row from its wheel's index entry and core metadata."""
    message = email.parser.Parser().parsestr(metadata, headersonly=True)
    window = message.get("Requires-Python") or ""
    pythons = [m for m in minors if not window or SpecifierSet(window).contains(m + ".0")]
    reqs = [r for r in _self_extras(name, metadata, requirements(metadata, pythons))
            if r["name"] in CHAIN or r["name"].startswith(("nvidia-", "cuda-"))]
    row: dict[str, Any] = {"distribution": canonicalize_name(name), "version": version}
    if window:
        row["requires_python"] = window
    build, build_from = cuda_build(reqs), ""
    # the torch it pins exactly: unextra'd, else the one release every extra that pins torch exactly agrees on
    exact = {r["spec"][2:] for r in reqs if r["name"] == "torch" and r.get("spec", "").startswith("==")
             and "," not in r["spec"]}
    torch = next((r["spec"][2:] for r in reqs if r["name"] == "torch" and not r.get("extra")
                  and r.get("spec", "").startswith("==") and "," not in r["spec"]),
                 next(iter(exact)) if len(exact) == 1 else None)
    if build is None and torch is not None and torch in torch_builds:
        build, build_from = torch_builds[torch], f"torch=={torch}: that wheel's row in framework_requires.yaml"
    if build:
        row["build"] = build
        if build_from:
            row["build_from"] = build_from
    return row | {"python": pythons, "requires": reqs,
                  "source": f"{entry['url']} (core metadata, Requires-Python and Requires-Dist; "
                            f"sha256 {entry['hashes']['sha256']})"}


def _member_metadata(url: str, size: int) -> str:
    """The METADATA member by range requests (no ``.metadata`` request first: the index says there is none)."""
    import zipfile

    from tools.kbrefresh.wheel_stream import open_seekable

    with open_seekable(url, size) as handle, zipfile.ZipFile(handle) as wheel:
        member = next(n for n in wheel.namelist() if n.endswith(".dist-info/METADATA") and n.count("/") == 1)
        return wheel.read(member).decode("utf-8")


def torch_builds(path: Path = TORCH_ROWS) -> dict[str, str]:
    """torch version -> the CUDA build of its PyPI wheel, from the torch rows ``requires.py`` read."""
    rows = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("framework_requires", [])
    return {str(r["version"]): r["build"] for r in rows if r["distribution"] == "torch" and r.get("build")}


Unread = dict[str, str]


def fetch(spec: str, since: str, builds: dict[str, str],
          workers: int = 24) -> tuple[list[dict[str, Any]], list[Unread]]:
    """Rows for every release of ``spec`` (a name or a specifier) uploaded since ``since``, and what was not read."""
    req = Requirement(spec)
    try:
        index = json.loads(_get(SIMPLE.format(name=canonicalize_name(req.name)), {"Accept": _JSON}))
    except OSError as err:
        return [], [{"distribution": canonicalize_name(req.name), "why": f"PyPI's simple index answered {err}: "
                     "not published there (its wheels live on the project's own index, not read here)",
                     "source": SIMPLE.format(name=canonicalize_name(req.name))}]
    chosen = {v: e for v, e in pick(index["files"], since).items() if req.specifier.contains(v)}
    missed: list[dict[str, str]] = []

    def one(version: Version) -> dict[str, Any] | None:
        entry, minors = chosen[version]
        try:
            return read_row(req.name, version, entry, minors, builds)
        except (OSError, KeyError, StopIteration, ValueError) as err:
            missed.append({"distribution": canonicalize_name(req.name), "version": str(version),
                           "why": f"core metadata not read ({type(err).__name__}: {err})", "source": entry["url"]})
            return None

    with ThreadPoolExecutor(workers) as pool:
        rows = [r for r in pool.map(one, sorted(chosen)) if r is not None]
    return rows, sorted(missed, key=lambda m: Version(m.get("version", "0")))


def render(rows: list[dict[str, Any]], missed: list[Unread]) -> str:
    ordered = sorted(rows, key=lambda r: (r["distribution"], Version(r["version"])))
    return HEADER + yaml.safe_dump({"engine_requires": ordered, "engine_unread": missed},
                                   sort_keys=False, width=120, default_flow_style=None)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.kbrefresh.engines", description=__doc__.split("\n")[0])
    parser.add_argument("specs", nargs="*", default=list(ENGINES), help="names or specifiers (vllm>=0.8)")
    parser.add_argument("--since", default=str(datetime.date.today() - datetime.timedelta(days=730)),
                        help="the oldest upload date read (YYYY-MM-DD)")
    parser.add_argument("--into", type=Path, help="write the rows into this data file instead of printing them")
    args = parser.parse_args(argv)
    builds = torch_builds()
    rows: list[dict[str, Any]] = []
    missed: list[Unread] = []
    for spec in args.specs:
        got, lost = fetch(spec, args.since, builds)
        rows += got
        missed += lost
    emit(render(rows, missed), args.into)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
