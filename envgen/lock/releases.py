"""One release judged on its own files (the index's page, ``envgen.pypi``): its Requires-Python against the image's
Python, and whether a wheel carries a tag the image's CPython, platform and glibc accept (packaging.tags, the
order pip and uv use). A release with no such wheel is built from its sdist at install: what that build needs is read
from the sdist (``sdist_needs``), and a need the image cannot meet is an error naming the nearest release with a
wheel."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from envgen.check import Finding
from envgen.check.util import finding
from envgen.lock.sdist_needs import image_has, sdist_needs
from envgen.pypi import File, Index, IndexUnreachable


@dataclass(frozen=True)
class Target:
    """The image a release must install into."""

    python: str  # "3.11"
    tags: tuple[Any, ...]  # packaging Tag, best first
    apt: tuple[str, ...]  # the profile's packages.apt
    base: str
    note: str  # "CPython 3.11, x86_64-manylinux_2_36 (the base image's glibc 2.36)"

    def python_ok(self, spec: str | None) -> bool:
        from packaging.specifiers import InvalidSpecifier, SpecifierSet

        try:
            return not spec or SpecifierSet(spec).contains(self.python, prereleases=True)
        except InvalidSpecifier:
            return True  # pip ignores what it cannot read, too

    def wheels(self, files: Sequence[File]) -> list[File]:
        accepted = set(self.tags)
        return [f for f in files if f.wheel and f.tags() & accepted]

    def installs(self, files: Sequence[File]) -> bool:
        """A release pip installs here without building: a wheel for the image, Requires-Python admitting it."""
        return bool(self.wheels(files)) and self.python_ok(_requires_python(files))


def _requires_python(files: Sequence[File]) -> str | None:
    return next((f.requires_python for f in files if f.requires_python), None)


def _pythons(files: Sequence[File]) -> str:
    """"cp39, cp310, cp311, cp312": the interpreter tags of a release's Linux wheels."""
    seen = sorted({t.interpreter for f in files for t in f.tags() if "linux" in t.platform or t.platform == "any"},
                  key=lambda s: (len(s), s))
    return ", ".join(seen) or "none for Linux"


def nearest_order(index: Index, name: str, version: str) -> list[str]:
    """The releases of ``name`` other than ``version``, nearest first (by release order; the newer at a tie);
    prereleases only when ``version`` is one."""
    from packaging.version import InvalidVersion, Version

    try:
        pinned = Version(version)
    except InvalidVersion:
        return []
    ordered: list[tuple[Any, str]] = []
    for v in index.releases(name):
        try:
            parsed = Version(v)
        except InvalidVersion:
            continue
        if parsed != pinned and (not parsed.is_prerelease or pinned.is_prerelease):
            ordered.append((parsed, v))
    ordered.sort()
    below = [v for p, v in ordered if p < pinned][::-1]
    above = [v for p, v in ordered if p > pinned]
    out: list[str] = []
    for step in range(max(len(below), len(above))):
        out += [side[step] for side in (above, below) if step < len(side)]
    return out


def nearest(index: Index, name: str, version: str, ok: Callable[[list[File]], bool]) -> str | None:
    """The release of ``name`` nearest to ``version`` whose files pass ``ok``."""
    releases = index.releases(name)
    return next((v for v in nearest_order(index, name, version) if ok(releases[v])), None)


def judge_release(index: Index, target: Target, name: str, version: str, origin: str) -> list[Finding]:
    """Requires-Python and wheel findings of ``name`` ``version`` (``origin``: what asked for it)."""
    files = index.release(name, version)
    if not files:
        return []
    pin = f"{name}=={version}"
    spec = _requires_python(files)
    if not target.python_ok(spec):
        near = nearest(index, name, version, target.installs)
        url = next(f.url for f in files if f.requires_python)
        return [finding("error", "pkg-requires-python",
                        f"{origin}: {pin} declares Requires-Python {spec}, which excludes the image's Python "
                        f"{target.python}: pip finds nothing to install",
                        f"pin {name}=={near} (the nearest release that installs on Python {target.python})"
                        if near else f"use a Python that {spec} admits", f"{url} (index page: requires-python)")]
    if target.wheels(files):
        return []
    return _sdist_only(index, target, name, version, origin, files)


def _sdist_only(index: Index, target: Target, name: str, version: str, origin: str,
                files: list[File]) -> list[Finding]:
    pin = f"{name}=={version}"
    sdist = next((f for f in files if f.sdist), None)
    near = nearest(index, name, version, target.installs)
    way = f"pin {name}=={near} (the nearest release with a wheel for it)" if near else \
        f"no release of {name} has a wheel for it"
    wheels = f"its wheels are for {_pythons(files)}" if any(f.wheel for f in files) else "it has no wheels at all"
    if sdist is None:
        return [finding("error", "pkg-no-wheel", f"{origin}: {pin} has no file for {target.note} ({wheels}) and no "
                        "sdist", way, files[0].url)]
    try:
        needs = sdist_needs(index, sdist)
    except IndexUnreachable as exc:
        return [finding("warning", "pkg-sdist-build",
                        f"{origin}: {pin} has no wheel for {target.note} ({wheels}); pip builds its sdist "
                        f"{sdist.filename}, whose needs could not be read ({exc.message})", way, sdist.url)]
    missing = [(need, why) for need, why in needs if not image_has(need, list(target.apt), target.base)]
    if not missing:
        said = "; it is pure Python" if not needs else "; the image has what it needs"
        return [finding("warning", "pkg-sdist-build",
                        f"{origin}: {pin} has no wheel for {target.note} ({wheels}): pip builds its sdist "
                        f"{sdist.filename} at install{said}", way, sdist.url)]
    lacking = "; ".join(f"{need.need} ({why})" for need, why in missing)
    apt = " ".join(need.apt[0] for need, _ in missing)
    return [finding("error", "pkg-no-wheel",
                    f"{origin}: {pin} has no wheel for {target.note} ({wheels}), so pip builds its sdist "
                    f"{sdist.filename}, which needs {lacking}: the image has none, and the build fails",
                    f"{way}, or add {apt} to packages.apt",
                    f"{sdist.url} (sha256 {sdist.sha256}); {', '.join(sorted({n.source for n, _ in missing}))}")]
