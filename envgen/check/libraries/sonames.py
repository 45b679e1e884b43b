"""CUDA libraries as the loader resolves them: a soname nothing provides, two wheels writing one file,
a copy that shadows the right one, two frameworks that need different builds of one library.

cudart and cuDNN missing or too old for TensorFlow are said by ``frameworks.tensorflow`` (tf-cuda-mismatch,
tf-cudnn-*); these rules cover the rest of the families and the interplay between distributions.
"""

from __future__ import annotations

from collections import defaultdict

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import finding
from envgen.kb.versions import at_least, vtuple
from envgen.plan.libraries import STAGE_NAMES, Need, Provider, search_order

SOURCE = "cuda_libraries.yaml"
_TF_OWN_RULES = ("cudart", "cudnn")  # reported by frameworks.tensorflow


def _reachable(order: list[Provider], soname: str) -> list[Provider]:
    return [p for p in order if p.soname == soname]


def lib_missing(ctx: CheckContext) -> list[Finding]:
    wanted = [n for n in ctx.libraries.needs if n.provision == "search_path"]
    if not wanted:
        return []
    found = ctx.libraries.providers
    order = search_order(found)
    cudart = next((n for n in wanted if n.family == "cudart"), None)
    if cudart is None or not _reachable(order, cudart.soname):
        return []  # tf-cuda-mismatch says the runtime is missing; the rest follows from it
    missing = [n for n in wanted if n.family not in _TF_OWN_RULES and not _reachable(order, n.soname)]
    if not missing:
        return []
    label = missing[0].label
    parts = []
    for need in missing:
        elsewhere = [p for p in found if p.soname == need.soname and not p.on_search_path]
        where = f" ({elsewhere[0].origin} puts it in {elsewhere[0].directory}, not on LD_LIBRARY_PATH)" if elsewhere \
            else ""
        parts.append(f"{need.soname}{where}")
    dists = sorted({n.distribution for n in missing if n.distribution})
    fix = (f"add {', '.join(dists)} (the versions for CUDA {missing[0].carries}) to packages.pip: envgen puts a named "
           "NVIDIA wheel's directory on LD_LIBRARY_PATH" if dists
           else f"provide the CUDA {missing[0].carries} libraries (conda cudatoolkit or a CUDA base image)")
    return [finding(
        "error", "lib-missing",
        f"{label} loads {', '.join(parts)}, which no distribution on the library search path provides: "
        "TensorFlow registers no GPU and runs on the CPU",
        fix, SOURCE)]


def _way_out(ctx: CheckContext, tf_major: int, torch_major: int) -> str:
    ways = []
    release = ctx.torch_release
    if release is not None:
        tags = [v.tag for v in release.variants if v.cuda and vtuple(v.cuda)[0] == tf_major]
        if tags:
            ways.append(f"torch {release.version}+{tags[-1]} (CUDA {tf_major}, the libraries TensorFlow loads)")
    python = vtuple(ctx.profile.python_version)[:2]
    series = [b for b in ctx.kb.tensorflow
              if vtuple(b.cuda)[0] == torch_major and vtuple(b.python_min) <= python <= vtuple(b.python_max)]
    if series:
        newest = max(series, key=lambda b: vtuple(b.series))
        ways.append(f"TensorFlow {newest.series} (built for CUDA {newest.cuda}, the libraries torch loads)")
    ways.append("or two images, one per framework")
    return "; ".join(ways)


def lib_clash(ctx: CheckContext) -> list[Finding]:
    """Two wheels that write the same file into one directory (cu11 and cu12 flavours of a family). One
    finding per framework that loses a library it needs (with the way out), one warning for the rest."""
    groups: dict[tuple[str, str], list[Provider]] = defaultdict(list)
    for p in ctx.libraries.providers:
        if p.distribution:
            groups[(p.directory, p.soname)].append(p)
    wanted = ctx.libraries.needs
    lost: dict[str, list[str]] = defaultdict(list)  # framework label -> sentences
    harmless: list[str] = []
    for (directory, soname), group in sorted(groups.items()):
        distinct = {(p.distribution, p.cuda_major): p for p in group}
        if len({major for _, major in distinct}) < 2:
            continue
        members = sorted(distinct.values(), key=lambda p: (p.stage, p.origin))
        last = [p for p in members if p.stage == members[-1].stage]
        winner = last[0] if len(last) == 1 else None
        names = " and ".join(f"{p.origin} ({STAGE_NAMES[p.stage]})" for p in members)
        verdict = (f"{winner.distribution} is installed last and wins" if winner
                   else "pip's install order decides which stays")
        sentence = f"{directory}/{soname} ({names}: {verdict})"
        losers = {n.label for n in wanted
                  if n.soname == soname and (winner is None or n.cuda_major != winner.cuda_major)}
        for label in sorted(losers):
            lost[label].append(sentence)
        if not losers:
            harmless.append(sentence)
    out = []
    majors = {n.framework: n.cuda_major for n in wanted}
    for label, sentences in sorted(lost.items()):
        tf, torch = majors.get("tensorflow"), majors.get("torch")
        fix = (_way_out(ctx, tf, torch) if tf is not None and torch is not None and tf != torch
               else "install one flavour of each library: the one built for the framework's CUDA major")
        out.append(finding(
            "error", "lib-framework-conflict",
            f"two CUDA majors' wheels write the same files, so {label} may load libraries built for another CUDA "
            f"and fail at run time: {'; '.join(sentences)}",
            fix, SOURCE))
    if harmless:
        out.append(finding("warning", "lib-clash",
                           f"two distributions write the same file, one silently overwriting the other: "
                           f"{'; '.join(harmless)}",
                           "keep one of the two distributions", SOURCE))
    return out


def _describe(p: Provider) -> str:
    built = f" for CUDA {p.cuda_major}" if p.cuda_major is not None else ""
    return f"{p.origin} ({p.directory}, {p.version}{built})"


def lib_shadowed(ctx: CheckContext) -> list[Finding]:
    """One soname reachable from two directories: the first on the search path wins."""
    order = search_order(ctx.libraries.providers)
    out: list[Finding] = []
    seen: set[str] = set()
    for need in ctx.libraries.needs:
        if need.provision != "search_path" or need.soname in seen:
            continue
        seen.add(need.soname)
        reachable = _reachable(order, need.soname)
        if len({p.directory for p in reachable}) < 2:
            continue
        first, shadowed = reachable[0], [p for p in reachable[1:] if p.directory != reachable[0].directory]
        wrong = _wrong_build(first, need)
        text = (f"{need.soname} is on the search path twice: {_describe(first)} comes first and is what "
                f"{need.label} loads; {', '.join(_describe(p) for p in shadowed)} is shadowed")
        if wrong:
            out.append(finding("error", "lib-shadowed", f"{text}, and the copy that wins {wrong}",
                               f"remove {first.origin}, or give {need.label} the build it needs first on "
                               "LD_LIBRARY_PATH", SOURCE))
        else:
            out.append(finding("info", "lib-shadowed", text, "nothing to do: the right copy wins", SOURCE))
    return out


def _wrong_build(p: Provider, need: Need) -> str:
    if p.cuda_major is not None and p.cuda_major != need.cuda_major:
        return f"was built for CUDA {p.cuda_major}, not {need.cuda_major}"
    if need.min_version and at_least(p.version, need.min_version) is False:
        return f"is {p.version}, older than the {need.min_version} {need.label} was built with"
    return ""


RULES = [lib_missing, lib_clash, lib_shadowed]
