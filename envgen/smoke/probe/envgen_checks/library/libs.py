"""The library tier of the envgen probe: what a GPU stack needs, proved without a GPU.

For each framework: the CUDA/cuDNN/NCCL versions it was built with and the sonames it will load; each
soname is loaded with ctypes as the framework would (the real LD_LIBRARY_PATH; for PyTorch, the
libraries its RPATH made it load, read from /proc/self/maps after ``import torch``), and the path it
resolved to and the version the library reports are compared with the built-with versions. The
compiled architecture list is compared with the profile's GPU targets. Nothing here needs a GPU or a
driver. The parts by kind: libs_facts (the frameworks' built-with versions, what to check),
libs_load (one library loaded), libs_search (where a soname resolves), libs_version
(what a library reports). Standard library only; Python 3.7+.
"""

import json
import os

from ..core.common import Fail, Skip
from ..core.kernels import kernel_support
from .libs_facts import derived_libraries, tensorflow_facts, torch_facts
from .libs_load import _ctypes, check_library, describe_problem
from .libs_search import ld_cache

LIBRARIES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libraries.json")
TIER = "libraries"


def load_table(path=None):
    with open(path or LIBRARIES_FILE, "r", encoding="utf-8") as handle:
        return json.load(handle)


# --- the checks ----------------------------------------------------------------------------------

def check_frameworks(ctx):
    """Built-with versions of each framework present; fills ctx.library_frameworks."""
    found = {}
    for name, reader in (("torch", torch_facts), ("tensorflow", tensorflow_facts)):
        facts = reader(ctx)
        if facts is not None:
            found[name] = facts
    ctx.library_frameworks = found
    for name in ("torch", "tensorflow"):
        if name not in found and ctx.expects_framework(name):
            ctx.library_frameworks_missing = True
            raise Fail("%s %s expected by the profile but not installed (No module named '%s')"
                       % (name, ctx.expected(name), name), {"frameworks": found})
    if not found:
        return "no framework installed", {}
    parts = []
    for name, facts in sorted(found.items()):
        if facts.get("cuda_build"):
            parts.append("%s %s built with CUDA %s, cuDNN %s%s" % (
                name, facts["version"], facts.get("cuda"), facts.get("cudnn") or "-",
                ", NCCL %s" % facts["nccl"] if facts.get("nccl") else ""))
        else:
            parts.append("%s %s (CPU build)" % (name, facts["version"]))
    figures = dict((name, dict((k, v) for k, v in facts.items() if k != "loaded"))
                   for name, facts in found.items())
    return "; ".join(parts), figures


def check_loading(ctx):
    """Load every library the stack needs and compare versions."""
    _ctypes()
    table = ctx.library_table
    expected = (ctx.expect.get("expected") or {}).get("libraries")
    source = "profile (expected.libraries)"
    if expected is None:
        expected = derived_libraries(table, ctx.library_frameworks, ctx.expect.get("expected"))
        source = "what the frameworks report"
    else:
        loaded = (ctx.library_frameworks.get("torch") or {}).get("loaded") or {}
        expected = [dict(item, loaded_from=loaded.get(item["soname"])) if loaded.get(item["soname"])
                    else dict(item) for item in expected]
    if not expected:
        if getattr(ctx, "library_frameworks_missing", False):
            raise Skip("nothing to load: a framework the profile expects is missing (see libraries.frameworks, "
                       "which failed)")
        if ctx.gpu_required():
            raise Fail("library tier found nothing to check: no framework built with CUDA is installed and "
                       "the profile names no libraries, so nothing proves this GPU image")
        raise Skip("no CUDA libraries to check (%s)" % ("CPU-only profile" if ctx.gpu_required() is False
                                                        else "no framework built with CUDA"))
    cache = ld_cache()
    records = [check_library(ctx, item, cache) for item in expected]
    figures = {"source": source, "libraries": records,
               "ld_library_path": os.environ.get("LD_LIBRARY_PATH", "")}
    problems = [r for r in records if r.get("problem")]
    if problems:
        # the runtime first: without it a framework loads nothing else (TensorFlow's "GPU will not be used")
        missing = sorted((r for r in problems if r["problem"] == "missing"), key=lambda r: r["family"] != "cudart")
        first = missing[0] if missing else problems[0]
        others = [r["soname"] for r in problems if r is not first]
        raise Fail(describe_problem(first) + ("; also: %s" % ", ".join(others) if others else ""), figures)
    shadowed = ["%s (%s shadowed by %s)" % (r["soname"], ", ".join(
        "%s %s" % (c["path"], c["version"] or "?") for c in r["shadowed"]), r["path"])
                for r in records if r.get("shadowed")]
    message = "%d libraries load (%s): %s" % (len(records), source, ", ".join(
        "%s %s" % (r["soname"], r["version"] or "?") for r in records))
    if shadowed:
        message += "; two copies on the search path, the later shadowed: " + "; ".join(shadowed)
    return message, figures


def check_arch(ctx):
    """The compiled architecture list against the profile's GPU targets, without a device."""
    targets = [t for t in (ctx.expected("gpu_targets") or []) if isinstance(t, dict)
               and t.get("compute_capability")]
    frameworks = ctx.library_frameworks
    rows, missing = {}, []
    for name, facts in sorted(frameworks.items()):
        arch = ctx.arch_override or facts.get("arch_list") or []
        if not facts.get("cuda_build") or not arch:
            continue
        for target in targets:
            capability = [int(p) for p in str(target["compute_capability"]).split(".")[:2]]
            sass, ptx = kernel_support(capability, arch)
            label = "%s sm_%d%d" % (target.get("name"), capability[0], capability[1])
            rows["%s %s" % (name, label)] = {"sass": sass, "ptx": ptx}
            if not sass and not ptx:
                missing.append("%s has no kernels for sm_%d%d in the compiled architectures (%s) for target %s"
                               % (name, capability[0], capability[1], " ".join(arch), target.get("name")))
    if missing:
        raise Fail("; ".join(missing), {"targets": rows})
    if not rows:
        raise Skip("no GPU targets given" if not targets else
                   "no CUDA framework with a compiled architecture list to judge for %s"
                   % ", ".join(str(t.get("name")) for t in targets))
    parts = []
    for key, value in sorted(rows.items()):
        parts.append("%s: %s" % (key, ", ".join(value["sass"]) if value["sass"]
                                 else "PTX %s only (JIT-compiled by the driver)" % ", ".join(value["ptx"])))
    return "; ".join(parts), {"targets": rows}


def checks():
    return [
        ("libraries.frameworks", check_frameworks),
        ("libraries.load", check_loading),
        ("libraries.arch", check_arch),
    ]
