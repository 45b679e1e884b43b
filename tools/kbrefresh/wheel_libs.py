"""The shared libraries a binary wheel's objects ask the loader for, read from their ELF dynamic segments by range
reads of the wheel, into ``wheel_libraries.yaml``.

Usage::

    python -m tools.kbrefresh.wheel_libs [--python cp311] [--platform manylinux_x86_64] \\
        [--into envgen/kb/data/wheel_libraries.yaml] 'cupy-cuda12x==13.3.0' ...

For each release, the wheels PyPI lists for the Python tags and platform given are read: the zip central directory
(the wheel's last bytes), then of every shared object only what the loader reads (its program headers, its dynamic
segment and string table: ``elf_dynamic``, inflated by ``member_source`` as far as the dynamic segment). The sha256
recorded is PyPI's (the whole file is not read, so it cannot be hashed here). A wheel read once is kept in envgen's
cache directory by that sha256 (``wheel-libs/<sha256>.v2.json``) and never read again. Each row: the distribution, its
version, the wheel's file name, URL and sha256, the NVIDIA library wheels its metadata requires (their libraries come
with it), and per object its file, ``soname`` and ``needed`` (DT_NEEDED).
"""

from __future__ import annotations

import argparse
import email.parser
import json
import os
import re
import sys
import time
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

import yaml

from tools.kbrefresh import wheel_stream
from tools.kbrefresh.elf_dynamic import NotElf, read_dynamic
from tools.kbrefresh.member_source import MemberSource

PYPI_JSON = "https://pypi.org/pypi/{name}/json"
_OBJECT = re.compile(r"\.so(\.[0-9]+)*$")
HEADER = ("# The shared libraries each binary wheel's objects load (DT_NEEDED), read from their ELF dynamic segments\n"
          "# by range reads of the wheel; never typed by hand. Made and refreshed by\n"
          "#   python -m tools.kbrefresh.wheel_libs --into envgen/kb/data/wheel_libraries.yaml NAME==VERSION...\n"
          "# Read by plan/wheel_needs.py: check's wheel-lib-missing and the probe's library tier.\n")


def _json(url: str) -> Any:
    request = urllib.request.Request(url, headers={"User-Agent": "envgen-kb-refresh"})
    with urllib.request.urlopen(request, timeout=120) as response:  # noqa: S310 (https URLs of PyPI only)
        return json.load(response)


def _absolute(url: str) -> str:
    """PyPI's file URL; a mirror's JSON may give it relative (``../../packages/packages/92/2e/<hash>/<file>``)."""
    m = re.search(r"packages/([0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]+/[^/]+)$", url)
    return url if url.startswith("https://") or not m else f"https://files.pythonhosted.org/packages/{m.group(1)}"


def release_wheels(name: str, version: str, pythons: set[str], platform: str) -> list[dict[str, Any]]:
    """PyPI's files of one release whose tags fit: a listed CPython (or abi3 / py3), the platform's machine."""
    files = _json(PYPI_JSON.format(name=name))["releases"].get(version) or []
    arch = next((a for a in ("x86_64", "aarch64") if platform.endswith(a)), platform)
    out = []
    for f in files:
        stem = f["filename"][:-4] if f["filename"].endswith(".whl") else ""
        parts = stem.split("-")
        if len(parts) < 5 or "linux" not in parts[-1] or not parts[-1].endswith(arch):
            continue
        python, abi = parts[-3], parts[-2]
        if python in pythons or abi == "abi3" or python.startswith("py3"):
            out.append(dict(f, url=_absolute(f["url"])))
    return out


def nvidia_requires(metadata: str) -> list[str]:
    """The Requires-Dist lines of NVIDIA's library wheels a plain install of the wheel pulls in (none under an
    extra), as written: their libraries are in the image whenever the wheel is."""
    message = email.parser.Parser().parsestr(metadata, headersonly=True)
    lines = [" ".join(line.split()) for line in message.get_all("Requires-Dist") or []]
    return [line for line in lines if line.lower().startswith("nvidia-") and "extra" not in line.partition(";")[2]]


def read_objects(source: str) -> tuple[list[dict[str, Any]], int, list[str]]:
    """Every shared object of the wheel at ``source`` (a path or an https URL): file, soname, needed; the
    compressed bytes read; the NVIDIA wheels its metadata requires (``nvidia_requires``)."""
    size, members = wheel_stream.central_directory(source)
    objects, read, requires = [], 0, []
    with wheel_stream.open_seekable(source, size) as handle:
        metadata = next((m for m in members if re.fullmatch(r"[^/]+\.dist-info/METADATA", m.name)), None)
        if metadata is not None:
            requires = nvidia_requires(MemberSource(handle, metadata).span(0, 1 << 24).decode("utf-8", "replace"))
        for member in sorted(members, key=lambda m: m.name):
            if not _OBJECT.search(member.name) or member.method not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                continue
            src = MemberSource(handle, member)
            try:
                dynamic = read_dynamic(src)
            except NotElf:
                dynamic = None
            read += src.compressed_read
            if dynamic is None:
                continue
            row: dict[str, Any] = {"file": member.name}
            if dynamic.soname:
                row["soname"] = dynamic.soname
            row["needed"] = list(dynamic.needed)
            objects.append(row)
    return objects, read, requires


def _cache(sha256: str) -> Path | None:
    from envgen.kb.cache import cache_dir

    base = cache_dir(os.environ)
    return None if base is None else base / "wheel-libs" / f"{sha256}.v2.json"


def read_wheel(name: str, version: str, file: dict[str, Any]) -> dict[str, Any]:
    """One wheel's row, from the cache by sha256 or read by range requests."""
    sha = file["digests"]["sha256"]
    cached = _cache(sha)
    if cached is not None and cached.is_file():
        return dict(json.loads(cached.read_text(encoding="utf-8")))
    started = time.monotonic()
    objects, read, requires = read_objects(file["url"])
    seconds = time.monotonic() - started
    row = {"distribution": name, "version": version, "wheel": file["filename"], "objects": objects,
           "nvidia_requires": requires,
           "source": f"read from the wheel's ELF dynamic segments: {file['url']} (sha256 {sha}, PyPI's; "
                     f"{read / 1e6:.1f} of {file['size'] / 1e6:.1f} MB read by range requests; "
                     "python -m tools.kbrefresh.wheel_libs)"}
    sys.stderr.write(f"read {file['filename']}: {len(objects)} objects, {read / 1e6:.1f} MB in {seconds:.1f} s\n")
    if cached is not None:
        from envgen.files import write_atomically

        cached.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(cached, json.dumps(row, sort_keys=True))
    return row


def merge(path: Path, rows: list[dict[str, Any]]) -> None:
    """Write ``rows`` into the table at ``path``, replacing rows of the same wheel; sorted by distribution, version
    and wheel."""
    old = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("wheel_libraries", []) if path.exists() else []
    by_wheel = {r["wheel"]: r for r in old}
    by_wheel.update({r["wheel"]: r for r in rows})
    keys = ("distribution", "version", "wheel", "nvidia_requires", "objects", "source")
    ordered = [{k: r[k] for k in keys} for r in sorted(by_wheel.values(),
                                                       key=lambda r: (r["distribution"], r["version"], r["wheel"]))]
    text = HEADER + yaml.safe_dump({"wheel_libraries": ordered}, sort_keys=False, width=120, default_flow_style=None)
    from envgen.files import write_atomically

    write_atomically(path, text)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.kbrefresh.wheel_libs")
    parser.add_argument("releases", nargs="+", help="NAME==VERSION")
    parser.add_argument("--python", action="append", default=[], help="CPython tag, e.g. cp311 (repeatable)")
    parser.add_argument("--platform", default="manylinux_x86_64")
    parser.add_argument("--into", type=Path)
    args = parser.parse_args(argv)
    rows = []
    for spec in args.releases:
        name, _, version = spec.partition("==")
        files = release_wheels(name.strip().lower(), version.strip(), set(args.python or ["cp311"]), args.platform)
        if not files:
            sys.stderr.write(f"{spec}: no wheel for {args.python or ['cp311']} {args.platform} on PyPI\n")
            return 1
        rows += [read_wheel(name.strip().lower(), version.strip(), f) for f in files]
    if args.into:
        merge(args.into, rows)
    else:
        sys.stdout.write(yaml.safe_dump(rows, sort_keys=False, width=120))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
