"""Frameworks the base image provides (``base_provides``): envgen installs none of them, so the findings
about installing them do not apply, and what the knowledge base cannot say about such a base is said.

The check judges a provided framework as the official build of the version the profile declares (its
CUDA, arch list and library rows), since the knowledge base has no row of the user's own base; the smoke
test's library tier then checks, in the built image, that the base really holds that version and CUDA
build (probe_base). The other distributions it holds (``base_provides.packages``) are said once too: the
packages.pip lines they satisfy are neither downloaded nor installed, and the probe checks their versions."""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import finding
from envgen.kb.extensions import satisfies
from envgen.kb.pypackages import Requirement
from envgen.plan.requirements import base_conflict

# Findings about how envgen would install a framework: moot for one the base already holds. The first
# part of the code names the framework it is about ("python-*" is about every framework's wheels).
_INSTALL_CODES = {
    "python-no-wheels": ("tensorflow", "pytorch"),
    "python-experimental": ("pytorch",),
    "tf-package-no-gpu": ("tensorflow",),
    "tf-gpu-stub": ("tensorflow",),
    "tf-cpu-package": ("tensorflow",),
    "torch-variant-missing": ("pytorch",),
    "torchaudio-variant-mismatch": ("torchaudio",),
    # the Python is the declared interpreter's, checked by the smoke test (not the base image row's)
    "python-base-unknown": (),
}
# What the check cannot judge for a base it has no row of, said once in the info finding.
NOT_JUDGED = ("whether wheels of that build exist for the base's Python", "which pip distribution carries it",
              "the CUDA libraries it loads and where they lie (the base provides them)")


def moot(f: Finding, ctx: CheckContext) -> bool:
    """A finding about installing a framework that the base image provides: left out of the report."""
    provided = ctx.profile.base_frameworks
    about = _INSTALL_CODES.get(f.code)
    if not provided or about is None:
        return False
    return all(name in provided for name in about if getattr(ctx.profile.frameworks, name) is not None)


def base_frameworks(ctx: CheckContext) -> list[Finding]:
    provided = ctx.profile.base_frameworks
    if not provided or ctx.profile.base_provides is None:
        return []
    declared = ", ".join(f"{name} {getattr(ctx.profile.frameworks, name)}" for name in provided)
    interpreter = ctx.profile.base_provides.python
    return [finding(
        "info", "base-frameworks",
        f"the base image {ctx.profile.base} provides {declared} (in {interpreter}'s environment): envgen installs "
        f"none of them, and the knowledge base has no row of this base, so each is judged as the official build "
        f"of the version declared (its CUDA, arch list and driver needs); not judged here: {'; '.join(NOT_JUDGED)}",
        "nothing to do: the smoke test's library tier checks in the built image that the base holds these "
        "versions and CUDA builds (a mismatch fails the build)",
        "profile: base_provides",
    )]


def base_packages(ctx: CheckContext) -> list[Finding]:
    held = ctx.profile.base_packages
    if not held:
        return []
    taken = [r.spec for r in ctx.plan.requirements if r.stage == "base"]
    lines = (f"; the packages.pip line(s) {', '.join(taken)} are satisfied by it: neither downloaded nor installed"
             if taken else "")
    return [finding(
        "info", "base-packages",
        f"the base image {ctx.profile.base} holds {', '.join(f'{n} {v}' for n, v in sorted(held.items()))} "
        f"(base_provides.packages){lines}",
        "nothing to do: the smoke test's library tier checks in the built image that the base holds these versions "
        "(a mismatch fails the build)",
        "profile: base_provides.packages",
    )]


def base_requires(ctx: CheckContext) -> list[Finding]:
    """A packages.pip line whose recorded Requires-Dist (framework_requires.yaml: every release of its distribution
    the KB records inside the line, on the image's Python) asks for another version of a distribution the base holds
    (``ImagePlan.base_held``): the build would fail at that step (constraints.base.txt), so check says it first.
    Only where the KB has rows of the line's distribution; a line some recorded release of which fits is passed."""
    held, out = ctx.plan.base_held, []
    for r in ctx.plan.requirements if held else ():
        rows = [row for row in ctx.kb.framework_requires if row.distribution == r.name
                and ctx.profile.python_minor in row.python and satisfies(row.version, r.specifier)]
        clashes = [_clash(row.active(ctx.profile.python_minor, frozenset(r.extras)), held) for row in rows]
        if not r.applies or r.stage == "base" or not rows or not all(clashes):
            continue
        row, (name, spec) = rows[0], clashes[0] or ("", "")
        others = f" (and the {len(rows) - 1} other release(s) it records inside the line)" if len(rows) > 1 else ""
        message, fix = base_conflict(name, held[name], f"{r.origin} {r.spec!r}: {row.distribution} {row.version} "
                                                       f"requires {name}{spec}, as {row.read_from} Requires-Dist "
                                                       f"says{others}")
        out.append(finding("error", "base-provides-requires", message, fix, row.cite()))
    return out


def _clash(requires: list[Requirement], held: dict[str, str]) -> tuple[str, str] | None:
    """(name, specifier) of the first requirement that leaves out the version the base holds of its distribution."""
    return next(((q.name, q.spec) for q in requires if q.name in held and not satisfies(held[q.name], q.spec)), None)


RULES = [base_frameworks, base_packages, base_requires]
