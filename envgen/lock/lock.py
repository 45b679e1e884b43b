"""`envgen lock`: pin everything a pip profile installs into a lock file beside it.

- pip sets: resolved on the host for the image's platform (the profile's Python, CPython, the
  manylinux x86-64 tags the base's glibc allows) by uv (`uv pip compile --python-platform
  --python-version --generate-hashes`, envgen.lock.lock_uv); Python 3.7 targets (uv serves
  >= 3.8) by pip's `install --dry-run --report` here. Twice: the framework pins alone (the
  environment set, requirements.lock) and framework + packages.pip (the extras set is what that adds).
- the installer: uv's own wheel for the image's platform, hash-pinned (builds install with it).
- the base image by digest and the runtime apt packages at exact versions (envgen.lock.lock_base),
  read through the Docker engine.
The lock file lands beside the profile's YAML file; `envgen render`/`build` read it from there.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envgen.config import UserConfig, load_config
from envgen.errors import BuildFailed, InputError
from envgen.files import write_atomically
from envgen.kb import KnowledgeBase
from envgen.lock.held import held_resolution
from envgen.lock.lock_uv import Resolved, Runner, run_command, uv_resolve, uv_serves
from envgen.lock.platforms import chosen_platforms, resolve_platform
from envgen.lock.route import Route, resolution_route
from envgen.lock.wheels import manylinux_platforms, target_options
from envgen.plan.image import ImagePlan, plan_image
from envgen.plan.lock_platforms import AMD64, BASES_FIELD, MAIN_FIELD, main_platform
from envgen.plan.lockfile import (
    AptEntry,
    Lock,
    LockEntry,
    LockInputs,
    format_lock,
    lock_path,
    lock_target,
    sorted_entries,
)
from envgen.profile import Profile, find_profile, load_profile
from envgen.profile.loader import profile_arg
from envgen.profile.requirements import canonical as canonical_name
from envgen.render.plan import TemplateInput
from envgen.vocabulary import SOURCE_DATE_EPOCH_DEFAULT

if TYPE_CHECKING:
    from docker import DockerClient


def platform_note(platforms: Sequence[str], glibc: str | None, arch: str = "x86_64") -> str:
    origin = f"the base image's glibc {glibc}" if glibc else "glibc of the base image unknown"
    return f"manylinux {arch} (--platform {platforms[0]} down to {platforms[-1]}, {len(platforms)} tags; {origin})"


@dataclass(frozen=True)
class LockOutcome:
    profile: str
    path: Path
    environment: int
    extras: int
    duration_s: float
    apt: int = 0
    base: str = ""
    platforms: tuple[str, ...] = ()

    def summary(self) -> str:
        base = f", base {self.base}" if self.base else ""
        where = f" for {', '.join(self.platforms)}" if len(self.platforms) > 1 else ""
        return (f"locked {self.profile}{where}: {self.environment} environment package(s), {self.extras} extra(s), "
                f"{self.apt} apt package(s){base} in {self.duration_s:.1f}s -> {self.path}")


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
            runner: Runner = run_command, constraints: Sequence[str] = ()) -> dict[str, LockEntry]:
    """The complete set ``pins`` need on the image's platform; raises BuildFailed with pip's tail. ``constraints``:
    versions the resolution must keep (the base's, base_provides: pip's ``-c``)."""
    if not pins:
        return {}
    with tempfile.TemporaryDirectory(prefix="envgen-lock-") as tmp:
        root = Path(tmp)
        requirements, report = root / "requirements.txt", root / "report.json"
        requirements.write_text("\n".join(pins) + "\n", encoding="utf-8")
        command = resolve_command(requirements, report, root / "target", python_minor,
                                  find_links=find_links, index_urls=index_urls, platforms=platforms)
        if constraints:
            (root / "constraints.txt").write_text("\n".join(constraints) + "\n", encoding="utf-8")
            command += ["-c", str(root / "constraints.txt")]
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


def environment_set(resolved: Callable[[list[str]], dict[str, LockEntry]], environment: list[str],
                    extras: list[str], names: Mapping[str, str]) -> tuple[dict[str, LockEntry], list[str], list[str]]:
    """(the environment set, the pins it was resolved from, the extras left): the plan's environment pins (the
    frameworks' and the profile's lines they require, ``plan.requirements``) resolved together; a packages.pip line
    whose distribution the result holds (a dependency of a dependency) joins them and the set is resolved again,
    so that the extras stage holds only what the frameworks do not need. ``names``: line -> its distribution."""
    found = resolved(environment)
    while True:
        joining = [spec for spec in extras if names.get(spec) in found]
        if not joining:
            return found, environment, extras
        environment = [*environment, *joining]
        extras = [spec for spec in extras if spec not in joining]
        found = resolved(environment)


def uv_version() -> str:
    from importlib.metadata import version

    return version("uv")


def refuse_judged(plan: ImagePlan, kb: KnowledgeBase, environ: Mapping[str, str]) -> None:
    """The answer `envgen check` gives on the whole pip set (``judged``, kept in the cache): an error it read from the
    releases' own files stops the lock, as it stops a build (a set uv cannot resolve fails the lock's own resolution,
    in its words). ENVGEN_OFFLINE of this process or of ``environ`` leaves the index alone."""
    from envgen.cache import cache_dir
    from envgen.lock.judged import FROM_FILES, offline_asked, set_findings

    found = set_findings(plan, kb, environ, cache_dir(environ), offline=offline_asked(os.environ))
    errors = [f for f in found if f.severity == "error" and f.code in FROM_FILES]
    if errors:
        raise InputError(f"the pip set fails its check: [{errors[0].code}] {errors[0].message}", fix=errors[0].fix)


@dataclass(frozen=True)
class LockedSets:
    """What the resolutions give: the environment set, the extras set, the installer's own wheels."""

    environment: dict[str, LockEntry]
    extras: tuple[LockEntry, ...]
    tools: tuple[LockEntry, ...] = ()
    uv_url: str | None = None
    newest: int | None = None  # the upload time of the newest locked archive (uv reports it)


def resolve_sets(profile: Profile, route: Route, runner: Runner = run_command,
                 uv_runner: Runner | None = None) -> LockedSets:
    """The framework pins alone, then framework + packages.pip (the extras are what that adds), then,
    where uv resolves, uv's own wheel and pip for the image's platform."""
    use_uv = uv_serves(profile.python_minor)
    newest: list[int] = []

    def uv(pins: list[str], constraints: Sequence[str] = ()) -> Resolved:
        return uv_resolve(pins, profile.python_minor, route.glibc, route.platforms, find_links=route.find_links,
                          index_urls=route.uv_extra, index_url=route.index_url, env=route.uv_env,
                          runner=uv_runner or run_command, constraints=constraints, arch=route.arch)

    def constrained(pins: list[str], constraints: Sequence[str]) -> dict[str, LockEntry]:
        if use_uv:
            done = uv(pins, constraints)
            newest.extend([done.newest_upload] if done.newest_upload else [])
            return done.entries
        return resolve(pins, profile.python_minor, find_links=route.find_links, index_urls=route.index_urls,
                       env=route.pip_env, platforms=route.platforms, runner=runner, constraints=constraints)

    # on a base_provides base: its versions constrain every resolution, and it installs none of them (lock.held)
    requirements = route.plan.image.requirements
    resolved = held_resolution(constrained, route.plan.image.base_held, {r.spec: r.origin for r in requirements})
    names = {r.spec: r.name for r in requirements}
    environment, framework, extras = environment_set(resolved, list(route.plan.pins.pip),
                                                     list(route.plan.pins.pip_extra), names)
    combined = resolved(framework + extras) if extras else {}
    split = split_sets(environment, combined, extras)
    if not use_uv:
        return LockedSets(environment, split, newest=max(newest, default=None))
    tool = uv([f"uv=={uv_version()}", "pip"])
    return LockedSets(environment, split, tools=sorted_entries(tool.entries.values()), uv_url=tool.urls["uv"],
                      newest=max(newest, default=None))


def header_fields(profile: Profile, route: Route, sets: LockedSets, wheelhouse: Path | None,
                  asked: Sequence[str] = ()) -> list[tuple[str, str]]:
    """The lock file's header: what was resolved, for which platform, by what, from where."""
    use_uv = uv_serves(profile.python_minor)
    indexes = [*([route.index_url] if route.index_url else []), *route.uv_extra] if use_uv else route.index_urls
    fields = [
        ("envgen", route.plan.version),
        ("profile-hash", route.plan.profile_hash),
        ("target", lock_target(profile.python_minor, route.glibc, route.arch)),
        ("implementation", "cp (CPython)"),
        ("platform", platform_note(route.platforms, route.glibc, route.arch)),
        ("resolver", f"uv {uv_version()} (uv pip compile)" if use_uv
         else "pip --dry-run --report (uv serves Python >= 3.8 only)"),
        ("command", f"envgen lock {profile_arg(profile, lasting=True)}"
                    + (f" --wheelhouse {wheelhouse}" if wheelhouse else "")
                    + "".join(f" --platform {p}" for p in asked)),
        ("find-links", " ".join(route.find_links) or "-"),
        ("index-urls", (" ".join(indexes) or "-") + ("" if use_uv else " (and pip's own configuration)")),
    ]
    if main_platform(profile.platforms) != AMD64:  # written only then: a lock without it is linux/amd64's
        fields.append((MAIN_FIELD, main_platform(profile.platforms)))
    host_minor = f"{sys.version_info.major}.{sys.version_info.minor}"
    if host_minor != profile.python_minor and not use_uv:
        fields.append(("markers", f"environment markers were evaluated by the host's Python {host_minor}"))
    if sets.uv_url:
        fields.append(("uv-wheel", sets.uv_url))
    # SOURCE_DATE_EPOCH for the build: the upload time of the newest locked archive, so it only moves
    # when the lock does (SOURCE_DATE_EPOCH_DEFAULT, 1980-01-01, when unknown).
    fields.append(("source-date-epoch", str(sets.newest or SOURCE_DATE_EPOCH_DEFAULT)))
    return fields


@dataclass(frozen=True)
class BasePins:
    """The base image by digest (or local id) and its runtime apt packages at exact versions."""

    fields: list[tuple[str, str]]
    base: str | None = None
    apt_input: tuple[str, ...] | None = None
    apt: tuple[AptEntry, ...] = ()
    pin: str = ""


def pin_base(client: DockerClient | None, profile: Profile, plan: TemplateInput, config: UserConfig,
             platforms: Sequence[str] = ()) -> BasePins:
    """Read through the Docker engine: the base's digest (with several ``platforms``: each one's manifest, where the
    base is an index), then its apt packages' versions."""
    from envgen.docker import connect
    from envgen.lock.lock_base import base_manifests, ensure_local, lock_apt, lock_base

    client = client or connect()
    pinned = lock_base(client, profile.base, local=profile.local_base)
    manifests = [(BASES_FIELD, base_manifests(client, profile.base, local=profile.local_base, platforms=platforms))
                 ] if len(platforms) > 1 else []
    apt_input = tuple(sorted(plan.runtime_apt))
    ref = pinned.image if pinned.field == "base-image-id" else f"{pinned.image}@{pinned.value}"
    if pinned.field == "base-digest" and apt_input:
        ensure_local(client, ref)
    apt = lock_apt(client, ref, apt_input, ca_bundle=config.ca_bundle, apt_mirror=plan.build_args.get("APT_MIRROR"))
    return BasePins([(pinned.field, pinned.value), ("base-note", pinned.note), *manifests], profile.base, apt_input,
                    apt, pinned.value)


def other_platforms(profile: Profile, route: Route, runner: Runner, chosen: Sequence[str]) -> str:
    """The lock's blocks for ``chosen`` but the main platform (``envgen.lock.platforms``): "" for none. Each with
    uv's and pip's wheels for its machine (builds of that platform install with them)."""
    from envgen.plan.lock_platforms import format_block

    def resolve(pins: list[str], arch: str, tags: tuple[str, ...]) -> Resolved:
        return uv_resolve(pins, profile.python_minor, route.glibc, tags, find_links=route.find_links,
                          index_urls=route.uv_extra, index_url=route.index_url, env=route.uv_env, runner=runner,
                          constraints=route.plan.image.base_constraints, arch=arch)

    note, tools = f"uv {uv_version()} (uv pip compile)", (f"uv=={uv_version()}", "pip")
    return "".join(format_block(resolve_platform(p, route.plan.pins.pip, route.plan.pins.pip_extra,
                                                 profile.python_minor, route.glibc, resolve, note, tools))
                   for p in chosen if p != main_platform(profile.platforms))


def lock(ref: str, *, wheelhouse: Path | None = None, env: Mapping[str, str] | None = None,
         runner: Runner = run_command, uv_runner: Runner | None = None, engine: bool = True,
         client: DockerClient | None = None, kb: KnowledgeBase | None = None,
         platforms: Sequence[str] = ()) -> LockOutcome:
    """Resolve profile ``ref`` and write ``<profile>.lock.txt`` beside its YAML file. ``engine``: also pin
    the base image's digest and the apt packages (needs the Docker engine). ``kb``: the command's (else the
    environment's, ``kb.cache.kb_for``). ``platforms``: the profile's platforms to lock (default: all of them; the
    main platform's sets, ``plan.lock_platforms.main_platform``, are always resolved)."""
    started = time.monotonic()
    environ = os.environ if env is None else env
    source = find_profile(ref, environ)
    profile = load_profile(ref, environ)
    from envgen.plan.installers import installer_of

    if not installer_of(profile).pip_lock:
        raise InputError(f"envgen lock supports pip profiles; conda profiles ({profile.name!r} has installer: conda) "
                         "resolve from conda channels, which cannot be reached from here",
                         fix="build it unlocked (environment.yml pins every conda package exactly)")
    config = load_config(env)
    if kb is None:
        from envgen.kb.cache import kb_for

        kb = kb_for(environ)
    chosen = chosen_platforms(profile, platforms)  # a --platform the profile lacks: refused before any resolution
    plan = plan_image(profile, kb)
    refuse_judged(plan, kb, environ)
    route = resolution_route(profile, kb, config, environ, wheelhouse, plan=plan)
    profile = route.plan.profile  # as planned: the values it left to the KB filled in
    sets = resolve_sets(profile, route, runner, uv_runner)
    fields = header_fields(profile, route, sets, wheelhouse, platforms)
    base = pin_base(client, profile, route.plan, config, chosen) if engine else BasePins([])
    # what the lock was made for: the frameworks' pins and packages.pip as written (``check_inputs``), whichever
    # stage the plan gives each line
    result = Lock(LockInputs(profile.python_minor, tuple(route.plan.image.framework_pip),
                             tuple(route.plan.image.user_pip), base.base, base.apt_input),
                  sorted_entries(sets.environment.values()), sets.extras, tools=sets.tools, apt=base.apt)
    target = lock_path(source.path)
    text = format_lock(result, profile_name=profile.name, extra_fields=[*fields, *base.fields])
    others = other_platforms(profile, route, uv_runner or run_command, chosen)
    write_atomically(target, text + others, mode=0o644)
    return LockOutcome(profile.name, target, len(result.environment), len(result.extras),
                       time.monotonic() - started, len(base.apt), base.pin, chosen)


def lock_line(ref: str, *, kb: KnowledgeBase, wheelhouse: Path | None = None, channels: Sequence[str] = (),
              platforms: Sequence[str] = ()) -> str:
    """`envgen lock` for an installer that installs from a pip lock (its ``lock_command``): the lock written, in one
    line (``channels``: conda's, not asked; ``platforms``: --platform, the profile's own when empty)."""
    return lock(ref, wheelhouse=wheelhouse, kb=kb, platforms=platforms).summary()
