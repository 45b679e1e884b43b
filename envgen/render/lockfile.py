"""Lock files: a pip profile's complete package set, every package pinned with its sha256.

``envgen lock`` (``envgen.pipeline.lock``) writes ``<profile>.lock.txt`` beside the profile's
YAML file; rendering reads it back. The file is itself a valid pip requirements file. Layout::

    # envgen lock file ...                      comment lines
    # format: envgen.lock/1                     header fields (``# key: value``)
    # python: 3.11
    # framework-pins: tensorflow-cpu==2.12.0 torch==2.13.0+cpu
    # extra-pins: numpy==1.23.5
    # [environment] ...                         what the framework pins need (requirements.lock)
    absl-py==2.5.1 --hash=sha256:...
    # [extras] ...                              what packages.pip adds on top (requirements.extra.txt)

Entry lines are checked strictly (name, version, hashes only): a lock file cannot smuggle pip
options (an index URL, an editable install) into the build.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from envgen.errors import InputError
from envgen.profile.loader import profile_source
from envgen.profile.model import Profile

LOCK_SUFFIX = ".lock.txt"
LOCK_FORMAT = "envgen.lock/1"
ENVIRONMENT = "environment"
EXTRAS = "extras"
SECTION_TITLES = {
    ENVIRONMENT: "the framework pins and every package they need (requirements.lock)",
    EXTRAS: "what packages.pip adds on top of the environment (requirements.extra.txt)",
}
REQUIRED_FIELDS = ("format", "python", "framework-pins", "extra-pins")
NONE = "-"

_NAME_RE = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")
_VERSION_RE = re.compile(r"^[A-Za-z0-9.+!_-]+$")
_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_ENTRY_RE = re.compile(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[A-Za-z0-9.+!_-]+)"
    r"(?P<hashes>(?: +--hash=sha256:[0-9a-f]{64})+)$"
)
_FIELD_RE = re.compile(r"^# (?P<key>[a-z][a-z0-9-]*): ?(?P<value>.*)$")
_SECTION_RE = re.compile(r"^# \[(?P<section>[a-z]+)\]")


def canonical_name(name: str) -> str:
    """PEP 503 normalised project name: ``Jinja2`` -> ``jinja2``, ``opt_einsum`` -> ``opt-einsum``."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass(frozen=True)
class LockEntry:
    name: str  # canonical
    version: str
    sha256: tuple[str, ...]

    def __post_init__(self) -> None:
        if not _NAME_RE.match(self.name) or not _VERSION_RE.match(self.version):
            raise InputError(f"lock entry {self.name}=={self.version} is not a valid name==version pin",
                             fix="regenerate the lock file with `envgen lock PROFILE`")
        if not self.sha256 or not all(_SHA256_RE.match(h) for h in self.sha256):
            raise InputError(f"lock entry {self.name}=={self.version} has no valid sha256 hash",
                             fix="regenerate the lock file with `envgen lock PROFILE`")

    @property
    def pin(self) -> str:
        return f"{self.name}=={self.version}"

    @property
    def line(self) -> str:
        return " ".join([self.pin, *(f"--hash=sha256:{h}" for h in self.sha256)])


@dataclass(frozen=True)
class LockInputs:
    """What a lock was resolved from; a lock applies only while the profile still says this."""

    python: str
    framework: tuple[str, ...]
    extras: tuple[str, ...]


@dataclass(frozen=True)
class Lock:
    inputs: LockInputs
    environment: tuple[LockEntry, ...]
    extras: tuple[LockEntry, ...]
    fields: tuple[tuple[str, str], ...] = ()  # every header field, in file order
    path: Path | None = None

    @property
    def file_name(self) -> str:
        return self.path.name if self.path else "(in memory)"


def lock_path(profile_file: Path) -> Path:
    """``profiles/cpu-smoke.yaml`` -> ``profiles/cpu-smoke.lock.txt``."""
    return profile_file.with_name(profile_file.stem + LOCK_SUFFIX)


def sorted_entries(entries: Iterable[LockEntry]) -> tuple[LockEntry, ...]:
    return tuple(sorted(entries, key=lambda e: (e.name, e.version)))


def _join(pins: Sequence[str]) -> str:
    return " ".join(pins) if pins else NONE


def _split(value: str) -> tuple[str, ...]:
    return () if value.strip() in ("", NONE) else tuple(value.split())


def format_lock(lock: Lock, *, profile_name: str, extra_fields: Sequence[tuple[str, str]] = ()) -> str:
    """The lock file's text: deterministic (no timestamp), entries sorted by name."""
    lines = [
        f'# envgen lock file for profile "{profile_name}": its complete pip package set, each package',
        "# pinned with the sha256 of its archive. Written by `envgen lock`; do not edit by hand. Renders",
        "# install it with pip --require-hashes --no-deps. Run `envgen lock` again after changing the",
        "# profile's python, frameworks or packages.pip (a lock made for other inputs is an error).",
        f"# format: {LOCK_FORMAT}",
        f"# python: {lock.inputs.python}",
        f"# framework-pins: {_join(lock.inputs.framework)}",
        f"# extra-pins: {_join(lock.inputs.extras)}",
    ]
    lines += [f"# {key}: {value}" for key, value in extra_fields]
    for section, entries in ((ENVIRONMENT, lock.environment), (EXTRAS, lock.extras)):
        lines.append(f"# [{section}] {SECTION_TITLES[section]}: {len(entries)} package(s)")
        lines += [entry.line for entry in sorted_entries(entries)]
    return "\n".join(lines) + "\n"


def parse_lock(text: str, where: str = "lock file", path: Path | None = None) -> Lock:
    """Read a lock file strictly: every non-comment line is ``name==version --hash=sha256:...``."""
    fix = "regenerate it with `envgen lock PROFILE`"
    fields: dict[str, str] = {}
    order: list[tuple[str, str]] = []
    sections: dict[str, list[LockEntry]] = {ENVIRONMENT: [], EXTRAS: []}
    seen: dict[str, int] = {}
    current: str | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if not line:
            continue
        section = _SECTION_RE.match(line)
        if section:
            name = section.group("section")
            if name not in sections:
                raise InputError(f"{where}:{number}: unknown section [{name}]; expected [environment] or [extras]",
                                 fix=fix)
            current = name
            continue
        if line.startswith("#"):
            field = _FIELD_RE.match(line)
            if field and current is None:
                fields[field.group("key")] = field.group("value").strip()
                order.append((field.group("key"), field.group("value").strip()))
            continue
        match = _ENTRY_RE.match(line)
        if not match:
            raise InputError(f"{where}:{number}: {line[:60]!r} is not a 'name==version --hash=sha256:...' line",
                             fix=fix)
        if current is None:
            raise InputError(f"{where}:{number}: package line before any [environment]/[extras] section", fix=fix)
        entry = LockEntry(canonical_name(match.group("name")), match.group("version"),
                          tuple(h.removeprefix("--hash=sha256:") for h in match.group("hashes").split()))
        if entry.name in seen:
            raise InputError(f"{where}:{number}: package {entry.name} is listed twice (first on line "
                             f"{seen[entry.name]})", fix=fix)
        seen[entry.name] = number
        sections[current].append(entry)
    missing = [key for key in REQUIRED_FIELDS if key not in fields]
    if missing:
        raise InputError(f"{where}: header field '{missing[0]}' is missing", fix=fix)
    if fields["format"] != LOCK_FORMAT:
        raise InputError(f"{where}: header field 'format' = {fields['format']!r} is not {LOCK_FORMAT}", fix=fix)
    inputs = LockInputs(fields["python"], _split(fields["framework-pins"]), _split(fields["extra-pins"]))
    return Lock(inputs, tuple(sections[ENVIRONMENT]), tuple(sections[EXTRAS]), tuple(order), path)


def read_lock(path: Path) -> Lock:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"lock file {path} cannot be read: {exc}", fix="fix its permissions or delete it") from None
    return parse_lock(text, str(path), path)


def check_inputs(lock: Lock, profile: Profile, framework: Sequence[str]) -> None:
    """Raise when the lock was made for other inputs than the profile now has."""
    now = LockInputs(profile.python_minor, tuple(framework), tuple(profile.packages.pip))
    fix = f"run `envgen lock {profile.name}` again, or delete {lock.file_name} to build unlocked"
    where = str(lock.path) if lock.path else "lock"
    if lock.inputs.python != now.python:
        raise InputError(f"{where} was made for python {lock.inputs.python}; the profile has {now.python}", fix=fix)
    for label, was, is_now in (("frameworks", lock.inputs.framework, now.framework),
                               ("packages.pip", lock.inputs.extras, now.extras)):
        if sorted(was) != sorted(is_now):
            raise InputError(f"{where} was made for {label} = {_join(was)}; the profile now pins {_join(is_now)}",
                             fix=fix)


def find_lock(profile: Profile, framework: Sequence[str]) -> Lock | None:
    """The lock file beside the profile's YAML file, checked against the profile; None if there is none
    (or the profile was made in code, not loaded from a file)."""
    source = profile_source(profile)
    if source is None:
        return None
    path = lock_path(source)
    if not path.is_file():
        return None
    if profile.installer != "pip":
        raise InputError(f"{path}: lock files apply to pip profiles; profile {profile.name!r} has installer: conda",
                         fix=f"delete {path.name}")
    lock = read_lock(path)
    check_inputs(lock, profile, framework)
    return lock
