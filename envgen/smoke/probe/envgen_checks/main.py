"""The probe's run (``envgen_probe.py`` beside this package is its entry point): the arguments, the tiers in
order (the library tier, then the GPU tier), the report and its table.

    python -I envgen_probe.py [--expect PROFILE_JSON] [--json] [--out FILE] [--tier T] [--arch-list sm_50,sm_60]

Standard library only at its core; every framework is optional. Python 3.7 and later.
Exit status: 0 when no check failed, 1 when one did, 2 on bad arguments.
"""

import argparse
import json
import sys
import time

from .core import common, system
from .gpu import ext, tf_checks, torch_checks
from .library import base, imports, libs

PROBE_VERSION = "1.0"
NOTHING = "nothing-validated"  # the check a run that tried nothing adds
_NOTHING_TEXT = ("nothing to validate: %s holds no framework or GPU package the probe checks, and no profile names "
                 "any; no tier is proved (envgen smoke --python names another interpreter)")


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="envgen_probe", description="envgen smoke probe: proves that the GPU and the frameworks in this environment really work.")
    parser.add_argument("--expect", metavar="PROFILE_JSON",
                        help="resolved profile (JSON) with an optional 'expected' dict")
    parser.add_argument("--json", action="store_true", help="print the JSON report instead of a table")
    parser.add_argument("--out", metavar="FILE", help="also write the JSON report to FILE")
    parser.add_argument("--tier", choices=("libraries", "gpu", "all"), default="all",
                        help="libraries: only what needs no GPU (libraries load, versions agree, kernels "
                             "for the targets); gpu: only the device checks; all: both (default)")
    parser.add_argument("--arch-list", metavar="sm_XX,...",
                        help="check kernels against this list instead of the framework's compiled one")
    return parser.parse_args(argv)


def load_expect(path):
    if not path:
        return {}
    with open(path, "r", encoding="utf-8") as handle:
        data = json.load(handle)
    if not isinstance(data, dict):
        raise ValueError("%s: expected a JSON object" % path)
    return data


def run_libraries(ctx):
    """The library tier: runs with or without a GPU, before any GPU check."""
    try:
        ctx.library_table = libs.load_table()
    except (OSError, ValueError) as exc:
        message = "library tier cannot run: its table %s cannot be read: %s" % (libs.LIBRARIES_FILE, exc)
        ctx.checks.append(common.result("libraries.load", None, common.FAIL, message,
                                              diagnosis=common.diagnose(message, ctx.diagnoses)))
        return
    for name, func in libs.checks() + base.checks(ctx.expect):
        common.run_check(ctx, name, libs.TIER, func)


def run_extensions(ctx, call):
    """GPU extension packages: imported (and, with ``call``, called once on the GPU) after the frameworks."""
    for name, func in ext.checks(ctx, call=call):
        common.run_check(ctx, name, ext.TIER, func)


def run_all(ctx, tier="all"):
    common.run_check(ctx, "python", None, system.check_python)
    if tier in ("libraries", "all"):
        run_libraries(ctx)
        for name, func in imports.checks():  # needs no GPU: part of the library tier
            common.run_check(ctx, name, imports.TIER, func)
    if tier == "libraries":
        ctx.mode = "libraries"
        run_extensions(ctx, call=False)
        if nothing_to_validate(ctx):
            ctx.checks.append(common.result(NOTHING, None, common.SKIPPED, _NOTHING_TEXT % sys.executable))
        return
    common.run_check(ctx, "devices", None, system.check_devices)
    if ctx.mode is None:
        ctx.mode = "gpu" if ctx.gpus else "cpu-only"
    for module in (torch_checks, tf_checks):
        for index, (name, func) in enumerate(module.checks()):
            # the first check imports the framework; when that fails or it is absent, it speaks for all
            if index > 0 and module.FRAMEWORK not in ctx.frameworks:
                break
            common.run_check(ctx, name, module.FRAMEWORK, func)
        module.facts_after(ctx)
    run_extensions(ctx, call=True)
    if nothing_to_validate(ctx):
        ctx.checks.append(common.result(NOTHING, None, common.SKIPPED, _NOTHING_TEXT % sys.executable))


def nothing_to_validate(ctx):
    """True when, without a profile, this Python held no framework and no GPU extension check passed: a run
    that tried nothing proves no tier (issue #38: a venv off PATH, /usr/bin/python3 probed, "validated: gpu")."""
    if ctx.has_expect or ctx.frameworks:
        return False
    return not any(c["framework"] == ext.TIER and c["status"] == common.PASS for c in ctx.checks)


def reached_tier(ctx, tiers, failed):
    """What the run proves: "libraries" (only that tier ran and passed), "gpu" (both tiers passed on a
    GPU), "cpu" (a CPU-only run passed), None when a check failed."""
    if failed or any(c["name"] == NOTHING for c in ctx.checks):
        return None
    if tiers == "libraries":
        return "libraries"
    if ctx.mode == "gpu":
        return "gpu" if tiers == "all" else "gpu-only"
    return "cpu"


def build_report(ctx, duration, tiers="all"):
    counts = {common.PASS: 0, common.FAIL: 0, common.SKIPPED: 0}
    for check in ctx.checks:
        counts[check["status"]] += 1
    return {
        "schema": common.SCHEMA,
        "probe_version": PROBE_VERSION,
        "status": "fail" if counts[common.FAIL] else "pass",
        "mode": ctx.mode,
        "tiers_run": tiers,
        "tier": reached_tier(ctx, tiers, counts[common.FAIL]),
        "profile": ctx.expect.get("name"),
        "gpu_required": ctx.gpu_required(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ctx.started)),
        "duration_s": round(duration, 2),
        "arch_list_override": ctx.arch_override,
        "host": system.host_facts(),
        "python": system.python_facts(),
        "driver": ctx.driver,
        "gpus": ctx.gpus,
        "frameworks": ctx.frameworks,
        "summary": counts,
        "checks": ctx.checks,
    }


def _short_figures(figures, limit=70):
    parts = []
    for key, value in figures.items():
        if isinstance(value, (list, dict)):
            continue
        parts.append("%s=%s" % (key, value))
    text = " ".join(parts)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def render_table(report):
    rows = [("check", "status", "message")]
    for check in report["checks"]:
        rows.append((check["name"], check["status"].upper(), check["message"]))
    width = [max(len(row[i]) for row in rows) for i in (0, 1)]
    lines = ["envgen probe: %s (%s mode, profile %s, %.1f s)"
             % (report["status"].upper(), report["mode"], report["profile"] or "-", report["duration_s"])]
    for index, row in enumerate(rows):
        lines.append("%s  %s  %s" % (row[0].ljust(width[0]), row[1].ljust(width[1]), row[2]))
        if index == 0:
            continue
        check = report["checks"][index - 1]
        figures = _short_figures(check["figures"])
        if figures and check["status"] != common.SKIPPED:
            lines.append("%s  %s  %s" % ("".ljust(width[0]), "".ljust(width[1]), figures))
        if check.get("diagnosis"):
            lines.append("%s  cause: %s" % ("".ljust(width[0] + width[1] + 2), check["diagnosis"]["cause"]))
            lines.append("%s  fix:   %s" % ("".ljust(width[0] + width[1] + 2), check["diagnosis"]["fix"]))
    summary = report["summary"]
    lines.append("%d passed, %d failed, %d skipped" % (summary["pass"], summary["fail"], summary["skipped"]))
    return "\n".join(lines)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    started = time.time()
    try:
        expect = load_expect(args.expect)
    except (OSError, ValueError) as exc:
        sys.stderr.write("envgen_probe: cannot read --expect: %s\n" % exc)
        return 2
    arch = [item.strip() for item in args.arch_list.split(",") if item.strip()] if args.arch_list else None
    ctx = common.Context(expect, arch_override=arch, started=started)
    saved_stdout = sys.stdout
    if args.json:
        sys.stdout = sys.stderr  # frameworks that print must not corrupt the JSON on stdout
    try:
        run_all(ctx, args.tier)
    finally:
        sys.stdout = saved_stdout
    report = build_report(ctx, time.time() - started, args.tier)
    text = json.dumps(report, indent=2, sort_keys=False, default=str)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            handle.write(text + "\n")
    if args.json:
        sys.stdout.write(text + "\n")
    else:
        sys.stdout.write(render_table(report) + "\n")
    sys.stdout.flush()
    return 1 if report["status"] == "fail" else 0

