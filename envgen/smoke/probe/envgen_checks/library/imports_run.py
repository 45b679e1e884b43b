"""Running the import check's steps in child interpreters (imports.py): one child imports every module,
each in its own ``try`` so one failure stops nothing, and writes a marker line before and after each; a step
that starts and never ends is the one that crashed the child or ran past the deadline, and the steps after it go
to a new child. The parent prints progress every ``PROGRESS_S`` seconds on stderr. Standard library only,
Python 3.7+.
"""

import json
import re
import subprocess
import sys
import tempfile
import time

PROGRESS_S = 10.0
_MARK = "@@envgen-import@@"
_MARK_RE = re.compile(r"^" + _MARK + r" (start|ok|fail) (\S+)$", re.MULTILINE)
# a step: [label, module to import or None, code to run or None]
_CHILD = (
    "import importlib, json, sys, traceback, warnings\n"
    "warnings.simplefilter('always')\n"
    "def mark(what, label):\n"
    "    sys.stderr.flush()\n"
    "    sys.stderr.write('\\n" + _MARK + " %s %s\\n' % (what, label))\n"
    "    sys.stderr.flush()\n"
    "for label, module, code in json.loads(sys.argv[1]):\n"
    "    mark('start', label)\n"
    "    try:\n"
    "        importlib.import_module(module) if module else exec(code, {})\n"
    "        status = 'ok'\n"
    "    except BaseException:\n"
    "        traceback.print_exc()\n"
    "        status = 'fail'\n"
    "    mark(status, label)\n"
)


def _progress(started, done, failed, total):
    sys.stderr.write("envgen probe: imports: %d of %d modules done, %d failed (%.0f s)\n"
                     % (done, total, failed, time.time() - started))
    sys.stderr.flush()


def parse(text):
    """{label: (status, output)} of the steps a child finished, and (label, output) of one it started and did not
    finish (None when none)."""
    finished, open_step = {}, None
    position, label = 0, None
    for found in _MARK_RE.finditer(text):
        what, name = found.group(1), found.group(2)
        segment = text[position:found.start()]
        if what == "start":
            label = name
        elif label == name:
            finished[name] = (what, segment.strip("\n"))
            label = None
        position = found.end() + 1
    if label is not None:
        open_step = (label, text[position:].strip("\n"))
    return finished, open_step


def _child(steps, deadline, counter):
    """Run one child over ``steps`` until it ends or ``deadline``; (finished, open step, exit code or None)."""
    with tempfile.TemporaryFile(mode="w+b") as out:
        proc = subprocess.Popen([sys.executable, "-u", "-c", _CHILD, json.dumps(steps)], stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        code = None
        while code is None:
            try:
                code = proc.wait(timeout=max(0.1, min(PROGRESS_S, deadline - time.time())))
            except subprocess.TimeoutExpired:
                if time.time() >= deadline:
                    proc.kill()
                    proc.wait()
                    break
                out.seek(0)
                finished, _ = parse(out.read().decode("utf-8", "replace"))
                counter(finished)
        out.seek(0)
        finished, open_step = parse(out.read().decode("utf-8", "replace"))
    return finished, open_step, code


def run_steps(steps, deadline):
    """{label: (status, output)} for every step: "ok", "fail", or "fail" with the reason it never ran."""
    results, started, pending = {}, time.time(), list(steps)
    state = {"last": started}

    def counter(finished):
        if time.time() - state["last"] >= PROGRESS_S - 0.5:
            state["last"] = time.time()
            done = dict(results, **finished)
            _progress(started, len(done), sum(1 for s, _ in done.values() if s != "ok"), len(steps))

    while pending and time.time() < deadline:
        finished, open_step, code = _child(pending, deadline, counter)
        results.update(finished)
        if open_step is not None:
            label, output = open_step
            why = ("the child interpreter died (exit code %s)" % code) if code is not None \
                else "the import did not finish within the check's time budget"
            results[label] = ("fail", (output + "\n" + why).strip())
        elif code is not None and not finished and pending:
            # the child died before its first step (a broken interpreter): every step fails with its output
            for label, _, _ in pending:
                results[label] = ("fail", "the child interpreter exited %s before importing anything" % code)
        pending = [s for s in pending if s[0] not in results]
    for label, _, _ in pending:
        results[label] = ("fail", "not imported: the import check's time budget ran out before it")
    return results
