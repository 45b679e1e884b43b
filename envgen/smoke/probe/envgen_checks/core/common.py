"""Shared parts of the envgen probe: check results, the run context, diagnoses, capturing native logs.
Version helpers are in core.versions, the speed check's timing plan in gpu.timing, compiled
architectures and loaded libraries in core.kernels.

Standard library only; runs on Python 3.7 and later (checked by a unit test with vermin).
"""

import json
import os
import re
import sys
import tempfile
import time
import traceback
import warnings

from .versions import cuda_from_variant

SCHEMA = "envgen.smoke/1"
PASS, FAIL, SKIPPED = "pass", "fail", "skipped"
DIAGNOSES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "diagnoses.json")
LOG_TAIL_CHARS = 2000


class Skip(Exception):
    """Raised by a check that does not apply here; the message is the reason."""


class Fail(Exception):
    """Raised by a check that detected a failure itself (no framework exception)."""

    def __init__(self, message, figures=None, log=""):
        Exception.__init__(self, message)
        self.message = message
        self.figures = figures or {}
        self.log = log


# --- diagnoses --------------------------------------------------------------------------------

def load_diagnoses(path=None):
    with open(path or DIAGNOSES_FILE, "r", encoding="utf-8") as handle:
        data = json.load(handle)
    return data["diagnoses"]


def diagnose(text, diagnoses):
    """First diagnosis whose pattern occurs in ``text``, as a report dict; None when none does."""
    if not text:
        return None
    for entry in diagnoses:
        for pattern in entry["patterns"]:
            found = re.search(pattern, text, re.IGNORECASE | re.MULTILINE)
            if found:
                start = max(0, found.start() - 80)
                return {
                    "id": entry["id"],
                    "cause": fill(entry["cause"], entry, found),
                    "fix": fill(entry["fix"], entry, found),
                    "pattern": pattern,
                    "matched": " ".join(text[start:found.end() + 80].split()),
                }
    return None


def fill(template, entry, found):
    """``{name}`` in a cause or fix from the pattern's named group, else the entry's default."""
    values = dict(entry.get("defaults") or {})
    values.update((key, value.strip()) for key, value in found.groupdict().items() if value)
    return re.sub(r"\{([a-z_]+)\}", lambda m: values.get(m.group(1), m.group(0)), template)


# --- capturing what native libraries print ---------------------------------------------------

class CaptureStderr(object):
    """Redirect file descriptor 2 (where CUDA, cuDNN and TensorFlow's C++ code log) to a
    temporary file for the duration of a ``with`` block; ``text`` holds what was written."""

    def __init__(self):
        self.text = ""
        self._saved = None
        self._file = None

    def __enter__(self):
        try:
            sys.stderr.flush()
            self._file = tempfile.TemporaryFile(mode="w+b")
            self._saved = os.dup(2)
            os.dup2(self._file.fileno(), 2)
        except (OSError, ValueError):
            self._saved = None
        return self

    def __exit__(self, *exc):
        if self._saved is None:
            return False
        try:
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        os.dup2(self._saved, 2)
        os.close(self._saved)
        self._file.seek(0)
        self.text = self._file.read().decode("utf-8", "replace")
        self._file.close()
        return False


# --- the run context --------------------------------------------------------------------------

def expectations(doc):
    """What the probe compares the image against, read once: the ``expected`` document envgen's plan writes
    (envgen.expected/N, envgen/plan/expected.py: every key present, None meaning "nothing expected"), whose keys
    are never overridden. Only a profile JSON given by hand (``--expect`` with no ``expected`` document, or one
    naming some keys) has the keys it leaves out stated from its own fields, here and nowhere else."""
    frameworks = doc.get("frameworks") or {}
    gpu = doc.get("gpu") or {}
    torch = frameworks.get("pytorch")
    required = bool(gpu.get("required", True))
    stated = {"python": doc.get("python"), "torch": torch, "tensorflow": frameworks.get("tensorflow"),
              "torchvision": frameworks.get("torchvision"), "torchaudio": frameworks.get("torchaudio"),
              "cuda": doc.get("cuda"), "cudnn": doc.get("cudnn")}
    if torch and required and not str(torch).endswith("+cpu"):
        stated["torch_cuda"] = cuda_from_variant(torch) or doc.get("cuda")
    if doc:
        stated["gpu_required"] = required
    stated.update(doc.get("expected") or {})
    return stated


class Context(object):
    """What every check may read: the expectation, the sizes, the GPUs seen, and the results."""

    def __init__(self, expect, arch_override=None, diagnoses=None, started=None):
        self.expect = expect or {}
        self.has_expect = bool(expect)
        self.expectations = expectations(self.expect)
        self.arch_override = arch_override
        table = diagnoses if diagnoses is not None else load_diagnoses()
        # a CPU-only profile is never told a cause about CUDA, a driver or a GPU (issue #38: a Keras 3 import
        # error was blamed on "silently runs every op on the CPU" from TensorFlow's no-driver log line)
        cpu_only = self.gpu_required() is False
        self.diagnoses = [entry for entry in table if not (cpu_only and entry.get("gpu_only"))]
        self.started = started if started is not None else time.time()
        smoke = self.expect.get("smoke") or {}
        self.matmul_size = int(smoke.get("matmul_size") or 4096)
        self.batch_size = int(smoke.get("batch_size") or 64)
        self.train_steps = int(smoke.get("train_steps") or 20)
        self.timeout_s = float(smoke.get("timeout_s") or 300)
        self.gpus = []          # filled by the devices check: list of dicts
        self.driver = None
        self.mode = None        # "gpu" | "cpu-only", decided after the devices check
        self.checks = []
        self.frameworks = {}    # name -> facts dict (version, cuda, cudnn, ...)
        self.logs = {}          # framework -> captured native log text
        self.library_table = {"families": {}, "tensorflow": []}  # libraries.json, read by the library tier
        self.library_frameworks = {}  # framework -> built-with facts, from the library tier

    def expected(self, key):
        """One expectation (``expectations``); None: none."""
        value = self.expectations.get(key)
        return None if value in (None, "") else value

    def expected_for(self, key, framework):
        """``cuda``/``cudnn`` for one framework: a dict keyed by framework, ``<framework>_<key>``,
        or a plain string (returned with ``specific=False``)."""
        exp = self.expect.get("expected") or {}
        specific = exp.get(framework + "_" + key)
        if specific:
            return specific, True
        value = self.expected(key)
        if isinstance(value, dict):
            return value.get(framework), bool(value.get(framework))
        return value, False

    def gpu_required(self):
        """True/False from the expectations; None without them."""
        value = self.expectations.get("gpu_required")
        return None if value is None else bool(value)

    def expects_framework(self, name):
        return bool(self.expected(name))

    def elapsed(self):
        return time.time() - self.started

    def gpu_skip_reason(self):
        """Why GPU work is skipped here, or None when the GPU checks should run."""
        if self.mode == "cpu-only":
            if self.gpu_required() is False:
                return "CPU-only profile"
            return "no GPU visible (no profile given)"
        if not self.gpus:
            return "no GPU visible (see the devices check)"
        return None


def result(name, framework, status, message, figures=None, diagnosis=None, duration=0.0, log=""):
    return {
        "name": name,
        "framework": framework,
        "status": status,
        "message": message,
        "figures": figures or {},
        "diagnosis": diagnosis,
        "duration_s": round(duration, 3),
        "log": log[-LOG_TAIL_CHARS:] if log else "",
    }


def run_check(ctx, name, framework, func):
    """Run one check function ``func(ctx) -> (message, figures)``; record and return its result.

    ``Skip`` gives "skipped"; ``Fail`` and any other exception give "fail" with a diagnosis matched
    from the exception text, Python warnings and the framework's captured log."""
    start = time.time()
    if ctx.elapsed() > ctx.timeout_s:
        # A check that never ran proves nothing: an exhausted budget fails, it is not a skip.
        message = "time budget of %ds used up before this check ran" % ctx.timeout_s
        entry = result(name, framework, FAIL, message, diagnosis=diagnose(message, ctx.diagnoses))
        ctx.checks.append(entry)
        return entry
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            message, figures = func(ctx)
            entry = result(name, framework, PASS, message, figures, duration=time.time() - start)
        except Skip as skip:
            entry = result(name, framework, SKIPPED, str(skip), duration=time.time() - start)
        except Fail as fail:
            text = "\n".join([fail.message, fail.log, _warning_text(caught)])
            entry = result(name, framework, FAIL, fail.message, fail.figures,
                           diagnose(text, ctx.diagnoses), time.time() - start, fail.log)
        except Exception as exc:  # noqa: BLE001 - every framework error becomes a diagnosed failure
            trace = traceback.format_exc()
            native = ctx.logs.get(framework, "")
            text = "\n".join([trace, native, _warning_text(caught)])
            message = "%s: %s" % (type(exc).__name__, _one_line(str(exc)))
            entry = result(name, framework, FAIL, message, {}, diagnose(text, ctx.diagnoses),
                           time.time() - start, trace)
    ctx.checks.append(entry)
    return entry


def _warning_text(caught):
    return "\n".join(str(item.message) for item in caught)


def _one_line(text, limit=400):
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "..."
