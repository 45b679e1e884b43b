"""`envgen lock`: resolve a pip profile's complete package set, with hashes, into a lock file.

The resolution runs on the host with pip, for the image's platform (the profile's Python,
CPython, manylinux x86-64), as a dry run: nothing is installed, every archive is fetched once to
be hashed. It runs twice: the framework pins alone (the environment set, what requirements.lock
installs) and the framework pins with packages.pip (the extras set is what that adds). The lock
file lands beside the profile's YAML file; `envgen render`/`build` read it from there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envgen.config import load_config
from envgen.errors import BuildFailed, InputError
from envgen.kb import load_kb
from envgen.pipeline.wheels import configured_wheelhouse, manylinux_platforms, target_options
from envgen.profile import find_profile, load_profile
from envgen.render.lockfile import (
    Lock,
    LockEntry,
    LockInputs,
    canonical_name,
    format_lock,
    lock_path,
    sorted_entries,
)
from envgen.render.plan import render_context, wheelhouse_covers

# Build args that route pip (mirrors, proxies): the host's resolution takes the same route.
ROUTE_ARGS = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST", "HTTP_PROXY", "HTTPS_PROXY",
              "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")
def platform_note(platforms: Sequence[str], glibc: str | None) -> str:
    origin = f"the base image's glibc {glibc}" if glibc else "glibc of the base image unknown"
    return f"manylinux x86_64 (--platform {platforms[0]} down to {platforms[-1]}, {len(platforms)} tags; {origin})"

Runner = Callable[[list[str], Mapping[str, str]], "subprocess.CompletedProcess[str]"]


@dataclass(frozen=True)
class LockOutcome:
    profile: str
    path: Path
    environment: int
    extras: int
    duration_s: float

    def summary(self) -> str:
        return (f"locked {self.profile}: {self.environment} environment package(s), {self.extras} extra(s) "
                f"in {self.duration_s:.1f}s -> {self.path}")


def _run_pip(command: list[str], env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, env=dict(env), capture_output=True, text=True, check=False)


def resolve_command(requirements: Path, report: Path, target: Path, python_minor: str, *,
                    find_links: Sequence[str], index_urls: Sequence[str],
                    platforms: Sequence[str] = manylinux_platforms()) -> list[str]:
    return [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
            "--disable-pip-version-check", "--report", str(report), "--target", str(target),
            *target_options(python_minor, platforms, find_links, index_urls), "-r", str(requirements)]


def entries_from_report(report: Mapping[str, Any]) -> dict[str, LockEntry]:
    """name -> entry for every install item of a pip installation report (``--report``)."""
    entries: dict[str, LockEntry] = {}
    for item in report.get("install", []):
        meta = item.get("metadata", {})
        name, version = canonical_name(str(meta.get("name", ""))), str(meta.get("version", ""))
        archive = item.get("download_info", {}).get("archive_info", {})
        digest = archive.get("hashes", {}).get("sha256")
        if not digest and str(archive.get("hash", "")).startswith("sha256="):
            digest = str(archive["hash"]).split("=", 1)[1]
        if not name or not version or not digest:
            url = item.get("download_info", {}).get("url", "?")
            raise InputError(f"pip's report gives no sha256 for {name or '?'}=={version or '?'} ({url})",
                             fix="lock only wheels from an index or a wheelhouse (no directories or VCS links)")
        entries[name] = LockEntry(name, version, (str(digest),))
    return entries


def resolve(pins: Sequence[str], python_minor: str, *, find_links: Sequence[str], index_urls: Sequence[str],
            env: Mapping[str, str], platforms: Sequence[str] = manylinux_platforms(),
            runner: Runner = _run_pip) -> dict[str, LockEntry]:
    """The complete set ``pins`` need on the image's platform; raises BuildFailed with pip's tail."""
    if not pins:
        return {}
    with tempfile.TemporaryDirectory(prefix="envgen-lock-") as tmp:
        root = Path(tmp)
        requirements, report = root / "requirements.txt", root / "report.json"
        requirements.write_text("\n".join(pins) + "\n", encoding="utf-8")
        command = resolve_command(requirements, report, root / "target", python_minor,
                                  find_links=find_links, index_urls=index_urls, platforms=platforms)
        done = runner(command, env)
        if done.returncode != 0 or not report.is_file():
            lines = [line for line in (done.stderr or "").splitlines() if not line.startswith("WARNING: Location")]
            raise BuildFailed(f"pip could not resolve {' '.join(pins)} for Python {python_minor} "
                              f"(pip exit {done.returncode})",
                              fix="check the pins and that the package index is reachable",
                              tail="\n".join(lines[-15:]))
        return entries_from_report(json.loads(report.read_text(encoding="utf-8")))


def split_sets(environment: Mapping[str, LockEntry], combined: Mapping[str, LockEntry],
               extras: Sequence[str]) -> tuple[LockEntry, ...]:
    """The extras set: what ``combined`` adds to ``environment``. An extra that moves a package the
    frameworks need to another version is an error: the image would hold both."""
    for name, entry in sorted(combined.items()):
        have = environment.get(name)
        if have is not None and have.version != entry.version:
            raise InputError(f"packages.pip ({' '.join(extras)}) moves {name} from {have.version} (what the "
                             f"frameworks resolve to) to {entry.version}",
                             fix=f"pin {name}=={have.version} in packages.pip, or drop the conflicting extra")
    return sorted_entries(e for name, e in combined.items() if name not in environment)


def _write_atomically(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def lock(ref: str, *, wheelhouse: Path | None = None, env: Mapping[str, str] | None = None,
         runner: Runner = _run_pip) -> LockOutcome:
    """Resolve profile ``ref`` and write ``<profile>.lock.txt`` beside its YAML file."""
    started = time.monotonic()
    environ = os.environ if env is None else env
    source = find_profile(ref, environ)
    profile = load_profile(ref, environ)
    if profile.installer != "pip":
        raise InputError(f"envgen lock supports pip profiles; conda profiles ({profile.name!r} has installer: conda) "
                         "resolve from conda channels, which cannot be reached from here",
                         fix="build it unlocked (environment.yml pins every conda package exactly)")
    config = load_config(env)
    kb = load_kb()
    plan = render_context(profile, kb, config, wheelhouse=wheelhouse, use_lock=False)
    house = plan.wheelhouse or configured_wheelhouse(environ)
    if house is not None and not house.is_dir():
        raise InputError(f"wheelhouse {house} is not a directory", fix="pass --wheelhouse DIR with wheels in it")
    find_links = ([str(house)] if house else []) + list(plan.pip.find_links)
    index_urls = [] if wheelhouse_covers(house, plan.pins.pip) else list(plan.pip.index_urls)
    pip_env = dict(environ)
    pip_env.update({key: value for key, value in plan.build_args.items() if key in ROUTE_ARGS})
    pip_env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    framework, extras = list(plan.pins.pip), list(plan.pins.pip_extra)

    glibc = kb.glibc(profile.base)
    platforms = manylinux_platforms(glibc)

    def resolved(pins: list[str]) -> dict[str, LockEntry]:
        return resolve(pins, profile.python_minor, find_links=find_links, index_urls=index_urls, env=pip_env,
                       platforms=platforms, runner=runner)

    environment = resolved(framework)
    combined = resolved(framework + extras) if extras else {}
    extra_set = split_sets(environment, combined, extras)
    result = Lock(LockInputs(profile.python_minor, tuple(framework), tuple(extras)),
                  sorted_entries(environment.values()), extra_set)
    fields = [
        ("envgen", plan.version),
        ("implementation", "cp (CPython)"),
        ("platform", platform_note(platforms, glibc)),
        ("command", f"envgen lock {profile.name}" + (f" --wheelhouse {wheelhouse}" if wheelhouse else "")),
        ("find-links", " ".join(find_links) or "-"),
        ("index-urls", (" ".join(index_urls) or "-") + " (and pip's own configuration)"),
    ]
    host_minor = f"{sys.version_info.major}.{sys.version_info.minor}"
    if host_minor != profile.python_minor:
        fields.append(("markers", f"environment markers were evaluated by the host's Python {host_minor}"))
    target = lock_path(source.path)
    _write_atomically(target, format_lock(result, profile_name=profile.name, extra_fields=fields))
    return LockOutcome(profile.name, target, len(result.environment), len(result.extras),
                       time.monotonic() - started)
