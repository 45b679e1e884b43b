"""What building an sdist needs (a Rust toolchain, a Fortran or C compiler, nvcc), read from the sdist itself: the
suffixes of its members and the names in its pyproject.toml ``[build-system] requires``, matched against
``build_needs.json``. The answer is kept per sdist sha256 in envgen's cache (an sdist never changes)."""

from __future__ import annotations

import contextlib
import io
import json
import re
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envgen.files import write_atomically
from envgen.pypi import File, Index, IndexUnreachable

LIMIT = 120 * 1024 * 1024  # scipy 1.13.1's sdist is 57 MB
_TESTS = re.compile(r"/(tests?|testing|check|docs?|examples?|benchmarks?)/")


@dataclass(frozen=True)
class Need:
    need: str
    apt: tuple[str, ...]
    devel_base: bool
    source: str


def _table() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads((Path(__file__).with_name("build_needs.json")).read_text("utf-8"))["needs"]
    return rows


def _names_and_requires(body: bytes, filename: str) -> tuple[list[str], list[str]]:
    """Member names and the build-system requires of the top-level pyproject.toml of an sdist's bytes."""
    names: list[str] = []
    pyproject = b""
    if filename.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(body)) as archive:
            names = archive.namelist()
            top = [n for n in names if n.count("/") == 1 and n.endswith("/pyproject.toml")]
            pyproject = archive.read(top[0]) if top else b""
    else:
        with tarfile.open(fileobj=io.BytesIO(body), mode="r:*") as archive:
            for member in archive:
                names.append(member.name)
                if member.isfile() and member.name.count("/") == 1 and member.name.endswith("/pyproject.toml"):
                    handle = archive.extractfile(member)
                    pyproject = handle.read() if handle else b""
    requires: list[str] = []
    with contextlib.suppress(Exception):  # an unreadable pyproject.toml says nothing
        try:
            import tomllib
        except ModuleNotFoundError:  # Python 3.10
            import tomli as tomllib  # type: ignore[no-redef]
        requires = [str(r) for r in tomllib.loads(pyproject.decode()).get("build-system", {}).get("requires", [])]
    return names, requires


def _match(names: list[str], requires: list[str]) -> list[dict[str, Any]]:
    required = {re.split(r"[\s<>=!~;\[]", r.strip(), maxsplit=1)[0].lower().replace("_", "-") for r in requires}
    out = []
    built = [n for n in names if not _TESTS.search(n)]  # a test's data file (numba's .cu samples) is not built
    for row in _table():
        by_file = next((n for n in built if any(n.endswith(s) for s in row["suffixes"])), None)
        by_requires = sorted(required & set(row["build_requires"]))
        if by_file or by_requires:
            why = f"its file {by_file}" if by_file else f"build-system requires {', '.join(by_requires)}"
            out.append({"need": row["need"], "apt": row["apt"], "devel_base": row.get("devel_base", False),
                        "source": row["source"], "why": why})
    return out


def sdist_needs(index: Index, f: File) -> list[tuple[Need, str]]:
    """(need, what in the sdist says so) for sdist ``f``; empty for a pure-Python one. Raises IndexUnreachable when
    it cannot be read."""
    kept = None
    path = index.cache / "pypi" / f"sdist-{f.sha256}.json" if index.cache else None
    if path is not None:
        with contextlib.suppress(OSError, ValueError):
            kept = json.loads(path.read_bytes())
    if kept is None:
        if index.offline:
            raise IndexUnreachable(f"offline: {f.filename} was never read", fix="run once with the index reachable")
        kept = _match(*_names_and_requires(index.download(f, LIMIT), f.filename))
        if path is not None:
            with contextlib.suppress(OSError):
                write_atomically(path, json.dumps(kept, sort_keys=True))
    return [(Need(r["need"], tuple(r["apt"]), bool(r["devel_base"]), r["source"]), r["why"]) for r in kept]


def image_has(need: Need, apt: list[str], base: str) -> bool:
    """Whether the image can meet ``need``: one of its Debian packages in ``apt``, or a CUDA devel base for nvcc."""
    return bool(set(need.apt) & set(apt)) or (need.devel_base and "devel" in base)
