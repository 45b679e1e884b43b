"""Conda lock files (``<profile>.conda.txt``): an explicit list (`@EXPLICIT`, one package URL and md5 per
line, its sha256 on the comment line above) that micromamba installs without solving. Written by
``envgen lock`` (``envgen.lock.lock_conda``, solved by py-rattler); read here for the render, and for check, which
reports what the render would refuse (``conda_lock_refusals``; ``plan.refusals``: conda-lock-stale).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from envgen.errors import InputError
from envgen.plan.installers import installer_of
from envgen.plan.lockfile import exact_conda, lock_path
from envgen.plan.refusals import Refused, refusal
from envgen.profile.model import Profile

EXPLICIT = "@EXPLICIT"
_LINE_RE = re.compile(r"^(?P<url>(?:https?|file)://\S+?/(?P<file>[^/#\s]+\.(?:conda|tar\.bz2)))#(?P<md5>[0-9a-f]{32})$")
_SHA_RE = re.compile(r"^# sha256: (?P<sha>[0-9a-f]{64})$")


CONDA_LOCK_FORMAT = "envgen.conda-lock/1"


def conda_lock_path(profile_file: Path) -> Path:
    """``profiles/legacy-maxwell.yaml`` -> ``profiles/legacy-maxwell.conda.txt``."""
    return lock_path(profile_file, "conda")


def conda_python_spec(python: str) -> str:
    """The profile's Python as a conda spec: "3.7" is conda's fuzzy ``python=3.7`` (any 3.7.x; ``==3.7`` would
    mean exactly 3.7.0), a patch release "3.7.12" is exact (``python==3.7.12``)."""
    return f"python=={python}" if python.count(".") >= 2 else f"python={python}"


def conda_specs(python: str, conda_pip: str, pins: Sequence[str]) -> tuple[str, ...]:
    """What the environment's conda part asks for (environment.yml's list, without the pip section)."""
    return tuple(sorted({conda_python_spec(python), f"pip=={conda_pip}", *pins}))


def parse_explicit(text: str, where: str = "explicit list") -> tuple[tuple[str, str, str], ...]:
    """(url, md5, sha256) per package line, strictly: a list cannot carry other conda options."""
    out: list[tuple[str, str, str]] = []
    seen_marker = False
    sha = ""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        if line == EXPLICIT:
            seen_marker = True
            continue
        if line.startswith("#"):
            match = _SHA_RE.match(line)
            sha = match.group("sha") if match else sha
            continue
        entry = _LINE_RE.match(line)
        if not seen_marker or not entry:
            raise InputError(f"{where}:{number}: {line[:60]!r} is not a 'URL#md5' line after @EXPLICIT",
                             fix="regenerate it with `envgen lock PROFILE`")
        out.append((entry.group("url"), entry.group("md5"), sha))
        sha = ""
    if not seen_marker:
        raise InputError(f"{where}: no @EXPLICIT line", fix="regenerate it with `envgen lock PROFILE`")
    return tuple(out)


def read_conda_lock(path: Path, python: str, conda_pip: str, pins: Sequence[str], profile_arg: str) -> str:
    """The explicit list beside a conda profile, checked against what the profile asks for now."""
    text = path.read_text(encoding="utf-8")
    parse_explicit(text, str(path))
    fields = dict(re.findall(r"^# ([a-z-]+): (.*)$", text, flags=re.MULTILINE))
    fix = f"run `envgen lock {profile_arg} --conda-channel NAME=URL` again, or delete {path.name}"
    if fields.get("format") != CONDA_LOCK_FORMAT:
        raise InputError(f"{path}: format {fields.get('format')!r} is not {CONDA_LOCK_FORMAT}", fix=fix)
    now = " ".join(conda_specs(python, conda_pip, pins))
    if fields.get("conda-pins") != now:
        raise InputError(f"{path} was made for conda packages {fields.get('conda-pins')}; the profile now asks "
                         f"for {now}", fix=fix)
    return text


def conda_lock_of(profile: Profile, conda_pins: Sequence[str], conda_pip: str | None) -> str | None:
    """The explicit list beside a conda profile, checked against it (``conda_pins``: its conda specs made exact;
    ``conda_pip``: the render's, read from tools.yaml when None); None when there is none. A list made for other
    inputs is an InputError."""
    from envgen.profile.loader import profile_arg, profile_source

    source = profile_source(profile)
    if not installer_of(profile).conda_env or source is None or not conda_lock_path(source).is_file():
        return None
    pip = conda_pip if conda_pip is not None else conda_pip_version()
    return read_conda_lock(conda_lock_path(source), profile.python_version, pip, conda_pins, profile_arg(profile))


def conda_pip_version() -> str:
    """The pip inside conda environments, as the render pins it (render/data/tools.yaml's conda_pip)."""
    from envgen.plan.installers.conda import tools

    return str(tools()["conda_pip"]["version"])


def conda_lock_refusals(profile: Profile, user_conda: Sequence[str]) -> list[Refused]:
    """What the render refuses in the conda lock beside the profile (check's side)."""
    refusal("conda-lock-stale")
    try:
        conda_lock_of(profile, [exact_conda(p) for p in user_conda], None)
    except InputError as exc:
        return [Refused("conda-lock-stale", exc.message, exc.fix or "")]
    return []
