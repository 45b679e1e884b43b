"""One line that says what the check looked at, so "no findings" is read as "looked, and it holds"."""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.packages.combined import row_of
from envgen.check.packages.installs import installed


def scope_line(ctx: CheckContext) -> str:
    profile, stack = ctx.profile, ctx.plan
    parts = [f"base {profile.base}" + (" (in the knowledge base)" if ctx.base is not None else " (not in the KB)"),
             f"Python {profile.python_version}"]
    parts += stack.framework_pip
    parts += stack.preinstalled
    gpu_packages = [e.label for e in ctx.plan.extensions]
    if gpu_packages:
        parts.append("GPU extension package(s) " + ", ".join(gpu_packages))
    extra = len(profile.packages.pip) + len(profile.packages.conda) + len(profile.packages.apt) - len(gpu_packages)
    if extra:
        parts.append(f"{extra} other package(s)")
    wanted = {n.soname for n in ctx.libraries.needs}
    if wanted:
        origins = {p.origin for p in ctx.libraries.providers if p.soname in wanted}
        parts.append(f"{len(wanted)} CUDA soname(s) the frameworks load, from {len(origins)} distribution(s)")
    have = installed(ctx)
    stated = [i.label for i in have.values() if row_of(ctx.kb, i) is not None]
    if stated:
        parts.append(f"the Requires-Dist of {', '.join(stated)}")
    parts.append(f"{len(have)} distribution(s) against {len(ctx.kb.package_breaks)} known package breaks")
    if ctx.plan.targets:
        parts.append("GPU " + ", ".join(t.label for t in ctx.plan.targets))
    host = list(ctx.host.gpus)  # as given, also a card the profile names too (judged once, under its name)
    platform = {"wsl2": " (WSL 2)", "windows": " (Windows driver)"}.get(ctx.host.platform, "")
    if host or ctx.host.driver:
        parts.append("host " + ", ".join([*host, *([f"driver {ctx.host.driver}"] if ctx.host.driver else [])])
                     + platform)
    elif ctx.gpu:
        parts.append("no host GPU or driver given (--gpu, --driver): judged for the profile's GPUs only")
    return "looked at: " + "; ".join(parts)
