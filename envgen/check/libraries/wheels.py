"""A binary wheel of packages.pip whose objects load a CUDA library (DT_NEEDED, read from the wheel:
``wheel_libraries.yaml``) that no part of the image provides: the import, or the first call, fails in the image.
The fix names the build that would fit: the package's build for the image's CUDA major (``gpu_builds.yaml``) and a
recorded wheel whose libraries the image holds."""

from __future__ import annotations

from collections import defaultdict

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import finding
from envgen.kb.wheel_libraries import WheelLibraries
from envgen.plan.wheel_needs import WheelNeed, soname_families


def _image_majors(ctx: CheckContext) -> list[int]:
    """The CUDA majors whose runtime (cudart) the image holds."""
    return sorted({p.cuda_major for p in ctx.libraries.providers if p.family == "cudart" and p.cuda_major})


def _fits(ctx: CheckContext, row: WheelLibraries, provided: set[str], optional: list[str]) -> bool:
    """Whether every library of a family ``row`` needs (but the ``optional`` ones) is in ``provided``."""
    families = soname_families(ctx.kb)
    return all(s in provided for obj in row.objects for s in obj.needed
               if s in families and families[s][0] not in optional)


def _way_out(ctx: CheckContext, missing: list[WheelNeed]) -> str:
    need, majors = missing[0], _image_majors(ctx)
    ways = []
    builds = next((b for b in ctx.kb.gpu_builds if need.distribution in b.distributions), None)
    if builds is not None and any(n.cuda_major and n.cuda_major not in majors for n in missing):
        ways += [f"its build for CUDA {m}: {builds.builds[str(m)]} ({builds.FILE}#{builds.key})"
                 for m in majors if str(m) in builds.builds]
    provided = {p.soname for p in ctx.libraries.providers}
    siblings = set(builds.distributions) if builds else {need.distribution}
    python, optional = ctx.profile.python_version, builds.optional if builds else []
    fitting = [r for r in ctx.kb.wheel_libraries if r.distribution in siblings and r.serves(python)
               and r is not need.row and _fits(ctx, r, provided, optional)]
    ways += [f"{r.distribution}=={r.version} (its wheel {r.wheel} loads only libraries the image holds)"
             for r in fitting[:2]]
    image = f"the image's CUDA is {', '.join(map(str, majors))}" if majors else "the image holds no CUDA runtime"
    if ways:
        return f"{image}: use " + "; or ".join(ways)
    families = {n.family for n in missing}
    held = sorted({f"{p.soname} ({p.origin})" for p in ctx.libraries.providers if p.family in families})
    return (f"{image}" + (f" and holds {', '.join(held)}" if held else "")
            + f": install the build of {need.distribution} made for those libraries (another release, a -cu11/-cu12 "
            "name or another index), or give the image the libraries it loads")


def wheel_lib_missing(ctx: CheckContext) -> list[Finding]:
    survey = ctx.plan.wheel_libraries
    out = []
    by_line: dict[str, list[WheelNeed]] = defaultdict(list)
    for need in survey.missing():
        by_line[need.origin].append(need)
    for origin, missing in by_line.items():
        first = missing[0]
        built = {n.cuda_major for n in missing if n.cuda_major}
        objects = sorted({o for n in missing for o in n.objects})
        sonames = (", ".join(n.soname for n in missing) + f" (DT_NEEDED of {objects[0]}"
                   + (f" and {len(objects) - 1} other object(s))" if len(objects) > 1 else ")"))
        out.append(finding(
            "error", "wheel-lib-missing",
            f"{first.distribution}=={first.version} ({origin}; its wheel {first.row.wheel}"
            + (f", built for CUDA {', '.join(map(str, sorted(built)))}" if built else "")
            + f") loads {sonames}, which no part of the image provides: its import or first GPU call fails",
            _way_out(ctx, missing), first.row.cite()))
    for need in survey.missing(optional=True):
        out.append(finding(
            "info", "wheel-lib-optional",
            f"{need.distribution}=={need.version} ({need.origin}) has {need.objects[0]} load {need.soname}, which no "
            "part of the image provides: its documentation calls the library optional, so only the feature that "
            "uses it fails",
            f"give the image {need.soname} if {need.objects[0]} is used", need.row.cite()))
    for item in survey.unrecorded:
        out.append(finding(
            "info", "wheel-libs-unread",
            f"{item.distribution}=={item.version} ({item.origin}) is a GPU build whose wheel for this image is not "
            "recorded: the CUDA libraries it loads are not judged",
            f"python -m tools.kbrefresh.wheel_libs --into envgen/kb/data/wheel_libraries.yaml "
            f"'{item.distribution}=={item.version}'", "gpu_builds.yaml"))
    return out


RULES = [wheel_lib_missing]
