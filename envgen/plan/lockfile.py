"""Lock files: everything a pip profile installs, pinned: the base image by digest, every apt
package at its exact version, every pip distribution with its sha256, and the installer (uv).

``envgen lock`` (``envgen.lock.lock``) writes ``<profile>.lock.txt`` beside the profile's
YAML file; rendering reads it back. Layout::

    # envgen lock file ...                      comment lines
    # format: envgen.lock/1                     header fields (``# key: value``)
    # python: 3.11
    # framework-pins: tensorflow-cpu==2.12.0 torch==2.13.0+cpu
    # extra-pins: numpy==1.23.5
    # [environment] ...                         what the framework pins need (requirements.lock)
    absl-py==2.5.1 --hash=sha256:...
    # [extras] ...                              what packages.pip adds on top (requirements.extra.txt)
    # [tools] ...                               the installer's own wheel (uv), hash-pinned
    uv==0.13.9 --hash=sha256:...
    # [apt] ...                                 the runtime apt packages and their dependencies
    python3=3.11.2-1+b1

Format 2 adds the header fields ``base``, ``base-digest`` (a registry manifest digest) or
``base-image-id`` (a locally made base: the engine's image ID), ``apt-pins``, ``target``,
``source-date-epoch``, ``uv-wheel`` and the [tools] and [apt] sections; format 1 files (pip sets
only) are still read. Entry lines are checked strictly (name, version, hashes only): a lock file
cannot smuggle pip or apt options (an index URL, an editable install) into the build.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from envgen.errors import InputError
from envgen.plan.installers import installer_of
from envgen.profile.loader import profile_source
from envgen.profile.model import Profile
from envgen.profile.requirements import canonical as canonical_name

LOCK_SUFFIX = ".lock.txt"  # the pip installer's (plan.installers: lock_suffix)
LOCK_FORMAT = "envgen.lock/2"
READABLE_FORMATS = ("envgen.lock/1", LOCK_FORMAT)
ENVIRONMENT = "environment"
EXTRAS = "extras"
TOOLS = "tools"
APT = "apt"
SECTION_TITLES = {
    ENVIRONMENT: "the framework pins and every package they need (requirements.lock)",
    EXTRAS: "what packages.pip adds on top of the environment (requirements.extra.txt)",
    TOOLS: "the installer's own wheel for the image's platform",
    APT: "the runtime apt packages and every package they pull in, at exact versions",
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
_APT_RE = re.compile(r"^(?P<name>[a-z0-9][a-z0-9+.-]*)(?::(?P<arch>[a-z0-9]+))?=(?P<version>[A-Za-z0-9.+~:-]+)$")
_DIGEST_RE = re.compile(r"^sha256:[0-9a-f]{64}$")
_FIELD_RE = re.compile(r"^# (?P<key>[a-z][a-z0-9-]*): ?(?P<value>.*)$")
_SECTION_RE = re.compile(r"^# \[(?P<section>[a-z]+)\]")


@dataclass(frozen=True)
class Pins:
    """What each installer is given (``ImagePlan.pins``), and what a lock is resolved from: conda specs made exact,
    the environment stage's pip set, the extras stage's, the apt packages, and the versions the base holds
    (``ImagePlan.base_constraints``: every pip resolution on the base is constrained to them)."""

    conda: tuple[str, ...]
    pip: tuple[str, ...]
    pip_extra: tuple[str, ...]
    apt: tuple[str, ...]
    base: tuple[str, ...] = ()


def exact_conda(spec: str) -> str:
    """conda reads "name=1.2.3" as 1.2.3.* (fuzzy); "name==1.2.3" is exact. A spec with a build
    string ("name=1.2.3=h1234_0") is already exact."""
    channel, _, rest = spec.rpartition("::")
    parts = rest.split("=")
    if len(parts) == 2:
        rest = f"{parts[0]}=={parts[1]}"
    return f"{channel}::{rest}" if channel else rest


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
class AptEntry:
    name: str
    version: str

    def __post_init__(self) -> None:
        if not _APT_RE.match(self.line):
            raise InputError(f"apt lock entry {self.line!r} is not a valid name=version pin",
                             fix="regenerate the lock file with `envgen lock PROFILE`")

    @property
    def line(self) -> str:
        return f"{self.name}={self.version}"


@dataclass(frozen=True)
class LockInputs:
    """What a lock was resolved from; a lock applies only while the profile still says this.
    ``base`` and ``apt`` are None in format-1 locks (which did not pin them)."""

    python: str
    framework: tuple[str, ...]
    extras: tuple[str, ...]
    base: str | None = None
    apt: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Lock:
    inputs: LockInputs
    environment: tuple[LockEntry, ...]
    extras: tuple[LockEntry, ...]
    fields: tuple[tuple[str, str], ...] = ()  # every header field, in file order
    path: Path | None = None
    tools: tuple[LockEntry, ...] = ()
    apt: tuple[AptEntry, ...] = ()

    @property
    def file_name(self) -> str:
        return self.path.name if self.path else "(in memory)"

    def field(self, key: str) -> str | None:
        value = dict(self.fields).get(key)
        return None if value in (None, "", NONE) else value

    @property
    def base_digest(self) -> str | None:
        """The registry manifest digest of the base (``sha256:...``), when the lock pins one."""
        return self.field("base-digest")

    @property
    def base_image_id(self) -> str | None:
        """A locally made base's image ID in the engine that locked it (no registry digest exists)."""
        return self.field("base-image-id")

    @property
    def source_date_epoch(self) -> str | None:
        return self.field("source-date-epoch")

    @property
    def uv(self) -> LockEntry | None:
        return next((t for t in self.tools if t.name == "uv"), None)

    @property
    def uv_wheel(self) -> str | None:
        """``URL`` of uv's wheel for the image's platform (the [tools] entry's hash checks it)."""
        return self.field("uv-wheel")


def lock_path(profile_file: Path, installer: str = "pip") -> Path:
    """``profiles/cpu-smoke.yaml`` -> ``profiles/cpu-smoke.lock.txt``; a conda profile's lock:
    ``profiles/legacy-maxwell.conda.txt``. Named after the file, not the profile's ``name:``."""
    return profile_file.with_name(profile_file.stem + installer_of(installer).lock_suffix)


def sorted_entries(entries: Iterable[LockEntry]) -> tuple[LockEntry, ...]:
    return tuple(sorted(entries, key=lambda e: (e.name, e.version)))


def _join(pins: Sequence[str]) -> str:
    """Pins space-separated; as a JSON list when one holds a space (a requirement with a marker)."""
    if any(" " in pin for pin in pins):
        return json.dumps(list(pins))
    return " ".join(pins) if pins else NONE


def _split(value: str) -> tuple[str, ...]:
    text = value.strip()
    if text.startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"lock header {text[:60]!r} is not a JSON list of pins ({exc.msg})",
                             fix="run `envgen lock PROFILE` again") from exc
        return tuple(str(item) for item in items)
    return () if text in ("", NONE) else tuple(text.split())


def format_lock(lock: Lock, *, profile_name: str, extra_fields: Sequence[tuple[str, str]] = ()) -> str:
    """The lock file's text: deterministic (no timestamp), entries sorted by name."""
    lines = [
        f'# envgen lock file for profile "{profile_name}": its base image by digest, its apt packages at',
        "# exact versions and its complete pip package set, each package pinned with the sha256 of its",
        "# archive. Written by `envgen lock`; do not edit by hand. Builds install it with --require-hashes",
        "# --no-deps. Run `envgen lock` again after changing the profile's base, python, frameworks or",
        "# packages (a lock made for other inputs is an error).",
        f"# format: {LOCK_FORMAT}",
        f"# python: {lock.inputs.python}",
        f"# framework-pins: {_join(lock.inputs.framework)}",
        f"# extra-pins: {_join(lock.inputs.extras)}",
    ]
    if lock.inputs.base is not None:
        lines.append(f"# base: {lock.inputs.base}")
    if lock.inputs.apt is not None:
        lines.append(f"# apt-pins: {_join(lock.inputs.apt)}")
    lines += [f"# {key}: {value}" for key, value in extra_fields]
    sections: list[tuple[str, Sequence[LockEntry | AptEntry]]] = [
        (ENVIRONMENT, sorted_entries(lock.environment)), (EXTRAS, sorted_entries(lock.extras))]
    if lock.tools:
        sections.append((TOOLS, sorted_entries(lock.tools)))
    if lock.inputs.apt is not None:
        sections.append((APT, sorted(lock.apt, key=lambda e: e.name)))
    for section, entries in sections:
        lines.append(f"# [{section}] {SECTION_TITLES[section]}: {len(entries)} package(s)")
        lines += [entry.line for entry in entries]
    return "\n".join(lines) + "\n"


_FIX = "regenerate it with `envgen lock PROFILE`"


def _package_entry(line: str, at: str) -> LockEntry:
    """``name==version --hash=sha256:...`` (``at``: ``file:line`` for the error)."""
    match = _ENTRY_RE.match(line)
    if not match:
        raise InputError(f"{at}: {line[:60]!r} is not a 'name==version --hash=sha256:...' line", fix=_FIX)
    return LockEntry(canonical_name(match.group("name")), match.group("version"),
                     tuple(h.removeprefix("--hash=sha256:") for h in match.group("hashes").split()))


def _apt_entry(line: str, at: str) -> AptEntry:
    if not _APT_RE.match(line):
        raise InputError(f"{at}: {line[:60]!r} is not a 'name=version' apt line", fix=_FIX)
    name, _, version = line.partition("=")
    return AptEntry(name, version)


def _header_inputs(fields: Mapping[str, str], where: str) -> LockInputs:
    """The header's required fields, checked, as the inputs the lock was made for."""
    missing = [key for key in REQUIRED_FIELDS if key not in fields]
    if missing:
        raise InputError(f"{where}: header field '{missing[0]}' is missing", fix=_FIX)
    if fields["format"] not in READABLE_FORMATS:
        raise InputError(f"{where}: header field 'format' = {fields['format']!r} is not {LOCK_FORMAT}", fix=_FIX)
    for key in ("base-digest", "base-image-id"):
        if fields.get(key, NONE) != NONE and not _DIGEST_RE.match(fields[key]):
            raise InputError(f"{where}: header field '{key}' = {fields[key]!r} is not sha256:<64 hex digits>",
                             fix=_FIX)
    return LockInputs(fields["python"], _split(fields["framework-pins"]), _split(fields["extra-pins"]),
                      fields.get("base"), _split(fields["apt-pins"]) if "apt-pins" in fields else None)


def parse_lock(text: str, where: str = "lock file", path: Path | None = None) -> Lock:
    """Read a lock file strictly: every non-comment line is ``name==version --hash=sha256:...``."""
    order: list[tuple[str, str]] = []
    sections: dict[str, list[LockEntry]] = {ENVIRONMENT: [], EXTRAS: [], TOOLS: []}
    apt: list[AptEntry] = []
    seen: dict[str, int] = {}
    current: str | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line, at = raw.rstrip(), f"{where}:{number}"
        if not line:
            continue
        section = _SECTION_RE.match(line)
        if section:
            current = section.group("section")
            if current not in sections and current != APT:
                raise InputError(f"{at}: unknown section [{current}]; expected [environment], [extras], "
                                 "[tools] or [apt]", fix=_FIX)
        elif line.startswith("#"):
            field = _FIELD_RE.match(line)
            if field and current is None:
                order.append((field.group("key"), field.group("value").strip()))
        elif current == APT:
            apt.append(_apt_entry(line, at))
        else:
            entry = _package_entry(line, at)
            if current is None:
                raise InputError(f"{at}: package line before any [environment]/[extras] section", fix=_FIX)
            if entry.name in seen:
                raise InputError(f"{at}: package {entry.name} is listed twice (first on line {seen[entry.name]})",
                                 fix=_FIX)
            seen[entry.name] = number
            sections[current].append(entry)
    return Lock(_header_inputs(dict(order), where), tuple(sections[ENVIRONMENT]), tuple(sections[EXTRAS]),
                tuple(order), path, tools=tuple(sections[TOOLS]), apt=tuple(apt))


def read_lock(path: Path) -> Lock:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"lock file {path} cannot be read: {exc}", fix="fix its permissions or delete it") from None
    return parse_lock(text, str(path), path)


def check_inputs(lock: Lock, profile: Profile, framework: Sequence[str], apt: Sequence[str] = ()) -> None:
    """Raise when the lock was made for other inputs than the profile now has."""
    now = LockInputs(profile.python_minor, tuple(framework), tuple(profile.packages.pip), profile.base,
                     tuple(sorted(apt)))
    from envgen.profile.loader import profile_arg

    fix = f"run `envgen lock {profile_arg(profile)}` again, or delete {lock.file_name} to build unlocked"
    where = str(lock.path) if lock.path else "lock"
    if lock.inputs.python != now.python:
        raise InputError(f"{where} was made for python {lock.inputs.python}; the profile has {now.python}", fix=fix)
    for label, was, is_now in (("frameworks", lock.inputs.framework, now.framework),
                               ("packages.pip", lock.inputs.extras, now.extras)):
        if sorted(was) != sorted(is_now):
            raise InputError(f"{where} was made for {label} = {_join(was)}; the profile now pins {_join(is_now)}",
                             fix=fix)
    if lock.inputs.base is not None and lock.inputs.base != now.base:
        raise InputError(f"{where} was made for base {lock.inputs.base}; the profile now has {now.base}", fix=fix)
    if lock.inputs.apt is not None and sorted(lock.inputs.apt) != sorted(now.apt or ()):
        raise InputError(f"{where} was made for apt packages {_join(lock.inputs.apt)}; the image now needs "
                         f"{_join(now.apt or ())}", fix=fix)


def lock_not_pip(path: Path, profile: Profile) -> InputError:
    """A pip lock file beside a profile of another installer: the render refuses it, check reports the same
    (``plan.refusals``: lock-not-pip)."""
    return InputError(f"{path}: lock files apply to pip profiles; profile {profile.name!r} has installer: "
                      f"{profile.installer}", fix=f"delete {path.name}")


def find_lock(profile: Profile, framework: Sequence[str], apt: Sequence[str] = ()) -> Lock | None:
    """The lock file beside the profile's YAML file, checked against the profile; None if there is none
    (or the profile was made in code, not loaded from a file)."""
    source = profile_source(profile)
    if source is None:
        return None
    path = lock_path(source)
    if not path.is_file():
        return None
    if not installer_of(profile).pip_lock:
        raise lock_not_pip(path, profile)
    lock = read_lock(path)
    check_inputs(lock, profile, framework, apt)
    return lock


def lock_target(python_minor: str, glibc: str | None, arch: str = "x86_64") -> str:
    """What a lock's main sections were resolved for: ``cp311-manylinux_2_36_x86_64`` (``arch``: aarch64 for an
    arm64-only profile); a lock for another target is refused."""
    return f"cp{python_minor.replace('.', '')}-manylinux_{(glibc or 'unknown').replace('.', '_')}_{arch}"


def wheelhouse_covers(wheelhouse: Path | None, pins: Sequence[str]) -> bool:
    """True when every pin with a local version (``torch==2.13.0+cpu``) has its wheel in the
    wheelhouse, so the framework's own index is not needed."""
    local = [pin for pin in pins if "+" in pin.split("==")[-1]]
    if not local or wheelhouse is None or not wheelhouse.is_dir():
        return False
    names = {w.name.lower() for w in wheelhouse.glob("*.whl")}
    for pin in local:
        dist, version = pin.split("==")
        prefix = f"{dist.replace('-', '_').lower()}-{version.lower()}-"
        if not any(name.startswith(prefix) for name in names):
            return False
    return True
