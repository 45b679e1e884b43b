"""`envgen check`: its parameters (written once, ``envgen.cli.spec``), what it does, and the fast path that runs
it without starting Typer (Typer and its pydantic adapters are a third of a check's start-up; a check is run on
every edit of a profile)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from envgen.cli.spec import Param, argument, echo, option, run_parsed, switch
from envgen.errors import InputError

Echo = Callable[..., None]

HELP = "Check a profile against the compatibility knowledge base before anything is built."
PARAMS: tuple[Param, ...] = (
    argument("profile", "Profile name or path to a YAML file."),
    option("gpu", "--gpu", "Target GPU name (repeatable), e.g. 'H100'.", multiple=True),
    option("compute_capability", "--compute-capability", "Target compute capability (repeatable), e.g. 8.0.",
           multiple=True),
    option("driver", "--driver", "Host driver version, e.g. 535.104.05."),
    option("platform", "--platform", "Where the image runs: linux, wsl2 (the Windows driver inside WSL 2, and "
           "WSL's own limits) or windows (the Windows driver minimums alone); or one image platform, linux/amd64 "
           "or linux/arm64: the profile is judged for that platform alone.", default="linux",
           metavar="linux|wsl2|windows|linux/amd64|linux/arm64"),
    switch("as_json", "--json", "Machine-readable list of findings."),
    switch("resolve", "--resolve", "Resolve the pip set for the image's platform with uv and judge every release "
           "on its files: the default, wherever the package index answers (the answer is kept in envgen's cache); "
           "kept for older command lines."),
    switch("offline", "--offline", "Do not ask the package index (also ENVGEN_OFFLINE=1): a kept answer of the "
           "resolution serves, else an info finding names what was not resolved."),
    switch("image", "--image", "PROFILE is an image on the engine (any image with a Python): judge the stack it "
           "actually holds, as `envgen init --from IMAGE` reads it."),
)
PLATFORMS = ("linux", "windows", "wsl2")


def check(profile: str, gpu: list[str] | None, compute_capability: list[str] | None, driver: str | None,
          platform: str, as_json: bool, resolve: bool, image: bool = False, offline: bool = False,
          echo: Echo = echo) -> int:
    """Judge ``profile``; print the findings and what was looked at; 1 when any finding is an error."""
    if image:
        from envgen.suggest.adopt.image import image_profile

        with image_profile(profile, [*(gpu or []), *(compute_capability or [])], driver) as (path, notes):
            for line in notes:
                echo(f"note: {line}", err=True)
            echo(f"judging the stack read from image {profile} (`envgen init --from {profile}` writes it as a "
                 "profile)", err=True)
            return check(str(path), gpu, compute_capability, driver, platform, as_json, resolve, offline=offline,
                         echo=echo)
    from envgen.check import HostSpec, build_context, judge
    from envgen.check.report import findings_to_json, format_findings
    from envgen.pipeline.session import Session
    from envgen.profile.cache import load_profile_cached
    from envgen.profile.values import PLATFORMS as IMAGE_PLATFORMS

    if platform not in PLATFORMS and platform not in IMAGE_PLATFORMS:
        raise InputError(f"option --platform = {platform!r} is not known",
                         fix=f"use linux, wsl2 or windows (the host), or {' or '.join(IMAGE_PLATFORMS)} (the image)")
    session = Session()
    directory = session.cache_dir
    kb, kb_key = session.keyed_kb
    loaded = load_profile_cached(profile, directory if kb_key else None, kb, kb_key)
    if platform in IMAGE_PLATFORMS:  # one of the image's platforms alone (a Linux host)
        loaded, platform = loaded.model_copy(update={"platforms": [platform]}), "linux"
    host = HostSpec(gpus=[*(gpu or []), *(compute_capability or [])], driver=driver,
                    platform="wsl2" if platform == "wsl2" else "windows" if platform == "windows" else "linux")
    ctx = build_context(loaded, kb, host)  # one context: the rules and the scope line read the same plan
    findings = with_resolution(judge(ctx), ctx.plan, kb, directory, offline, resolve)
    if as_json:
        import json

        echo(json.dumps(findings_to_json(findings), indent=2, sort_keys=True))
    else:
        from envgen.check.scope import scope_line
        from envgen.render.downloads import downloads, statement

        echo(format_findings(findings))
        echo(scope_line(ctx))
        from envgen.profile.loader import profile_arg

        echo(statement(downloads(ctx.plan, loaded.mirrors), profile_arg(loaded)))
    return 1 if any(f.severity == "error" for f in findings) else 0


def with_resolution(findings: list[Any], plan: Any, kb: Any, directory: Any, offline: bool,
                    resolve: bool) -> list[Any]:
    """``findings`` and those of the whole pip set resolved and judged on its files (``envgen.lock.judged``: kept in
    the cache directory), errors first. ``--offline`` leaves the index alone; ``--resolve`` asks it even where
    ENVGEN_OFFLINE is set."""
    from envgen.check.findings import SEVERITY_ORDER
    from envgen.lock.judged import offline_asked, set_findings

    environ = {k: v for k, v in os.environ.items() if not (resolve and k == "ENVGEN_OFFLINE")}
    offline = offline or offline_asked(environ)

    from dataclasses import replace

    seen = {(f.code, f.message) for f in findings}
    # the set is resolved for x86-64 (linux/amd64): said so where the profile names other platforms
    amd64 = "" if plan.profile.platforms == ["linux/amd64"] else "linux/amd64"
    more = [replace(f, platform=amd64) for f in set_findings(plan, kb, environ, directory, offline=offline)
            if (f.code, f.message) not in seen]
    if plan.profile.platforms != ["linux/amd64"]:
        from envgen.lock.platforms import platform_findings

        more += platform_findings(plan, environ, directory, offline=offline)
    return sorted([*findings, *more], key=lambda f: SEVERITY_ORDER[f.severity])


def fast(argv: Sequence[str]) -> int | None:
    """Run `envgen check ARGV` without Typer; None when the command line is not a plain, well-formed one (Typer
    then parses it and words its errors)."""
    return run_parsed(PARAMS, check, argv)
