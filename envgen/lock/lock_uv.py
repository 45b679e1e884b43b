"""Resolve a pip set for the image's platform with uv (`uv pip compile`), for Python >= 3.8 targets.

uv resolves for another platform from the index metadata alone (`--python-platform`,
`--python-version`), much faster than pip's download-everything dry run. It writes a PEP 751
``pylock.toml``: every candidate file of each chosen version, with URL and sha256. envgen keeps one
wheel per package, the one the image's installer picks (the best wheel tag the image supports), so
the lock names exactly the archive that will be installed. Python 3.7 targets stay with pip (uv
supports Python >= 3.8): `envgen.lock.lock.resolve`.

uv trusts the proxy CA through ``SSL_CERT_FILE`` (set from the config's ``ca_bundle`` when the
environment has none).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from envgen.errors import BuildFailed, InputError
from envgen.plan.lockfile import LockEntry
from envgen.profile.requirements import canonical as canonical_name
from envgen.vocabulary import GLIBC_WHEN_UNKNOWN

Runner = Callable[[list[str], Mapping[str, str]], "subprocess.CompletedProcess[str]"]
UV_MIN_PYTHON = (3, 8)
UV_NEWEST_GLIBC = (2, 40)  # the newest x86_64-manylinux_2_N `uv pip compile --python-platform` names (uv 0.13)


@dataclass(frozen=True)
class Resolved:
    entries: dict[str, LockEntry]
    urls: dict[str, str]  # name -> URL of the chosen wheel
    newest_upload: int | None  # epoch seconds of the newest chosen archive (SOURCE_DATE_EPOCH)
    sdists: tuple[str, ...] = ()  # "name==version" with no wheel for the image, only an sdist (pip builds it)


def uv_serves(python_minor: str) -> bool:
    major, minor = (int(p) for p in python_minor.split(".")[:2])
    return (major, minor) >= UV_MIN_PYTHON


def uv_binary() -> str:
    """The uv executable: the one installed beside this Python (the `uv` dependency), else PATH."""
    here = Path(sys.executable).parent / "uv"
    if here.is_file():
        return str(here)
    found = shutil.which("uv")
    if not found:
        raise InputError("uv is not installed", fix="pip install uv (envgen depends on it)")
    return found


def uv_platform(glibc: str | None, arch: str = "x86_64") -> str:
    """``--python-platform`` for a glibc image of ``arch`` (x86_64; aarch64 for linux/arm64): capped at the image's
    glibc (unknown: the one ``manylinux_platforms`` assumes too, GLIBC_WHEN_UNKNOWN)."""
    parts = (glibc or GLIBC_WHEN_UNKNOWN).split(".")
    if (int(parts[0]), int(parts[1])) < (2, 28):  # uv names manylinux_2_17 (2014) and 2_28 on, nothing between
        return f"{arch}-manylinux_2_17"
    if (int(parts[0]), int(parts[1])) > UV_NEWEST_GLIBC:  # Debian 13's 2.41: uv refuses a name it does not know
        return f"{arch}-manylinux_{UV_NEWEST_GLIBC[0]}_{UV_NEWEST_GLIBC[1]}"
    return f"{arch}-manylinux_{parts[0]}_{parts[1]}"


def image_tags(python_minor: str, platforms: Sequence[str]) -> list[Tag]:
    """The wheel tags the image's CPython accepts, best first (pip's and uv's order)."""
    version = tuple(int(p) for p in python_minor.split(".")[:2])
    return [*cpython_tags(version, platforms=platforms), *compatible_tags(version, "cp" + "".join(map(str, version)),
                                                                           platforms)]


def compile_command(requirements: Path, output: Path, python_minor: str, glibc: str | None, *,
                    find_links: Sequence[str], index_urls: Sequence[str], index_url: str | None,
                    only_binary: bool = True, arch: str = "x86_64") -> list[str]:
    """``only_binary``: wheels alone (a lock); False: what pip really installs, sdists included (the witness).
    ``arch``: the image's machine (aarch64 for linux/arm64)."""
    command = [uv_binary(), "pip", "compile", str(requirements), "--output-file", str(output),
               "--format", "pylock.toml", "--generate-hashes", "--no-header", "--quiet",
               "--python-version", python_minor, "--python-platform", uv_platform(glibc, arch),
               *(["--only-binary", ":all:"] if only_binary else []), "--index-strategy", "unsafe-best-match",
               "--no-config"]
    if index_url:
        command += ["--index-url", index_url]
    for url in index_urls:
        command += ["--extra-index-url", url]
    for link in find_links:
        command += ["--find-links", link]
    return command


def _upload_epoch(value: Any) -> int | None:
    if isinstance(value, datetime):
        return int(value.timestamp())
    return None


def _toml(text: str) -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib.loads(text)


def choose_wheels(pylock: Mapping[str, Any], tags: Sequence[Tag], allow_sdist: bool = False) -> Resolved:
    """One wheel per package: the one with the best tag the image supports. ``allow_sdist``: a package with no such
    wheel but an sdist is kept (pip builds it at install) and named in ``sdists``."""
    rank = {tag: i for i, tag in enumerate(tags)}
    entries: dict[str, LockEntry] = {}
    urls: dict[str, str] = {}
    sdists: list[str] = []
    newest: int | None = None
    for package in pylock.get("packages", []):
        name, version = canonical_name(str(package["name"])), str(package["version"])
        best: tuple[int, str, str, int | None] | None = None
        for wheel in package.get("wheels", []):
            url = str(wheel.get("url") or wheel.get("path") or "")
            try:
                _, _, _, wheel_tags = parse_wheel_filename(unquote(Path(urlparse(url).path).name))
            except InvalidWheelFilename:
                continue
            score = min((rank[t] for t in wheel_tags if t in rank), default=None)
            digest = wheel.get("hashes", {}).get("sha256")
            if score is None or not digest:
                continue
            if best is None or score < best[0]:
                best = (score, str(digest), url, _upload_epoch(wheel.get("upload-time")))
        sdist = package.get("sdist") or {}
        if best is None and allow_sdist and sdist.get("hashes", {}).get("sha256"):
            entries[name] = LockEntry(name, version, (str(sdist["hashes"]["sha256"]),))
            urls[name] = str(sdist.get("url") or "")
            sdists.append(f"{name}=={version}")
            continue
        if best is None:
            raise InputError(f"no wheel of {name}=={version} fits the image's platform ({tags[0]})",
                             fix=f"pin a {name} version that publishes a wheel for it")
        entries[name] = LockEntry(name, version, (best[1],))
        urls[name] = best[2]
        if best[3] is not None:
            newest = best[3] if newest is None else max(newest, best[3])
    return Resolved(entries, urls, newest, tuple(sdists))


def run_command(command: list[str], env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """The default Runner: the resolver's process, output captured, its exit status left to the caller."""
    return subprocess.run(command, env=dict(env), capture_output=True, text=True, check=False)


def uv_resolve(pins: Sequence[str], python_minor: str, glibc: str | None, platforms: Sequence[str], *,
               find_links: Sequence[str], index_urls: Sequence[str], index_url: str | None,
               env: Mapping[str, str], runner: Runner = run_command, only_binary: bool = True,
               constraints: Sequence[str] = (), arch: str = "x86_64") -> Resolved:
    """The complete set ``pins`` need on the image's platform; raises BuildFailed with uv's tail. ``only_binary``
    False: sdists too, as pip would install them (``Resolved.sdists`` names them). ``constraints``: versions the
    resolution must keep (the base's, base_provides: uv's ``--constraint``)."""
    if not pins:
        return Resolved({}, {}, None)
    with tempfile.TemporaryDirectory(prefix="envgen-uv-lock-") as tmp:
        root = Path(tmp)
        requirements, output = root / "requirements.in", root / "pylock.toml"
        requirements.write_text("\n".join(pins) + "\n", encoding="utf-8")
        command = compile_command(requirements, output, python_minor, glibc, find_links=find_links,
                                  index_urls=index_urls, index_url=index_url, only_binary=only_binary, arch=arch)
        if constraints:
            (root / "constraints.txt").write_text("\n".join(constraints) + "\n", encoding="utf-8")
            command += ["--constraint", str(root / "constraints.txt")]
        done = runner(command, env)
        if done.returncode != 0 or not output.is_file():
            raise BuildFailed(f"uv could not resolve {' '.join(pins)} for Python {python_minor} "
                              f"(uv exit {done.returncode})",
                              fix="check the pins and that the package index is reachable",
                              tail="\n".join((done.stderr or "").splitlines()[-15:]))
        pylock = _toml(output.read_text(encoding="utf-8"))
    return choose_wheels(pylock, image_tags(python_minor, platforms), allow_sdist=not only_binary)
