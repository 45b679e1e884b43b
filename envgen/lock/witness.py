"""`envgen check --resolve`: a real resolver as a witness for the profile's pip set.

uv (``uv pip compile``) resolves the frameworks' pins and ``packages.pip`` for the image's platform
(the profile's Python, CPython, manylinux x86-64 up to the base image's glibc, the framework's wheel
index) without installing anything. Its verdict becomes findings: a set that cannot be satisfied is
one error naming the requirements that clash, a requirement with no wheel for the platform one error
naming the platform. A resolved set is read once more for NVIDIA wheels of two CUDA majors that write
the same file. An index that cannot be reached raises :class:`ResolverUnavailable`: the caller says so
in one line and keeps the static findings. The resolution is the one `envgen lock` makes
(``lock_uv.uv_resolve``; pip's dry run for Python 3.7, which uv does not target), so a lock that
fails, fails for the reasons ``--resolve`` names.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from envgen.check import Finding
from envgen.check.util import finding
from envgen.config import load_config
from envgen.errors import BuildFailed, InputError, ResolverUnavailable
from envgen.kb import KnowledgeBase
from envgen.kb.libraries import nvidia_wheel
from envgen.lock.lock_uv import uv_platform, uv_resolve
from envgen.plan.image import ImagePlan
from envgen.plan.lockfile import LockEntry
from envgen.profile import Profile
from envgen.profile.loader import profile_arg
from envgen.profile.requirements import PipLine

_UNREACHABLE = ("Failed to fetch", "error sending request", "tcp connect error", "dns error", "Connection refused",
                "failed to lookup address", "Could not connect", "Max retries exceeded", "NewConnectionError")
SOURCE = "uv pip compile (https://docs.astral.sh/uv/pip/compile/)"


@dataclass(frozen=True)
class Platform:
    python: str  # "3.11"
    glibc: str | None  # the base image's glibc, "2.36"; None when unknown
    note: str


def platform_for(profile: Profile, kb: KnowledgeBase) -> Platform:
    glibc = kb.glibc(profile.base)
    origin = f"the base image's glibc {glibc}" if glibc else "the base image's glibc is unknown"
    return Platform(profile.python_minor, glibc, f"CPython {profile.python_minor}, {uv_platform(glibc)} ({origin})")


def _one_line(text: str) -> str:
    """The resolver's reasons on one line: uv's cause lines, pip's ``ERROR:`` lines (their text is the reason),
    hints and warnings left out."""
    causes = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.lower().startswith(("hint:", "warning")) or line.lower() in ("error:", "error"):
            continue
        for prefix in ("cause:", "ERROR:", "error:"):
            line = line.removeprefix(prefix).strip()
        causes.append(line)
    return " ".join(" ".join(causes).split())


def verdict(returncode: int, stdout: str, stderr: str, platform: Platform, pins: Sequence[str],
            resolver: str = "uv") -> list[Finding]:
    """Findings from one resolver run (exposed for tests with recorded resolver output); ``resolver``: "uv",
    or "pip" (its dry run, for a Python uv does not target)."""
    if returncode == 0:
        resolved = [line.strip() for line in stdout.splitlines() if "==" in line and not line.startswith("#")]
        return [finding("info", "resolve-ok",
                        f"{resolver} resolved {len(resolved)} packages from {len(pins)} pins for {platform.note}",
                        "nothing to do", SOURCE), *_clashes(resolved)]
    if any(marker in stderr for marker in _UNREACHABLE):
        said = _one_line(stderr)[:160]
        raise ResolverUnavailable(
            f"--resolve: the package index cannot be reached{f' ({said})' if said else ''}; only the static check ran",
            fix="check the network, proxy or mirrors.pip_index_url, or run without --resolve")
    reason = _one_line(stderr) or f"{resolver} exited {returncode} and gave no reason"
    if "no wheels with a matching" in stderr or "has no usable wheels" in stderr or "no matching distribution" in \
            stderr.lower():
        return [finding("error", "resolve-no-wheel", f"no wheel for {platform.note}: {reason}",
                        "choose versions that publish wheels for this Python and platform", SOURCE)]
    return [finding("error", "resolve-conflict", f"the pip set cannot be installed together: {reason}",
                    "change one of the two requirements the resolver names", SOURCE)]


def _clashes(resolved: Sequence[str]) -> list[Finding]:
    """NVIDIA wheels of one family for two CUDA majors in the resolved set (they share a directory)."""
    families: dict[str, set[str]] = defaultdict(set)
    for wheel in filter(None, map(nvidia_wheel, resolved)):
        families[wheel.stem].add(f"{wheel.distribution}=={wheel.version}")
    both = {family: sorted(pins) for family, pins in families.items() if len(pins) > 1}
    if not both:
        return []
    listed = "; ".join(" and ".join(pins) for _, pins in sorted(both.items()))
    return [finding("warning", "resolve-cuda-flavours",
                    f"the resolved set holds NVIDIA wheels of two CUDA majors that install into the same "
                    f"site-packages/nvidia/<family>/lib directories: {listed}",
                    "see the lib-* findings; one framework's build for the other CUDA major avoids it", SOURCE)]


def witness(profile: Profile, kb: KnowledgeBase, env: Mapping[str, str] | None = None,
            plan: ImagePlan | None = None) -> list[Finding]:
    """What uv resolves the profile's pip sets to today, for the image's platform (``plan``: the profile's plan,
    when the check made it already)."""
    from envgen.lock.route import resolution_route

    environ = dict(os.environ if env is None else env)
    route = resolution_route(profile, kb, load_config(environ), environ, plan=plan)
    pins = [*route.plan.pins.pip, *route.plan.pins.pip_extra]
    if not pins:
        return [finding("info", "resolve-nothing", "the profile installs nothing with pip: nothing to resolve",
                        "nothing to do", SOURCE)]
    platform = platform_for(route.plan.profile, kb)  # as planned (an NGC base's Python filled in)
    # uv resolves for every Python the KB knows (3.7 too: it builds sdist metadata with its own interpreter), and
    # with sdists allowed, as pip installs them: TensorFlow 2.1's gast==0.2.2 has no wheel, and builds.
    resolver = "uv"
    try:
        resolved = uv_resolve(pins, platform.python, route.glibc, route.platforms, find_links=route.find_links,
                              index_urls=route.uv_extra, index_url=route.index_url,
                              env={"UV_HTTP_RETRIES": "1", **route.uv_env}, only_binary=False)
        entries = resolved.entries
    except BuildFailed as exc:
        return verdict(1, "", exc.tail or exc.one_line(), platform, pins, resolver)
    except InputError as exc:  # every version uv chose, but one has neither a wheel the image can install nor an sdist
        return [finding("error", "resolve-no-wheel", f"no wheel for {platform.note}: {exc.message}",
                        exc.fix or "choose versions that publish wheels for this platform", SOURCE)]
    built = [finding("warning", "resolve-sdist",
                     f"{pin} has no wheel for {platform.note}, only an sdist: pip builds it at install (a pure-Python "
                     "package builds anywhere; one with C code needs a compiler in the image), and `envgen lock` "
                     "cannot pin it (locks hold wheels only)",
                     "pin a version of it that publishes a wheel, or add build tools to packages.apt if it compiles",
                     SOURCE) for pin in resolved.sdists]
    return built + verdict(0, "\n".join(f"{e.name}=={e.version}" for e in entries.values()), "", platform, pins,
                           resolver) + floating_today(profile, route.plan.image.user_lines, entries, platform)


def floating_today(profile: Profile, lines: Sequence[PipLine], entries: Mapping[str, LockEntry],
                   platform: Platform) -> list[Finding]:
    """What each floating packages.pip line (``lines``: those the plan read, whose marker holds) resolves to today
    (a lock, or the build, would take the same)."""
    out = []
    for line in lines:
        entry = entries.get(line.name)
        if line.floats and entry is not None:
            out.append(finding("info", "resolve-floating",
                               f"packages.pip line {line.text!r} resolves to {entry.name}=={entry.version} today "
                               f"({platform.note})", f"pin {line.raw_name}{line.extras_text}=={entry.version} to "
                               f"keep it, or `envgen lock {profile_arg(profile)}`", SOURCE))
    return out
