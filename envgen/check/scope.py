"""One line that says what the check looked at, so "no findings" is read as "looked, and it holds"."""

from __future__ import annotations

from envgen.check.context import build_context
from envgen.check.installs import installed
from envgen.check.stack import resolve_stack
from envgen.kb import KnowledgeBase
from envgen.profile import Profile


def scope_line(profile: Profile, kb: KnowledgeBase) -> str:
    ctx = build_context(profile, kb, None)
    stack = resolve_stack(profile, kb)
    parts = [f"base {profile.base}" + (" (in the knowledge base)" if ctx.base is not None else " (not in the KB)"),
             f"Python {profile.python}"]
    parts += [pin for pin in stack.pip if pin not in profile.packages.pip]
    parts += stack.preinstalled
    extra = len(profile.packages.pip) + len(profile.packages.conda) + len(profile.packages.apt)
    if extra:
        parts.append(f"{extra} other package(s)")
    wanted = {n.soname for n in ctx.libraries.needs}
    if wanted:
        origins = {p.origin for p in ctx.libraries.providers if p.soname in wanted}
        parts.append(f"{len(wanted)} CUDA soname(s) the frameworks load, from {len(origins)} distribution(s)")
    have = installed(ctx)
    stated = [i.label for i in have.values() if kb.requires_of(i.name, i.version, i.build) is not None]
    if stated:
        parts.append(f"the Requires-Dist of {', '.join(stated)}")
    parts.append(f"{len(have)} distribution(s) against {len(kb.package_breaks)} known package breaks")
    if ctx.targets:
        parts.append("GPU " + ", ".join(t.label for t in ctx.targets))
    return "looked at: " + "; ".join(parts)
