"""``packages.pip`` lines as a ``requirements.txt`` takes them: ``==`` pins, ranges (``>=``, ``~=``, ``<``, ``!=`` and
their combinations), unpinned names, extras (``pkg[extra]>=1``) and environment markers (``; python_version <
"3.10"``). What cannot be made reproducible is refused with the reason and the way out: pip options inside the
list (``-e``, ``-r``, ``--index-url``, ``--hash``), direct URLs and local paths.

A line of a name, extras and version clauses is read by a regular expression (most profiles: no ``packaging``
import on check's path, 100 ms on a loaded machine); a line with a marker is parsed by ``packaging``, which also
evaluates the marker for the image (CPython, Linux x86-64, the profile's Python).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from envgen.kb.specifiers import exact

# Everything a requirement line may hold here: a name, extras, version clauses, a marker with quoted values.
# No '$', backtick, backslash, '|', '&', '#', '@', '/' or newline: the line reaches files and shell words.
SAFE_RE = re.compile(r"""^[A-Za-z0-9][A-Za-z0-9._\-\[\],<>=!~;'" ()*+]*$""")
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_CLAUSE = r"(?:~=|===|==|!=|<=|>=|<|>)\s*[0-9][0-9A-Za-z.*+!_-]*"
_SIMPLE = re.compile(rf"^({_NAME})\s*(?:\[\s*([A-Za-z0-9._,\s-]*)\])?\s*((?:{_CLAUSE})(?:\s*,\s*{_CLAUSE})*)?\s*$")

# pip options a requirements file may carry, and where envgen takes each instead
_OPTIONS: dict[str, str] = {
    "-e": "an editable install builds from a working tree outside the image: build a wheel (pip wheel DIR), put it "
          "in mirrors.wheelhouse and pin it with ==",
    "--editable": "an editable install builds from a working tree outside the image: build a wheel (pip wheel DIR), "
                  "put it in mirrors.wheelhouse and pin it with ==",
    "-r": "packages.pip lists requirements, not files: copy the file's lines into packages.pip",
    "--requirement": "packages.pip lists requirements, not files: copy the file's lines into packages.pip",
    "-c": "constraints files are not read: write the constraint as a line (numpy<2)",
    "--constraint": "constraints files are not read: write the constraint as a line (numpy<2)",
    "-i": "set mirrors.pip_index_url instead (the index is a route, not part of the environment)",
    "--index-url": "set mirrors.pip_index_url instead (the index is a route, not part of the environment)",
    "--extra-index-url": "set mirrors.pip_extra_index_urls instead (the index is a route, not part of the environment)",
    "-f": "set mirrors.wheelhouse instead (a directory of wheels the build mounts)",
    "--find-links": "set mirrors.wheelhouse instead (a directory of wheels the build mounts)",
    "--trusted-host": "set mirrors.pip_trusted_hosts instead",
    "--hash": "hashes come from the lock: run `envgen lock PROFILE` (every archive pinned by sha256)",
    "--pre": "write the pre-release in the line itself (name>=2.0rc1, or name==2.0rc1)",
}
_FORMAT = ("write it as in requirements.txt: name, name==1.2.3, name>=1.2,<2, name[extra]>=1, "
           "name==1.2; python_version < \"3.10\"")


@dataclass(frozen=True)
class PipLine:
    """One ``packages.pip`` line, read."""

    text: str  # as written, stripped
    raw_name: str  # as written: "Pillow"
    name: str  # PEP 503: "pillow"
    extras: tuple[str, ...]  # PEP 503, sorted
    specifier: str  # "" (unpinned), ">=1.20,<2", "==1.2.3"
    marker: str | None  # 'python_version < "3.10"'

    @property
    def exact(self) -> str | None:
        """The version an ``==X.Y.Z`` line pins (its local label kept: "2.2.2+cu121"), else None: the line floats."""
        return exact(self.specifier)

    @property
    def floats(self) -> bool:
        return self.exact is None

    @property
    def extras_text(self) -> str:
        return f"[{','.join(self.extras)}]" if self.extras else ""

    @property
    def requirement(self) -> str:
        """The line without its marker: "numpy>=1.20,<2", "jax[cuda12]==0.4.30"."""
        return f"{self.raw_name}{self.extras_text}{self.specifier}"

    def applies(self, python: str) -> bool:
        """Does the marker hold in the image (CPython on Linux x86-64, Python ``python``: "3.11" or "3.11.9")?"""
        if self.marker is None:
            return True
        from packaging.markers import Marker

        minor = ".".join(python.split(".")[:2])
        full = python if python.count(".") >= 2 else f"{minor}.0"
        return Marker(self.marker).evaluate({
            "python_version": minor, "python_full_version": full, "implementation_name": "cpython",
            "platform_python_implementation": "CPython", "implementation_version": full, "os_name": "posix",
            "sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64", "extra": ""})


class RefusedLine(ValueError):
    """A line that is not a requirement envgen can make reproducible; the message says why and what to write."""


def canonical(name: str) -> str:
    """PEP 503 name: lower case, runs of ``-_.`` as one ``-`` (``Jinja2`` -> ``jinja2``, ``opt_einsum`` ->
    ``opt-einsum``); the lock files use it too."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _refuse_forms(text: str) -> None:
    """Options, URLs, paths and comments: each refused with the way out."""
    head = text.split()[0] if text.split() else ""
    if text.startswith("-"):
        option = head.split("=", 1)[0]
        why = _OPTIONS.get(option, "pip options are not requirements; envgen sets the install options itself")
        raise RefusedLine(f"{option} is a pip option, not a requirement: {why}")
    if " --" in text:
        raise RefusedLine("options inside a requirement line (--hash, --install-option, ...) are not read: "
                          + _OPTIONS["--hash"])
    if ("@" in text or "://" in text) and "#sha256=" in text:
        raise RefusedLine("a direct URL with a hash is not taken yet (the lock and the build install from the index "
                          "or the wheelhouse): put the wheel in mirrors.wheelhouse and pin it with == (name==1.2.3)")
    if "@" in text or "://" in text:
        raise RefusedLine("a direct URL (name @ URL) is not reproducible from the profile alone: pin the release the "
                          "index serves (name==1.2.3), or put the wheel in mirrors.wheelhouse and pin it with ==")
    if text.startswith((".", "/", "~")) or head.endswith((".whl", ".tar.gz", ".zip")) or "/" in head:
        raise RefusedLine("a local path is outside the build context: put the wheel in mirrors.wheelhouse and pin "
                          "it with == (name==1.2.3)")
    if "#" in text:
        raise RefusedLine("a '#' comment inside the entry: write the comment as a YAML comment after the quotes")


def parse_line(value: str) -> PipLine:
    """Read one line; raises :class:`RefusedLine` naming the reason and the fix."""
    text = value.strip()
    _refuse_forms(text)
    if not SAFE_RE.match(text):
        odd = next((c for c in text if not SAFE_RE.match("a" + c)), "")
        raise RefusedLine(f"the character {odd!r} has no place in a requirement: {_FORMAT}")
    m = _SIMPLE.match(text)
    if m is not None:
        extras = tuple(sorted({canonical(e.strip()) for e in (m.group(2) or "").split(",") if e.strip()}))
        clauses = [c.replace(" ", "") for c in (m.group(3) or "").split(",") if c.strip()]
        return PipLine(text, m.group(1), canonical(m.group(1)), extras, ",".join(clauses), None)
    return _parse_full(text)


def _parse_full(text: str) -> PipLine:
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(text)
    except InvalidRequirement as exc:
        reason = " ".join(str(exc).split()).split(" Requirement(", 1)[0][:120]
        raise RefusedLine(f"not a requirement ({reason}): {_FORMAT}") from exc
    if req.url:
        raise RefusedLine("a direct URL (name @ URL) is not reproducible from the profile alone: pin the release "
                          "the index serves (name==1.2.3)")
    specifier = ",".join(str(s) for s in req.specifier)  # packaging's order; the clauses as written
    written = text.split(";", 1)[0]
    clauses = [c.strip().replace(" ", "") for c in re.split(r"[,]", re.sub(r"^[^<>=!~]*", "", written)) if c.strip()]
    if sorted(clauses) == sorted(str(s) for s in req.specifier):
        specifier = ",".join(clauses)
    marker = str(req.marker) if req.marker is not None else None
    return PipLine(text, req.name, canonical(req.name), tuple(sorted(canonical(e) for e in req.extras)), specifier,
                   marker)


def try_parse(value: object) -> PipLine | None:
    """The line read, or None when it is no string or refused (the model's validation reports it)."""
    if not isinstance(value, str):
        return None
    try:
        return parse_line(value)
    except RefusedLine:
        return None
