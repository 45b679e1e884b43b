"""The import check: every Python distribution the plan expects is imported, each in a child interpreter.

"Installed" is not "usable": a wheel built against NumPy 1.x under NumPy 2, TensorFlow's generated protobuf
code under protobuf 4, Jinja2 2.x under MarkupSafe 2.1 install cleanly and fail (or print a warning and fail
later) on import. For each distribution of the plan's ``expected.distributions`` (the frameworks, the
``packages.pip`` lines, the conda packages that are Python distributions) the check finds its top-level modules
from its installed metadata (``top_level.txt``, else ``RECORD``), imports them in a child ``python -c`` (a crash
in a native module cannot take the probe down), and matches the child's output against ``diagnoses.json``. All distributions are
imported in one child first (shared imports are paid once: torch, torchvision and torchaudio one child each
took 14.8 s of a 33.6 s probe run on the H200); only when that child fails or shows a break does each distribution
get a child of its own, so one failure names its distribution. A diagnosis marked ``import_break`` fails the check even when
the import returned (torch < 2.3 under NumPy 2 only warns at import, then ``torch.from_numpy`` raises).
Standard library only, Python 3.7+.
"""

import os
import re
import subprocess
import sys

import probe_common

TIER = "imports"
CHILD_TIMEOUT_S = 180
# after the imports: a call that shows a break the import only warns about (torch.from_numpy under NumPy 2)
AFTER_IMPORT = {
    "torch": ("import torch\ntry:\n    import numpy\nexcept ImportError:\n    numpy = None\n"
              "if numpy is not None:\n    torch.from_numpy(numpy.zeros(2))"),
}
# a native module linked against the driver's library fails to load where no driver is mounted (the library tier
# runs without a GPU): that is no break of the package, and the GPU tier's own checks load the driver
_NO_DRIVER = re.compile(r"lib(cuda|nvidia-ml)\.so(\.1)?: cannot open shared object file")
_CHILD = (
    "import importlib, sys, warnings\n"
    "warnings.simplefilter('always')\n"
    "for name in sys.argv[1:]:\n"
    "    importlib.import_module(name)\n"
)


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


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


def top_level_modules(meta_dir):
    """The importable top-level names a distribution installs, from top_level.txt, else its RECORD."""
    names = []
    top = os.path.join(meta_dir, "top_level.txt")
    if os.path.isfile(top):
        with open(top, "r", encoding="utf-8") as handle:
            names = [line.strip().replace("/", ".") for line in handle if line.strip()]
    else:
        record = os.path.join(meta_dir, "RECORD")
        if os.path.isfile(record):
            with open(record, "r", encoding="utf-8") as handle:
                names = [_module_of(line.split(",", 1)[0]) for line in handle]
    public = [n for n in names if n and re.match(r"^[A-Za-z][A-Za-z0-9_]*$", n.split(".")[0])]
    return sorted(set(n.split(".")[0] for n in public))


def _module_of(path):
    """The top-level module a RECORD path belongs to: "pkg/sub/x.py" -> "pkg", "mod.cpython-311-x86_64.so" ->
    "mod"; "" for metadata, scripts and files outside site-packages."""
    parts = path.split("/")
    if parts[0].endswith((".dist-info", ".data", ".egg-info")) or parts[0] in ("..", "bin", "__pycache__"):
        return ""
    if len(parts) > 1:
        return parts[0]
    return parts[0].split(".")[0] if parts[0].endswith((".py", ".so", ".pyd")) else ""


def child_path():
    """``sys.path`` of the interpreter the imports run in (the probe itself may run with -S or -I)."""
    try:
        done = subprocess.run([sys.executable, "-c", "import sys\nfor p in sys.path: print(p)"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return sys.path
    return done.stdout.decode("utf-8", "replace").splitlines() or sys.path


def import_in_child(dists, modules, timeout_s):
    """(returncode, combined output) of importing ``modules`` (then the after-import calls of ``dists``) in a
    child."""
    code = _CHILD + "".join("\n" + AFTER_IMPORT[d] + "\n" for d in dists if d in AFTER_IMPORT)
    try:
        done = subprocess.run([sys.executable, "-c", code] + modules, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return -9, "import of %s did not finish within %d s" % (", ".join(modules), timeout_s)
    return done.returncode, done.stdout.decode("utf-8", "replace")


def _budget(ctx):
    """Seconds one child may take: what is left of the probe's time, within [10, CHILD_TIMEOUT_S]."""
    return max(10.0, min(CHILD_TIMEOUT_S, ctx.timeout_s - ctx.elapsed()))


def _broken(code, found, breaks):
    return code != 0 or (found is not None and found["id"] in breaks)


def _all_at_once(ctx, present, breaks):
    """True when every distribution of ``present`` ((dist, modules) pairs) imports in one child, its
    after-import calls included, with no break in the output."""
    if len(present) < 2:
        return False
    code, output = import_in_child([d for d, _ in present], [m for _, mods in present for m in mods], _budget(ctx))
    return not _broken(code, probe_common.diagnose(output, ctx.diagnoses), breaks)


def import_all(ctx, wanted):
    """(passed, failed as (dist, modules, output, diagnosis), missing, needs_driver) over ``wanted``."""
    metadata = installed_metadata(child_path())
    failed, passed, missing, no_driver = [], [], [], []
    breaks = set(d["id"] for d in ctx.diagnoses if d.get("import_break"))
    present = []
    for dist, framework in wanted:
        meta = metadata.get(dist)
        if meta is None:
            if framework is False:
                missing.append(dist)  # frameworks: their own checks say so; conda: maybe not a Python package
            continue
        modules = top_level_modules(meta)
        if modules:
            present.append((dist, modules))
    if _all_at_once(ctx, present, breaks):
        return [d for d, _ in present], failed, missing, no_driver
    for dist, modules in present:
        code, output = import_in_child([dist], modules, _budget(ctx))
        found = probe_common.diagnose(output, ctx.diagnoses)
        if code != 0 and _NO_DRIVER.search(output) and not os.path.exists("/dev/nvidiactl"):
            no_driver.append(dist)
        elif _broken(code, found, breaks):
            failed.append((dist, modules, output, found))
        else:
            passed.append(dist)
    return passed, failed, missing, no_driver


def check_imports(ctx):
    """Import every distribution of the profile; fail naming each that does not import cleanly."""
    wanted = distributions_to_import(ctx.expect)
    if not wanted:
        raise probe_common.Skip("the profile names no Python distributions")
    passed, failed, missing, no_driver = import_all(ctx, wanted)
    figures = {"imported": passed, "failed": [d for d, _, _, _ in failed], "missing": missing,
               "needs_driver": no_driver,
               "diagnoses": dict((d, found["id"]) for d, _, _, found in failed if found)}
    if failed or missing:
        parts = ["%s (import %s): %s" % (d, ", ".join(m), _last_line(out)) for d, m, out, _ in failed]
        parts += ["%s is named by the profile but not installed" % d for d in missing]
        log = "\n".join("--- %s\n%s" % (d, out) for d, _, out, _ in failed)
        raise probe_common.Fail("%d of %d distributions do not import: %s"
                                % (len(failed) + len(missing), len(passed) + len(failed) + len(missing),
                                   "; ".join(parts)), figures, log)
    note = "; %s load the NVIDIA driver's library, which this run has not got" % ", ".join(no_driver) if no_driver \
        else ""
    return "%d distributions import: %s%s" % (len(passed), ", ".join(passed), note), figures


def _last_line(output):
    lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def checks():
    return [("imports", check_imports)]
