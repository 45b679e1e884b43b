"""Read the GPU architectures the serving engines' compiled kernels are built for, from the fat binaries in their
wheels, into ``engine_arches.yaml``.

Usage::

    python -m tools.kbrefresh.engine_arch [--budget-s 900] [--workers 3] [--into envgen/kb/data/engine_arches.yaml]
    python -m tools.kbrefresh.engine_arch 'vllm==0.19.1'
    python -m tools.kbrefresh.engine_arch sgl-kernel sglang-kernel --merge --into envgen/kb/data/engine_arches.yaml

The releases are those ``engine_requires.yaml`` holds (its rows name each wheel's URL and PyPI's sha256) for vLLM,
sgl-kernel and sglang-kernel. Each wheel is streamed once, front to back, without being written to disk
(``wheel_stream``: vLLM's ``_C.abi3.so`` alone is ~190 MB compressed); every shared object's fat binaries are
scanned (``fatbin.FatbinScanner``: entry headers only) and recorded per object: ``sm`` (the cubins, arch-specific
ones as ``sm_90a``) and ``ptx`` (``compute_XX``) of the object's build set, and ``kernels``: the other code sets
its fat binaries carry, each with how many carry it. The sha256 of the bytes read must equal PyPI's. The newest
release of each minor line is read first, then the others newest first, until ``--budget-s`` is spent; releases
left are listed in ``engine_arches_unread`` with the reason; ``--merge`` keeps the rows the file holds and reads only
the releases it does not hold. flashinfer-cubin ships raw ``.cubin`` files (one ELF
per kernel and architecture, no fat binary), so it is listed there too.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import yaml
from packaging.requirements import Requirement
from packaging.version import Version

from tools.kbrefresh import wheel_stream
from tools.kbrefresh.fatbin import ArchSummary, FatbinScanner, split_codes
from tools.kbrefresh.requires import emit

DISTRIBUTIONS = ("vllm", "sgl-kernel", "sglang-kernel")
ROWS = Path(__file__).resolve().parents[2] / "envgen" / "kb" / "data" / "engine_requires.yaml"
_SOURCE = re.compile(r"^(?P<url>https://\S+\.whl) .*sha256 (?P<sha>[0-9a-f]{64})", re.S)
_GRAFTED = re.compile(r"-[0-9a-f]{8}\.so")  # a library auditwheel copied in carries its vendor's arch lists
HEADER = ("# The GPU architectures of the serving engines' compiled kernels, per shared object of each release's\n"
          "# Linux x86_64 wheel, read from the fat binaries in it (entry headers: cubins `sm_XX`, arch-specific\n"
          "# cubins `sm_90a`, PTX `compute_XX`); never typed by hand. Made and refreshed by\n"
          "#   python -m tools.kbrefresh.engine_arch --into envgen/kb/data/engine_arches.yaml\n"
          "# `engine_arches_unread`: the releases (or distributions) not read, and why.\n"
          "# Read by check/engines/arch.py and suggest.\n")


def wheels(path: Path = ROWS, names: tuple[str, ...] = DISTRIBUTIONS) -> list[tuple[str, str, str, str]]:
    """(distribution, version, wheel URL, PyPI's sha256) of every release engine_requires.yaml records."""
    rows = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("engine_requires", [])
    out = []
    for row in rows:
        m = _SOURCE.match(row["source"])
        if row["distribution"] in names and m:
            out.append((row["distribution"], str(row["version"]), m.group("url"), m.group("sha")))
    return out


def order(found: list[tuple[str, str, str, str]]) -> list[tuple[str, str, str, str]]:
    """The newest release of each minor line first (newest lines first), then the others newest first."""
    newest = sorted(found, key=lambda w: Version(w[1]), reverse=True)
    firsts, seen = [], set()
    for w in newest:
        line = (w[0], Version(w[1]).release[:2])
        if line not in seen:
            seen.add(line)
            firsts.append(w)
    return firsts + [w for w in newest if w not in firsts]


def _wanted(name: str) -> bool:
    base = name.rsplit("/", 1)[-1]
    return ".so" in base and not _GRAFTED.search(base) and not name.startswith("nvidia/")


def summarise(name: str, fatbins: list[frozenset[str]]) -> dict[str, Any]:
    """An object's row: ``sm``/``ptx`` of its build's code set (``ArchSummary.build_set``: the most common set among
    its multi-architecture fat binaries, what the whole object is compiled for) and ``kernels``: every other code
    set and how many fat binaries carry it (kernels compiled for a few architectures only: sm_90a CUTLASS, FP8)."""
    summary = ArchSummary.of(fatbins)
    build = summary.build_set()
    sm, ptx = split_codes(build)
    row: dict[str, Any] = {"file": name, "sm": sm, "ptx": ptx, "fatbins": len(fatbins)}
    others = sorted(((codes, n) for codes, n in summary.sets.items() if codes != build),
                    key=lambda item: (-item[1], split_codes(item[0])))
    if others:
        row["kernels"] = [{"codes": [*split_codes(codes)[0], *split_codes(codes)[1]], "fatbins": n}
                          for codes, n in others]
    return row


def read(distribution: str, version: str, url: str, sha256: str) -> dict[str, Any]:
    """One release's row: the fat binaries of each shared object in its wheel."""
    scanners: dict[str, FatbinScanner] = defaultdict(lambda: FatbinScanner(variants=True))
    result = wheel_stream.stream(url, _wanted, lambda name, data: scanners[name].feed(data))
    if result.sha256 != sha256:
        raise ValueError(f"sha256 of the bytes read {result.sha256} != PyPI's {sha256}")
    objects = []
    for name in sorted(scanners):
        fatbins = scanners[name].fatbins
        if not fatbins:
            continue
        objects.append(summarise(name, fatbins))
    wheel = url.rsplit("/", 1)[-1]
    sys.stderr.write(f"read {distribution}=={version}: {len(objects)} objects, {result.size / 1e6:.0f} MB "
                     f"in {result.seconds:.1f} s\n")
    return {"distribution": distribution, "version": version, "objects": objects,
            "source": f"read from the wheel's fat binaries: {url} ({wheel}, sha256 {sha256}, equal to the bytes "
                      f"read; {result.size / 1e6:.0f} MB in {result.seconds:.0f} s; "
                      "python -m tools.kbrefresh.engine_arch)"}


def fetch(todo: list[tuple[str, str, str, str]], budget_s: float,
          workers: int) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """Read ``todo`` in order with ``workers`` streams until ``budget_s`` seconds are spent."""
    deadline = time.monotonic() + budget_s
    missed: list[dict[str, str]] = []

    def one(item: tuple[str, str, str, str]) -> dict[str, Any] | None:
        distribution, version, url, sha256 = item
        if time.monotonic() > deadline:
            missed.append({"distribution": distribution, "version": version, "source": url,
                           "why": f"not read: the refresh's bandwidth budget ({budget_s:.0f} s) was spent on newer "
                                  "releases (each wheel is streamed whole, 0.3-0.6 GB)"})
            return None
        try:
            return read(*item)
        except (OSError, ValueError) as err:
            missed.append({"distribution": distribution, "version": version, "source": url,
                           "why": f"not read ({type(err).__name__}: {err})"})
            return None

    with ThreadPoolExecutor(workers) as pool:
        rows = [r for r in pool.map(one, todo) if r is not None]
    return rows, missed


CUBIN_ONLY = {"distribution": "flashinfer-cubin",
              "source": "https://files.pythonhosted.org/packages/8a/79/7325af801aa7a4"
                        "704d5e35be7324d117d17739167e2fd1241c2e1d73499a/flashinfer_cubin-0.6.1-py3-none-any.whl",
              "why": "its wheels carry raw .cubin files (one ELF per kernel and architecture, its name ending in the "
                     "arch: flashinfer_cubin-0.6.1's central directory lists 5292 .cubin members such as "
                     "..._schedS_sm100f.cubin), not fat binaries in shared objects: not read by this scanner"}


def render(rows: list[dict[str, Any]], missed: list[dict[str, str]]) -> str:
    def key(r: dict[str, str]) -> tuple[str, Version]:
        return r["distribution"], Version(r.get("version", "0"))

    return HEADER + yaml.safe_dump({"engine_arches": sorted(rows, key=key),
                                    "engine_arches_unread": sorted(missed, key=key) + [CUBIN_ONLY]},
                                   sort_keys=False, width=120, default_flow_style=None)


def _kept(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """The rows and the unread releases a data file already holds (``--merge``)."""
    doc = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return doc.get("engine_arches", []), doc.get("engine_arches_unread", [])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.kbrefresh.engine_arch",
                                     description=(__doc__ or "").split("\n")[0])
    parser.add_argument("specs", nargs="*", help="names or specifiers (vllm>=0.19); default: all three")
    parser.add_argument("--budget-s", type=float, default=900.0, help="stop starting new wheels after this long")
    parser.add_argument("--workers", type=int, default=3, help="wheels streamed at once")
    parser.add_argument("--into", type=Path, help="write the rows into this data file instead of printing them")
    parser.add_argument("--merge", action="store_true",
                        help="keep the rows --into holds and read only the releases it lists as unread")
    args = parser.parse_args(argv)
    found = wheels()
    if args.specs:
        reqs = [Requirement(s) for s in args.specs]
        found = [w for w in found if any(r.name == w[0] and r.specifier.contains(w[1]) for r in reqs)]
    kept, kept_unread = _kept(args.into) if args.merge and args.into else ([], [])
    done = {(r["distribution"], str(r["version"])) for r in kept}
    found = [w for w in found if (w[0], w[1]) not in done]
    started = time.monotonic()
    rows, missed = fetch(order(found), args.budget_s, args.workers)
    tried = {(w[0], w[1]) for w in found}
    rows += kept
    missed += [u for u in kept_unread if "version" in u and (u["distribution"], str(u["version"])) not in tried]
    sys.stderr.write(f"{len(rows)} releases read, {len(missed)} not, in {time.monotonic() - started:.0f} s\n")
    emit(render(rows, missed), args.into)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
