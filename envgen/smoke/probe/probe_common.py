"""Shared parts of the envgen probe: check results, the run context, diagnoses, version helpers.

Standard library only; runs on Python 3.7 and later (checked by a unit test with vermin).
"""

import json
import math
import os
import re
import sys
import tempfile
import time
import traceback
import warnings

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

class Context(object):
    """What every check may read: the expectation, the sizes, the GPUs seen, and the results."""

    def __init__(self, expect, arch_override=None, diagnoses=None, started=None):
        self.expect = expect or {}
        self.has_expect = bool(expect)
        self.arch_override = arch_override
        self.diagnoses = diagnoses if diagnoses is not None else load_diagnoses()
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

    # expectations, tolerant of missing keys
    def expected(self, key):
        exp = self.expect.get("expected") or {}
        if exp.get(key) not in (None, ""):
            return exp.get(key)
        frameworks = self.expect.get("frameworks") or {}
        fallback = {
            "python": self.expect.get("python"),
            "torch": frameworks.get("pytorch"),
            "tensorflow": frameworks.get("tensorflow"),
            "torchvision": frameworks.get("torchvision"),
            "torchaudio": frameworks.get("torchaudio"),
            "cuda": self.expect.get("cuda"),
            "cudnn": self.expect.get("cudnn"),
        }
        return fallback.get(key)

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
        """True/False from the profile; None without --expect."""
        if not self.has_expect:
            return None
        gpu = self.expect.get("gpu") or {}
        exp = self.expect.get("expected") or {}
        if "gpu_required" in exp:
            return bool(exp["gpu_required"])
        return bool(gpu.get("required", True))

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


# --- versions ----------------------------------------------------------------------------------

def version_parts(text):
    """'2.1.2+cu121' -> [2, 1, 2]; '8.9' -> [8, 9]; None -> []."""
    if text is None:
        return []
    base = str(text).split("+")[0]
    parts = []
    for piece in base.split("."):
        digits = re.match(r"\d+", piece)
        if not digits:
            break
        parts.append(int(digits.group(0)))
    return parts


def version_matches(expected, actual, depth=None):
    """True when ``actual`` agrees with every component ``expected`` names (up to ``depth``).

    A local variant (``+cu121``) in ``expected`` must be present in ``actual`` too."""
    if expected in (None, ""):
        return True
    if actual in (None, ""):
        return False
    want = version_parts(expected)
    have = version_parts(actual)
    if depth is not None:
        want = want[:depth]
    if not want or have[:len(want)] != want:
        return False
    expected_text = str(expected)
    if "+" in expected_text:
        return "+" in str(actual) and str(actual).split("+", 1)[1] == expected_text.split("+", 1)[1]
    return True


def cudnn_text(number):
    """cuDNN's integer version as text: 8902 -> '8.9.2', 7605 -> '7.6.5', 91002 -> '9.10.2'."""
    if number is None:
        return None
    number = int(number)
    if number >= 10000:
        return "%d.%d.%d" % (number // 10000, (number % 10000) // 100, number % 100)
    return "%d.%d.%d" % (number // 1000, (number % 1000) // 100, number % 100)


def cuda_from_variant(version):
    """'2.1.2+cu121' -> '12.1', '1.7.1+cu101' -> '10.1', '+cpu' or none -> None."""
    if not version or "+" not in str(version):
        return None
    found = re.match(r"cu(\d+)(\d)$", str(version).split("+", 1)[1])
    if not found:
        return None
    return "%d.%s" % (int(found.group(1)), found.group(2))


def compare_versions(rows):
    """rows: (what, expected, actual, depth). Returns (mismatches list of text, figures dict)."""
    mismatches = []
    figures = {}
    for what, expected, actual, depth in rows:
        figures[what] = actual
        if expected not in (None, "") and not version_matches(expected, actual, depth):
            mismatches.append("%s %s found, profile expects %s" % (what, actual, expected))
    return mismatches, figures


# --- timing --------------------------------------------------------------------------------------

def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2.0


def tflops(n, seconds):
    return 2.0 * n * n * n / seconds / 1e12 if seconds > 0 else None


# How the GPU matmul speed is timed. A big GPU runs at its boost clock only for the first tens of
# milliseconds of full load: then its power cap cuts the SM clock (measured on an H200, 700 W cap:
# 1980 MHz for ~50-100 ms, then ~1450-1520 MHz; bf16 790 -> ~670 TFLOP/s; docs/validation/2026-11-30-h200).
# So the rate depends on how long the card has been loaded, and the probe reports two figures:
# - peak: after an idle pause (the clock recovers in 0.1 s), PEAK_WARMUP products, then PEAK_ITERS
#   products timed with device events around the whole loop, median of PEAK_WINDOWS such windows:
#   what the usual "warm up, time 20 products" measurement reads;
# - sustained: after SUSTAIN_LOAD_S of back-to-back products (the cap has engaged), the median of
#   SUSTAIN_BATCHES batches of >= SUSTAIN_BATCH_S each: what a long training run gets.
PEAK_WARMUP = 3
PEAK_ITERS = 20
PEAK_WINDOWS = 3
PAUSE_S = 0.25
SUSTAIN_LOAD_S = 0.3
SUSTAIN_BATCH_S = 0.05
SUSTAIN_BATCHES = 3
# The speed check's share of the time budget left when it starts, and its cap
SPEED_BUDGET_SHARE = 0.25
SPEED_BUDGET_CAP_S = 40.0
# On a fast GPU the profile's matmul_size is doubled (up to MAX_SPEED_N, memory allowing) until one
# product takes at least MIN_PRODUCT_S: a product that fills the chip, and a window of PEAK_ITERS
# products as long as the usual 8192 reference's.
MAX_SPEED_N = 8192
MIN_PRODUCT_S = 1e-3


class SpeedPlan(object):
    """How one precision is timed: the peak windows, and the sustained phase or None."""

    def __init__(self, warmup, iters, windows, pause_s, sustain_load, sustain_iters, sustain_batches):
        self.warmup = warmup
        self.iters = iters
        self.windows = windows
        self.pause_s = pause_s
        self.sustain_load = sustain_load        # untimed products before the sustained batches
        self.sustain_iters = sustain_iters      # products per sustained batch (0: no sustained figure)
        self.sustain_batches = sustain_batches

    def cost_s(self, product_s):
        products = (self.windows * (self.warmup + self.iters) + self.sustain_load
                    + self.sustain_iters * self.sustain_batches)
        return self.windows * self.pause_s + products * product_s

    def as_dict(self):
        return dict(self.__dict__)


def speed_budget(ctx, precisions):
    """Seconds each precision may spend in the GPU speed check: a share of the time budget left."""
    left = max(0.0, ctx.timeout_s - ctx.elapsed())
    return min(SPEED_BUDGET_CAP_S, left * SPEED_BUDGET_SHARE) / max(1, precisions)


def plan_speed(product_s, share_s):
    """The SpeedPlan for a product taking ``product_s`` seconds within ``share_s`` seconds: the full
    plan where it fits, then without the sustained phase, then one shorter window (a slow card)."""
    product_s = max(float(product_s), 1e-6)
    load = int(math.ceil(SUSTAIN_LOAD_S / product_s))
    per_batch = int(math.ceil(SUSTAIN_BATCH_S / product_s))
    full = SpeedPlan(PEAK_WARMUP, PEAK_ITERS, PEAK_WINDOWS, PAUSE_S, load, per_batch, SUSTAIN_BATCHES)
    if full.cost_s(product_s) <= share_s:
        return full
    peak_only = SpeedPlan(PEAK_WARMUP, PEAK_ITERS, PEAK_WINDOWS, PAUSE_S, 0, 0, 0)
    if peak_only.cost_s(product_s) <= share_s:
        return peak_only
    iters = int(max(1, min(PEAK_ITERS, (share_s - PAUSE_S) / product_s - 1)))
    return SpeedPlan(1, iters, 1, PAUSE_S, 0, 0, 0)


def speed_size(n, product_s, free_bytes, itemsize=4):
    """The matmul size for the speed check: ``n`` doubled while one product (``product_s`` at ``n``)
    takes under MIN_PRODUCT_S, the next size stays within MAX_SPEED_N and its three operands of
    ``itemsize`` bytes fit in half of ``free_bytes``."""
    product_s = float(product_s)
    while (product_s < MIN_PRODUCT_S and 2 * n <= MAX_SPEED_N
           and 3 * (2 * n) ** 2 * itemsize <= free_bytes / 2):
        n *= 2
        product_s *= 8
    return n


# --- kernels and loaded libraries ---------------------------------------------------------------

_ARCH_RE = re.compile(r"^(sm|compute)_(\d+)(\d)([a-z]?)$")


def kernel_support(capability, arch_list):
    """Which entries of a compiled architecture list can run on a GPU of ``capability`` (major, minor).

    Returns (sass, ptx): machine code runs on the same major version with an equal or higher minor
    (``sm_90a`` only on exactly 9.0); PTX (``compute_XY``) is compiled by the driver for any GPU of
    equal or higher capability."""
    major, minor = int(capability[0]), int(capability[1])
    sass, ptx = [], []
    for arch in arch_list:
        found = _ARCH_RE.match(arch.strip())
        if not found:
            continue
        kind, arch_major, arch_minor, suffix = found.group(1), int(found.group(2)), int(found.group(3)), \
            found.group(4)
        if kind == "sm":
            if arch_major == major and (arch_minor == minor or (suffix != "a" and arch_minor < minor)):
                sass.append(arch)
        elif suffix != "a" and (arch_major, arch_minor) <= (major, minor):
            ptx.append(arch)
    return sass, ptx


_LIBRARY_RE = re.compile(r"/(lib(cudart|cublas|cublasLt|cudnn|nccl|cuda)\.so[.0-9]*)$")


def loaded_libraries():
    """CUDA libraries mapped into this process right now, {file name: path} (Linux only)."""
    found = {}
    try:
        with open("/proc/self/maps", "r") as handle:
            for line in handle:
                path = line.split()[-1] if line.strip() else ""
                match = _LIBRARY_RE.search(path)
                if match:
                    found[match.group(1)] = path
    except (OSError, IndexError):
        pass
    return found
