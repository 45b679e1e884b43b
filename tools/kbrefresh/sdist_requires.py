"""Record the Requires-Dist of releases PyPI serves as an sdist only (flash-attn, deepspeed) into the KB.

Usage::

    python -m tools.kbrefresh.sdist_requires 'flash-attn>=2.0' 'deepspeed>=0.10' [--into FILE]

For each final release a specifier admits that has a ``.tar.gz`` sdist on PyPI's simple index (PEP 691 JSON), the
sdist is downloaded, its sha256 checked against the index, and its requirements read from the sdist itself, never
typed: the top-level ``PKG-INFO``'s ``Requires-Dist`` where its Metadata-Version is 2.2 or later and does not
declare ``Requires-Dist`` dynamic (PEP 643: then the field is what any build of it declares), else setuptools'
record of ``install_requires`` in ``*.egg-info/requires.txt`` (``[extra]`` / ``[:marker]`` sections turned into
markers), which a ``setup.py`` computing its requirements at install time may not match: the row's source says
which file and line it was read from. The Python minors are those the sdist's Requires-Python admits (3.6-3.14).
Rows go to ``framework_requires.yaml`` beside the wheels' (``requires.merge``), read by check/packages/combined.py.
"""

from __future__ import annotations

import argparse
import email.parser
import hashlib
import io
import json
import sys
import tarfile
from pathlib import Path
from typing import Any

import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from tools.kbrefresh.requires import _JSON, SIMPLE, _get, emit, merge, requirements


def sdists(files: list[dict[str, Any]], req: Requirement) -> list[dict[str, Any]]:
    """The index entries of the final releases in ``req``'s specifier that have a .tar.gz sdist, oldest first."""
    found: dict[Version, dict[str, Any]] = {}
    for entry in files:
        if entry.get("yanked") or not entry["filename"].endswith(".tar.gz"):
            continue
        try:
            version = _version(entry, req.name)
        except InvalidVersion:
            continue
        if version is None:
            continue
        if not version.is_prerelease and not version.is_devrelease and req.specifier.contains(version):
            found[version] = entry
    return [found[v] for v in sorted(found)]


def _version(entry: dict[str, Any], name: str) -> Version | None:
    """The release an sdist's file name (``flash_attn-2.8.3.tar.gz``) holds, None for another project's."""
    project, _, version = entry["filename"][: -len(".tar.gz")].rpartition("-")
    return Version(version) if canonicalize_name(project) == canonicalize_name(name) else None


def _member(tar: tarfile.TarFile, suffix: str) -> tuple[str, str] | None:
    """The text of the member ``<top>/<suffix>`` (suffix may hold one ``*`` directory), or None."""
    for info in tar.getmembers():
        parts = info.name.split("/")
        want = suffix.split("/")
        if len(parts) == len(want) + 1 and all(w in ("*", p) or (w.startswith("*") and p.endswith(w[1:]))
                                                for w, p in zip(want, parts[1:], strict=True)):
            handle = tar.extractfile(info)
            if handle is not None:
                return info.name, handle.read().decode("utf-8")
    return None


def requires_txt_as_metadata(text: str) -> str:
    """setuptools' requires.txt (``[extra]``, ``[:marker]``, ``[extra:marker]`` sections) as Requires-Dist lines."""
    lines, extra, marker = [], "", ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            extra, _, marker = line.strip("[]").partition(":")
            continue
        conditions = [f"({marker})"] if marker else []
        conditions += [f'extra == "{extra}"'] if extra else []
        lines.append(f"Requires-Dist: {line}" + (f"; {' and '.join(conditions)}" if conditions else ""))
    return "\n".join(lines) + "\n"


def read_requirements(data: bytes) -> tuple[str, str, str]:
    """(core metadata holding the requirements, the member read, what it is) of an sdist's bytes."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        found = _member(tar, "PKG-INFO")
        if found is None:
            raise SystemExit("no top-level PKG-INFO in the sdist")
        member, pkg_info = found
        head = email.parser.Parser().parsestr(pkg_info, headersonly=True)
        version = Version(head.get("Metadata-Version", "1.0"))
        dynamic = {d.strip().lower() for d in head.get_all("Dynamic") or []}
        if version >= Version("2.2") and "requires-dist" not in dynamic:
            return pkg_info, member, f"PKG-INFO Metadata-Version {version}, Requires-Dist static"
        egg = _member(tar, "*.egg-info/requires.txt")
        if egg is None:
            return pkg_info, member, f"PKG-INFO Metadata-Version {version}; no egg-info/requires.txt"
        return requires_txt_as_metadata(egg[1]), egg[0], "setuptools' install_requires record"


def _lines(text: str, member: str) -> str:
    """"lines 3-7": where the requirements stand in the member read (Requires-Dist fields, or requires.txt lines)."""
    def holds(line: str) -> bool:
        if member.endswith("PKG-INFO"):
            return line.startswith("Requires-Dist:")
        return bool(line.strip()) and not line.startswith(("[", "#"))
    found = [n for n, line in enumerate(text.splitlines(), 1) if holds(line)]
    return f"lines {found[0]}-{found[-1]}" if found else "no requirement lines"


def row(name: str, entry: dict[str, Any], data: bytes) -> dict[str, Any]:
    metadata, member, kind = read_requirements(data)
    spec = SpecifierSet(entry.get("requires-python") or "")
    pythons = [f"3.{m}" for m in range(6, 15) if spec.contains(f"3.{m}.0")]
    reqs = requirements(metadata, pythons)
    version = _version(entry, name)
    where = member.split("/", 1)[1]
    sha = entry["hashes"]["sha256"]
    read = f"{where} {_lines(_text(data, member), member)}, {kind}"
    return {"distribution": canonicalize_name(name), "version": str(version), "sdist": True, "python": pythons,
            "requires": reqs, "source": f"{entry['url'].split('#')[0]} (sdist only: {read}; sha256 {sha})"}


def _text(data: bytes, member: str) -> str:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        handle = tar.extractfile(member)
        return handle.read().decode("utf-8") if handle else ""


def fetch(spec: str) -> list[dict[str, Any]]:
    req = Requirement(spec)
    index = json.loads(_get(SIMPLE.format(name=canonicalize_name(req.name)), {"Accept": _JSON}))
    out = []
    for entry in sdists(index["files"], req):
        data = _get(entry["url"])
        if hashlib.sha256(data).hexdigest() != entry["hashes"]["sha256"]:
            raise SystemExit(f"{entry['filename']}: sha256 differs from the index")
        sys.stderr.write(f"read {entry['filename']}\n")
        out.append(row(req.name, entry, data))
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.kbrefresh.sdist_requires",
                                     description=(__doc__ or "").split("\n")[0])
    parser.add_argument("specs", nargs="+", help="name==version, or a specifier (deepspeed>=0.18)")
    parser.add_argument("--into", type=Path, help="merge the rows into this data file instead of printing them")
    args = parser.parse_args(argv)
    rows = [r for spec in args.specs for r in fetch(spec)]
    emit(merge(args.into, rows) if args.into else yaml.safe_dump({"framework_requires": rows}, sort_keys=False),
         args.into)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
