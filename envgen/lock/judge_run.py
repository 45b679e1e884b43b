"""One cold judgement of a plan's pip set (``judged`` keeps its answer): the exact pins judged on their files, uv's
resolution for the image, and, where it fails, the pairs of requirements that exclude each other."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement

from envgen.check import Finding
from envgen.check.util import finding
from envgen.errors import BuildFailed, InputError, ResolverUnavailable
from envgen.kb import KnowledgeBase
from envgen.lock.lock_uv import image_tags, uv_platform, uv_resolve
from envgen.lock.meet import Asker, clashes, holding, release_asker
from envgen.lock.releases import Target, judge_release
from envgen.lock.route import Route, resolution_route
from envgen.lock.witness import SOURCE, Platform, floating_today, verdict
from envgen.plan.image import ImagePlan
from envgen.pypi import DEFAULT_INDEX, Index, IndexUnreachable, canonical

UV_TIMEOUT_S = 120  # one resolution; past it the set is reported as not resolved
UV_ENV = {"UV_HTTP_RETRIES": "1", "UV_HTTP_TIMEOUT": "20"}


def bounded(command: list[str], env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """uv's process, output captured, stopped after UV_TIMEOUT_S."""
    try:
        return subprocess.run(command, env=dict(env), capture_output=True, text=True, check=False,
                              timeout=UV_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise ResolverUnavailable(f"uv gave no answer in {UV_TIMEOUT_S} s", fix="check the network") from None


def judge(plan: ImagePlan, kb: KnowledgeBase, environ: Mapping[str, str],
          cache: Path | None) -> tuple[list[Finding], str]:
    """(findings, the platform they were judged for); ``kb``: the command's, the one ``plan`` was made with."""
    from envgen.config import load_config

    route = resolution_route(plan.profile, kb, load_config(environ), environ, plan=plan)
    python = plan.profile.python_minor
    platform = Platform(python, route.glibc, f"CPython {python}, {uv_platform(route.glibc)} "
                        f"({'glibc ' + route.glibc if route.glibc else 'glibc of the base unknown'})")
    target = Target(python, tuple(image_tags(python, route.platforms)),
                    tuple(str(a).split("=", 1)[0] for a in plan.profile.packages.apt), plan.profile.base,
                    platform.note)
    index = Index(url=route.index_url or DEFAULT_INDEX, cache=cache)
    asked = [(r.origin, r.line) for r in plan.requirements if r.applies]
    out: list[Finding] = []
    for origin, line in asked:
        if line.exact and "+" not in line.exact:
            out += _guarded(judge_release, index, target, line.name, line.exact, f"{origin} {line.text!r}")
    judged = {line.name for _, line in asked if line.exact}
    pins, index_urls, find_links = _pins(plan, kb, route)
    try:
        resolved = uv_resolve(pins, python, route.glibc, route.platforms, find_links=find_links,
                              index_urls=index_urls, index_url=route.index_url, env={**route.uv_env, **UV_ENV},
                              runner=bounded, only_binary=False, constraints=plan.pins.base)
    except BuildFailed as exc:
        failed = verdict(1, "", exc.tail or exc.one_line(), platform, pins)
        if any(f.severity == "error" for f in out):
            return out, platform.note  # the pins' own files explain the failure
        return out + (_guarded(_clashes, index, target, plan, kb) or failed), platform.note
    except InputError as exc:
        return out + [finding("error", "resolve-no-wheel", f"no file for {platform.note}: {exc.message}",
                              exc.fix or "choose versions that publish wheels for this platform", SOURCE)], \
            platform.note
    for pin in resolved.sdists:
        name, version = pin.split("==", 1)
        if name not in judged:
            out += _guarded(judge_release, index, target, name, version, f"{pin} (resolved)")
    entries = resolved.entries
    out += verdict(0, "\n".join(f"{e.name}=={e.version}" for e in entries.values()), "", platform, pins)
    return out + floating_today(plan.profile, [line for _, line in asked], entries, platform), platform.note


def _clashes(index: Index, target: Target, plan: ImagePlan, kb: KnowledgeBase) -> list[Finding]:
    return clashes(index, target, askers(index, target, plan, kb))


def _guarded(work: Any, *args: Any) -> list[Finding]:
    """``work(*args)``'s findings; an index that stops answering midway leaves them out (uv's verdict stands)."""
    try:
        found: list[Finding] = work(*args)
    except IndexUnreachable:
        return []
    return found


def _pins(plan: ImagePlan, kb: KnowledgeBase, route: Route) -> tuple[list[str], list[str], list[str]]:
    """The set uv resolves, and its indexes: a framework build served from its own index (a local label, torch's
    +cu121) is replaced by the Requires-Dist the KB recorded from its wheel, so the default index alone answers."""
    if not route.index_urls and not [f for f in route.find_links if f.startswith("http")]:
        return [*plan.pins.pip, *plan.pins.pip_extra], route.uv_extra, route.find_links
    pins: list[str] = []
    every = [*plan.pins.pip, *plan.pins.pip_extra]
    # a replaced build's own requirement on another one (torchvision's torch==2.1.2) would pull PyPI's build of it
    replaced = {canonical(Requirement(p).name) for p in every if "+" in p.partition("==")[2]}
    for pin in every:
        recorded = _recorded(plan, kb, pin) if "+" in pin.partition("==")[2] else None
        if recorded is None and "+" in pin.partition("==")[2]:
            raise ResolverUnavailable(f"{pin} is served from its own index, and the knowledge base has no record of "
                                      "its Requires-Dist", fix="run the check where that index is reachable")
        pins += [pin] if recorded is None else [r for r in recorded[0]
                                                if canonical(Requirement(r).name) not in replaced]
    extra = [u for u in route.uv_extra if u not in route.index_urls]
    return pins, extra, [f for f in route.find_links if not f.startswith("http")]


def _recorded(plan: ImagePlan, kb: KnowledgeBase, pin: str) -> tuple[list[str], str] | None:
    """(the Requires-Dist lines, the row's cite) the KB recorded from ``pin``'s wheel, for the image's Python and the
    pin's extras; a torch build whose own wheel is not recorded takes its release's row without the build's
    nvidia-*/triton pins (as the combined set reads it, ``check.packages.combined.read``)."""
    from envgen.check.packages.combined import read
    from envgen.check.packages.installs import Installed

    req = Requirement(pin)
    version = next(iter(req.specifier)).version
    base, _, build = version.partition("+")
    item = Installed(canonical(req.name), base, "frameworks", frozenset(req.extras), build or None)
    found = read(kb, item, plan.profile.python_minor)
    if found is None:
        return None
    row, stated = found
    return [s.text for s in stated], row.cite()


def askers(index: Index, target: Target, plan: ImagePlan, kb: KnowledgeBase) -> list[Asker]:
    """Every pinned release (frameworks and packages.pip) with its Requires-Dist, and every packages.pip line."""
    from packaging.requirements import InvalidRequirement

    out: list[Asker] = []
    for pin in plan.framework_pip:
        req = Requirement(pin)
        version = next(iter(req.specifier)).version
        recorded = _recorded(plan, kb, pin)
        if recorded is not None:
            out.append(Asker(pin, canonical(req.name), version, tuple(req.extras),
                             holding(recorded[0], target.python, ()), recorded[1]))
        elif "+" not in version:
            found = release_asker(index, target, req.name, version, sorted(req.extras), pin)
            out += [found] if found else []
    for requirement in plan.requirements:
        line = requirement.line
        if not requirement.applies:
            continue
        try:
            own = Requirement(line.requirement)
        except InvalidRequirement:
            continue
        out.append(Asker(f"{requirement.origin} {line.text!r}", line.name, None, (), (own,), "the profile"))
        if line.exact and "+" not in line.exact:
            found = release_asker(index, target, line.name, line.exact, line.extras, f"{line.name}=={line.exact}")
            out += [found] if found else []
    return out

