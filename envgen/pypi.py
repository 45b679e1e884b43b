"""What a package index says of a project and of each of its releases: its files (name, URL, sha256, Requires-Python,
yanked), the wheel tags each file carries and, per file, its core metadata (Requires-Dist, Requires-Python,
classifiers), read from the index's PEP 691 JSON page and the PEP 658 ``.metadata`` file beside each wheel (PyPI's
JSON API for an index without them). Every answer is kept in envgen's cache directory: a project page for
``PAGE_TTL_S`` (new releases appear), a file's metadata for good, under its sha256 (a file never changes). Offline,
a kept page of any age serves, and what was never read raises :class:`IndexUnreachable`.

Reused by every reader of released artifacts (`check`'s judgement of the resolved set, the wheels' ELF reading):
pass one :class:`Index` around; nothing here is global. Network access is bounded by ``timeout`` per request.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envgen.errors import ResolverUnavailable
from envgen.files import prune_stale, write_atomically

DEFAULT_INDEX = "https://pypi.org/simple"
PAGE_TTL_S = 86400
TIMEOUT_S = 15.0
_ACCEPT = "application/vnd.pypi.simple.v1+json"
WHEEL_READ_LIMIT = 20 * 1024 * 1024  # a wheel without a PEP 658 file is read whole up to this size


class IndexUnreachable(ResolverUnavailable):
    """The index could not be asked (offline, or the network failed) and nothing kept answers."""


@dataclass(frozen=True)
class File:
    """One distribution file of a release."""

    filename: str
    url: str
    sha256: str
    requires_python: str | None
    yanked: bool
    size: int | None
    has_metadata: bool  # PEP 658: ``url + ".metadata"`` holds its core metadata

    @property
    def wheel(self) -> bool:
        return self.filename.endswith(".whl")

    @property
    def sdist(self) -> bool:
        return self.filename.endswith((".tar.gz", ".zip", ".tar.bz2", ".tgz"))

    def name_version(self) -> tuple[str, str] | None:
        """(canonical name, version) read from the file name; None for a name that says neither."""
        from packaging.utils import (
            InvalidSdistFilename,
            InvalidWheelFilename,
            parse_sdist_filename,
            parse_wheel_filename,
        )

        try:
            if self.wheel:
                name, version, _, _ = parse_wheel_filename(self.filename)
            elif self.filename.endswith((".tar.gz", ".zip")):
                name, version = parse_sdist_filename(self.filename)
            else:
                return None
        except (InvalidWheelFilename, InvalidSdistFilename, ValueError):
            return None
        return str(name), str(version)

    def tags(self) -> frozenset[Any]:
        """The wheel's tags (packaging's ``Tag``); empty for an sdist."""
        from packaging.utils import InvalidWheelFilename, parse_wheel_filename

        if not self.wheel:
            return frozenset()
        try:
            return frozenset(parse_wheel_filename(self.filename)[3])
        except InvalidWheelFilename:
            return frozenset()


@dataclass(frozen=True)
class Metadata:
    """A release's core metadata, as one of its files carries it."""

    requires_dist: tuple[str, ...]
    requires_python: str | None
    classifiers: tuple[str, ...]
    source: str  # where it was read (the .metadata URL, or the JSON API page)


@dataclass
class Index:
    """One package index (a PEP 691 simple index; PyPI by default), its answers kept under ``cache``."""

    url: str = DEFAULT_INDEX
    cache: Path | None = None
    offline: bool = False
    timeout: float = TIMEOUT_S
    ttl: float = PAGE_TTL_S
    _pages: dict[str, list[File]] = field(default_factory=dict, repr=False)
    _tls: Any = field(default=None, repr=False)  # one TLS context for every request (its CA store is read once)

    def files(self, name: str) -> list[File]:
        """Every file of project ``name`` (PEP 503 name), in the index's order."""
        key = canonical(name)
        if key not in self._pages:
            page = self._kept(f"project-{_slug(self.url)}-{key}.json", self.ttl)
            if page is None:
                page = json.loads(self._get(f"{self.url.rstrip('/')}/{key}/", {"Accept": _ACCEPT}))
                self._keep(f"project-{_slug(self.url)}-{key}.json", page)
            self._pages[key] = [_file(entry) for entry in page.get("files", [])]
        return self._pages[key]

    def releases(self, name: str) -> dict[str, list[File]]:
        """version -> its files (yanked files left out), in upload order."""
        out: dict[str, list[File]] = {}
        for f in self.files(name):
            read = f.name_version()
            if read is not None and not f.yanked:
                out.setdefault(read[1], []).append(f)
        return out

    def release(self, name: str, version: str) -> list[File]:
        """The files of ``name`` ``version`` (a version spelt another way, 1.0 for 1.0.0, found too)."""
        from packaging.version import InvalidVersion, Version

        found = self.releases(name)
        if version in found:
            return found[version]
        with contextlib.suppress(InvalidVersion):
            wanted = Version(version)
            for other, files in found.items():
                with contextlib.suppress(InvalidVersion):
                    if Version(other) == wanted:
                        return files
        return []

    def metadata(self, name: str, version: str, files: Iterable[File], tags: Iterable[Any] = ()) -> Metadata | None:
        """The core metadata of release ``name`` ``version``, read from the PEP 658 file beside one of its wheels
        (PyPI serves it for wheels its page does not flag, too); None when no wheel has one (an sdist-only
        release). ``tags``: the image's wheel tags: a wheel the image installs is read first (a release's wheels
        for other platforms may declare other requirements: TensorFlow's Windows wheel)."""
        accepted = set(tags)
        wheels = sorted((f for f in files if f.wheel), key=lambda f: (not f.tags() & accepted, not f.has_metadata))
        for f in wheels[:3]:
            kept = self._kept(f"meta-{f.sha256}.json", None)
            if kept is None:
                try:
                    text, where = self._get(f.url + ".metadata").decode("utf-8", "replace"), f.url + ".metadata"
                except IndexUnreachable:
                    if self.offline:
                        raise
                    try:  # no PEP 658 file: the METADATA inside a small wheel
                        text, where = _wheel_metadata(self.download(f, WHEEL_READ_LIMIT)), f"{f.url} (METADATA)"
                    except IndexUnreachable:
                        continue
                kept = _core(text, where)
                self._keep(f"meta-{f.sha256}.json", kept)
            return _metadata(kept)
        return None

    def download(self, f: File, limit: int) -> bytes:
        """The whole file (at most ``limit`` bytes: a larger one raises IndexUnreachable), its sha256 checked."""
        if f.size is not None and f.size > limit:
            raise IndexUnreachable(f"{f.filename} is {f.size} bytes, over the {limit} read here",
                                   fix="read it by hand")
        body = self._get(f.url, limit=limit)
        if hashlib.sha256(body).hexdigest() != f.sha256:
            raise IndexUnreachable(f"{f.filename}: the bytes read do not match the index's sha256 {f.sha256}",
                                   fix="check the proxy or mirror")
        return body

    def _get(self, url: str, headers: dict[str, str] | None = None, limit: int | None = None) -> bytes:
        if self.offline:
            raise IndexUnreachable(f"offline: {url} is not kept in envgen's cache",
                                   fix="run once with the index reachable, or without --offline")
        import urllib.error
        import urllib.request

        request = urllib.request.Request(url, headers={"User-Agent": "envgen", **(headers or {})})
        try:
            if self._tls is None:
                import ssl

                self._tls = ssl.create_default_context()
            with urllib.request.urlopen(request, timeout=self.timeout, context=self._tls) as response:  # noqa: S310
                body = response.read(limit + 1 if limit else -1)
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            raise IndexUnreachable(f"{url} could not be read ({exc})",
                                   fix="check the network, proxy or mirrors.pip_index_url, or pass --offline") from None
        if limit and len(body) > limit:
            raise IndexUnreachable(f"{url} is over the {limit} bytes read here", fix="read it by hand")
        return bytes(body)

    def _kept(self, name: str, ttl: float | None) -> Any:
        if self.cache is None:
            return None
        path = self.cache / "pypi" / name
        with contextlib.suppress(OSError, ValueError):
            if ttl is None or self.offline or time.time() - path.stat().st_mtime < ttl:
                return json.loads(path.read_bytes())
        return None

    def _keep(self, name: str, data: Any) -> None:
        if self.cache is None:
            return
        path = self.cache / "pypi" / name
        with contextlib.suppress(OSError):
            write_atomically(path, json.dumps(data, sort_keys=True))
            prune_stale(path, "project-*.json")


def canonical(name: str) -> str:
    import re

    return re.sub(r"[-_.]+", "-", name).lower()


def _slug(url: str) -> str:
    return hashlib.sha256(url.rstrip("/").encode()).hexdigest()[:10]


def _file(entry: dict[str, Any]) -> File:
    meta = entry.get("core-metadata", entry.get("data-dist-info-metadata", False))
    digest = str(entry.get("hashes", {}).get("sha256", ""))
    return File(str(entry.get("filename", "")), str(entry.get("url", "")), digest,
                entry.get("requires-python") or None, bool(entry.get("yanked", False)), entry.get("size"),
                bool(meta))


def _core(text: str, source: str) -> dict[str, Any]:
    from email.parser import HeaderParser

    message = HeaderParser().parsestr(text)
    return {"requires_dist": message.get_all("Requires-Dist") or [],
            "requires_python": message.get("Requires-Python"), "classifiers": message.get_all("Classifier") or [],
            "source": source}


def _metadata(kept: dict[str, Any]) -> Metadata:
    return Metadata(tuple(kept.get("requires_dist", [])), kept.get("requires_python") or None,
                    tuple(kept.get("classifiers", [])), str(kept.get("source", "")))


def _wheel_metadata(body: bytes) -> str:
    """The ``*.dist-info/METADATA`` of a wheel's bytes."""
    import io
    import zipfile

    with zipfile.ZipFile(io.BytesIO(body)) as wheel:
        name = next((n for n in wheel.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")), None)
        if name is None:
            raise IndexUnreachable("the wheel holds no .dist-info/METADATA", fix="read it by hand")
        return wheel.read(name).decode("utf-8", "replace")
