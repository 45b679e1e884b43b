"""The import check: every Python distribution the plan expects is imported, each module in a child interpreter.

"Installed" is not "usable": a wheel built against NumPy 1.x under NumPy 2, TensorFlow's generated protobuf
code under protobuf 4, Jinja2 2.x under MarkupSafe 2.1 install cleanly and fail (or print a warning and fail
later) on import. For each distribution of the plan's ``expected.distributions`` (the frameworks, the
``packages.pip`` lines, the conda packages that are Python distributions) the check finds the top-level modules it
installs (imports_names: RECORD, never ``*.libs`` or a ``top_level.txt`` name nothing backs), imports them
in a child ``python`` (a crash in a native module cannot take the probe down) and matches each module's output
against ``diagnoses.json``. One child imports every module, each on its own (shared imports are paid once: torch,
torchvision and torchaudio one child each took 14.8 s of a 33.6 s probe run on the H200); the modules that fail
there are imported once more in a child of their own, apart from the others, so a failure costs one more child
whether 1 or 100 fail (imports_run), and the verdict names each failing module with its error. A module
that fails only for want of an extra the image does not hold (black's ``blackd`` without ``black[d]``) is noted,
not failed. A diagnosis marked ``import_break`` fails the check even when the import returned (torch < 2.3 under
NumPy 2 only warns at import, then ``torch.from_numpy`` raises). Standard library only, Python 3.7+.
"""

import os
import re
import subprocess
import sys
import time

from ..core import common
from . import imports_run
from .imports_names import (across_note, canonical, extra_only_requirements, needs_extra,
                                 top_level_modules)

__all__ = ["canonical", "top_level_modules"]  # the names the unit tests read from here

TIER = "imports"
# after the imports: a call that shows a break the import only warns about (torch.from_numpy under NumPy 2)
AFTER_IMPORT = {
    "torch": ("import torch\ntry:\n    import numpy\nexcept ImportError:\n    numpy = None\n"
              "if numpy is not None:\n    torch.from_numpy(numpy.zeros(2))"),
}
# a native module linked against the driver's library fails to load where no driver is mounted (the library tier
# runs without a GPU): that is no break of the package, and the GPU tier's own checks load the driver
_NO_DRIVER = re.compile(r"lib(cuda|nvidia-ml)\.so(\.1)?: cannot open shared object file")

def marker_holds(marker):
    """An environment marker evaluated by this interpreter (pip's own packaging, else packaging); True without a
    marker; False where it cannot be read here (pip skipped or kept it: not ours to say)."""
    if not marker:
        return True
    try:
        from pip._vendor.packaging.markers import Marker
    except Exception:  # noqa: BLE001 (no pip in this environment)
        try:
            from packaging.markers import Marker
        except Exception:  # noqa: BLE001
            return False
    try:
        return bool(Marker(marker).evaluate())
    except Exception:  # noqa: BLE001 (a marker this packaging cannot read)
        return False


# a distribution's kind in the expected document -> is it a framework (None: a conda package, maybe no Python)
_FRAMEWORK = {"framework": True, "pip": False, "conda": None}


def distributions_to_import(expect):
    """(canonical name, is a framework) for every distribution the plan's expected document names
    (``expected.distributions``: the frameworks, packages.pip, the conda packages), in install order."""
    rows = (expect.get("expected") or {}).get("distributions") or []
    seen, unique = set(), []
    for row in rows:
        name = canonical(row.get("name") or "")
        if name and name not in seen and marker_holds(row.get("marker")):
            seen.add(name)
            unique.append((name, _FRAMEWORK.get(row.get("kind"))))
    return unique


def installed_metadata(paths=None):
    """canonical distribution name -> its .dist-info / .egg-info directory, first on ``sys.path`` wins."""
    found = {}
    for entry in paths if paths is not None else sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        try:
            names = sorted(os.listdir(entry))
        except OSError:
            continue
        for item in names:
            if item.endswith((".dist-info", ".egg-info")):
                dist = canonical(item.rsplit(".", 1)[0].split("-")[0])
                found.setdefault(dist, os.path.join(entry, item))
    return found


def child_path():
    """``sys.path`` of the interpreter the imports run in (the probe itself may run with -S or -I)."""
    try:
        done = subprocess.run([sys.executable, "-c", "import sys\nfor p in sys.path: print(p)"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return sys.path
    return done.stdout.decode("utf-8", "replace").splitlines() or sys.path


def _labels(dist, modules):
    """The child's step labels of one distribution: its modules, then its after-import call."""
    return list(modules) + ([dist + "@after"] if dist in AFTER_IMPORT else [])


def _steps(present):
    """[label, module, code] for every module of ``present`` ((dist, metadata, modules)), each once."""
    steps, seen = [], set()
    for dist, _, modules in present:
        for label in _labels(dist, modules):
            if label not in seen:
                seen.add(label)
                steps.append([label, None, AFTER_IMPORT[dist]] if label.endswith("@after") else [label, label, None])
    return steps


def _deadline(ctx, share):
    """When a pass must end: ``share`` of what is left of the probe's time from now, at least 10 s."""
    return time.time() + max(10.0, share * (ctx.timeout_s - ctx.elapsed()))


def _bad(result, ctx, breaks):
    """(is a break, diagnosis) of one step's (status, output)."""
    found = common.diagnose(result[1], ctx.diagnoses)
    return result[0] != "ok" or (found is not None and found["id"] in breaks), found


def import_steps(ctx, steps, breaks):
    """{label: (status, output)}: every step in one child; the steps that failed there once more, apart."""
    results = imports_run.run_steps(steps, _deadline(ctx, 0.75))
    again = [s for s in steps if _bad(results[s[0]], ctx, breaks)[0]]
    if again:
        results.update(imports_run.run_steps(again, _deadline(ctx, 1.0)))
    return results, [s[0] for s in again]


def _with_note(dist, output, found, ctx, metadata, owners):
    """(output, diagnosis) with the probe's line naming both packages first where the traceback itself has no
    diagnosis and the import failed on a part of another installed distribution (imports_names.across_note);
    what a framework logged before the traceback (TensorFlow's "Could not find cuda drivers") is no cause."""
    start = output.rfind("Traceback (most recent call last)")
    if common.diagnose(output[max(start, 0):], ctx.diagnoses) is not None:
        return output, found
    note = across_note(dist, output, metadata, owners)
    if not note:
        return output, found
    output = note + "\n" + output
    return output, common.diagnose(output, ctx.diagnoses)


def _judge(dist, modules, results, ctx, breaks, metadata, owners):
    """(failing [(module, output, diagnosis)], needs the driver, [(module, extra, missing module)])."""
    failing, driver, extras, wants = [], False, None, []
    meta = metadata[dist]
    for label in _labels(dist, modules):
        bad, found = _bad(results[label], ctx, breaks)
        status, output = results[label]
        if not bad:
            continue
        if status != "ok" and _NO_DRIVER.search(output) and not os.path.exists("/dev/nvidiactl"):
            driver = True
            continue
        if status != "ok":
            extras = extra_only_requirements(meta) if extras is None else extras
            need = needs_extra(output, extras, metadata)
            if need:
                wants.append((label, need[0], need[1]))
                continue
            output, found = _with_note(dist, output, found, ctx, metadata, owners)
        failing.append((label, output, found))
    return failing, driver, wants


def import_all(ctx, wanted):
    """The outcome over ``wanted``: a dict of passed, failed ((dist, [(module, output, diagnosis)])), missing,
    needs_driver, needs_extra ((dist, module, extra, missing module)), the modules' results and those retried."""
    metadata = installed_metadata(child_path())
    out = {"passed": [], "failed": [], "missing": [], "needs_driver": [], "needs_extra": []}
    present = []
    owners = {}  # module -> distribution, made at the first import that fails on another's module
    for dist, framework in wanted:
        meta = metadata.get(dist)
        if meta is None:
            if framework is False:
                out["missing"].append(dist)  # frameworks: their own checks say so; conda: maybe not Python
            continue
        modules = top_level_modules(meta)
        if modules:
            present.append((dist, meta, modules))
    breaks = set(d["id"] for d in ctx.diagnoses if d.get("import_break"))
    out["results"], out["retried"] = import_steps(ctx, _steps(present), breaks)
    for dist, _, modules in present:
        failing, driver, wants = _judge(dist, modules, out["results"], ctx, breaks, metadata, owners)
        out["needs_extra"] += [(dist,) + want for want in wants]
        if failing:
            out["failed"].append((dist, failing))
        elif driver:
            out["needs_driver"].append(dist)
        else:
            out["passed"].append(dist)
    return out


def _figures(out):
    skipped = set(module for _, module, _, _ in out["needs_extra"])
    bad = set(module for _, failing in out["failed"] for module, _, _ in failing)
    labels = [label for label in out["results"] if not label.endswith("@after")]
    return {"imported": out["passed"], "failed": [d for d, _ in out["failed"]], "missing": out["missing"],
            "needs_driver": out["needs_driver"],
            "diagnoses": dict((d, f[0][2]["id"]) for d, f in out["failed"] if any(x[2] for x in f[:1])),
            "needs_extra": ["%s of %s needs %s[%s] (no %s)" % (m, d, d, e, x) for d, m, e, x in out["needs_extra"]],
            "modules": {"ok": sorted(m for m in labels if m not in bad and m not in skipped),
                        "failed": sorted(m for m in labels if m in bad),
                        "needs_extra": sorted(m for m in labels if m in skipped)},
            "modules_total": len(labels), "retried": len(out["retried"])}


def check_imports(ctx):
    """Import every distribution of the profile; fail naming each module that does not import, with its error."""
    wanted = distributions_to_import(ctx.expect)
    if not wanted:
        raise common.Skip("the profile names no Python distributions")
    out = import_all(ctx, wanted)
    figures = _figures(out)
    notes = ""
    if out["needs_driver"]:
        notes += "; %s load the NVIDIA driver's library, which this run has not got" % ", ".join(out["needs_driver"])
    if out["needs_extra"]:
        notes += "; not imported, for want of an extra the image does not hold: " + ", ".join(figures["needs_extra"])
    failed, missing, passed = out["failed"], out["missing"], out["passed"]
    if failed or missing:
        parts = ["%s (%s): %s" % (m, d, _last_line(o)) for d, failing in failed for m, o, _ in failing]
        parts += ["%s is named by the profile but not installed" % d for d in missing]
        log = "\n".join("--- %s (%s)\n%s" % (m, d, o) for d, failing in failed for m, o, _ in failing)
        raise common.Fail("%d of %d distributions do not import: %s%s"
                                % (len(failed) + len(missing), len(passed) + len(failed) + len(missing),
                                   "; ".join(parts), notes), figures, log)
    return "%d distributions import: %s%s" % (len(passed), ", ".join(passed), notes), figures


def _last_line(output):
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def checks():
    return [("imports", check_imports)]
