"""One line that says what the check looked at, so "no findings" is read as "looked, and it holds"."""

from __future__ import annotations

from envgen.check.context import CheckContext


def scope_line(ctx: CheckContext) -> str:
    profile, stack = ctx.profile, ctx.plan
    parts = [f"base {profile.base}" + (" (in the knowledge base)" if ctx.base is not None else " (not in the KB)"),
             f"Python {profile.python}"]
    parts += stack.framework_pip
    parts += stack.preinstalled
    extra = len(profile.packages.pip) + len(profile.packages.conda) + len(profile.packages.apt)
    if extra:
        parts.append(f"{extra} other package(s)")
    wanted = {n.soname for n in ctx.libraries.needs}
    if wanted:
        origins = {p.origin for p in ctx.libraries.providers if p.soname in wanted}
        parts.append(f"{len(wanted)} CUDA soname(s) the frameworks load, from {len(origins)} distribution(s)")
    if ctx.stack.targets:
        parts.append("GPU " + ", ".join(t.label for t in ctx.stack.targets))
    return "looked at: " + "; ".join(parts)
