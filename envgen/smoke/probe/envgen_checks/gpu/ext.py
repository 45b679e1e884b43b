"""GPU extension packages in the envgen probe (flash-attn, xformers, bitsandbytes, CuPy, Apex, DeepSpeed, Triton,
JAX) and the serving engines (vLLM, SGLang): each is imported and its version compared with the profile's; an
engine's compiled ops are loaded in the library tier too (ext_calls.COMPILED); in the GPU tier each is
called once (ext_calls). Python 3.7+, standard library only; the packages are imported inside the checks.

Which packages: the profile's ``expected.extensions`` (envgen writes it for every such package in packages.pip);
without a profile (``--expect`` not given), every one of them that is importable here.
"""

import importlib
import os
import traceback

from . import ext_calls
from ..core.common import Fail, Skip
from ..core.versions import version_matches

TIER = "extensions"
# import name -> pip distribution, in the order the checks run
KNOWN = (
    ("flash_attn", "flash-attn"),
    ("xformers", "xformers"),
    ("bitsandbytes", "bitsandbytes"),
    ("cupy", "cupy"),
    ("apex", "apex"),
    ("deepspeed", "deepspeed"),
    ("triton", "triton"),
    ("jax", "jax"),
    ("vllm", "vllm"),
    ("sglang", "sglang"),
)


def _importable(module):
    try:
        import importlib.util
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def wanted(ctx):
    """(package, module, version or None) of each package to check."""
    if ctx.has_expect:
        rows = (ctx.expect.get("expected") or {}).get("extensions") or []
        return [(row["package"], row["module"], row.get("version")) for row in rows]
    return [(package, module, None) for module, package in KNOWN if _importable(module)]


def _version(package, module):
    text = getattr(module, "__version__", None)
    if text:
        return str(text)
    try:
        from importlib import metadata  # novermin - Python 3.7 keeps the module's own __version__ or None
        return metadata.version(package)
    except Exception:  # noqa: BLE001
        return None


def import_package(package, module_name, version):
    """The imported module and its figures; Fail when it cannot be imported or is another version."""
    if module_name == "jax":
        # JAX takes 75% of the GPU's memory at its first call unless told not to; the frameworks share the card
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - an ImportError may name a missing CUDA library or another torch
        raise Fail("%s %s expected by the profile but cannot be imported: %s"
                   % (package, version or "", exc), log=traceback.format_exc()) from exc
    actual = _version(package, module)
    figures = {"package": package, "module": module_name, "version": actual}
    if version and not version_matches(version, actual):
        raise Fail("version mismatch: %s expected %s, found %s" % (package, version, actual), figures)
    return module, figures


def make_check(package, module_name, version, call):
    def check(ctx):
        module, figures = import_package(package, module_name, version)
        call_func = ext_calls.CALLS.get(module_name)
        said = "%s %s imports" % (package, figures["version"])
        if module_name in ext_calls.COMPILED:
            said += "; " + ext_calls.load_compiled(module_name, figures, module)
        if not call:
            return said + " (its GPU call runs in the GPU tier)", figures
        if call_func is None:
            return said + "; no GPU call for it (%s)" % ext_calls.NO_CALL.get(module_name, "import only"), figures
        reason = ctx.gpu_skip_reason()
        if reason:
            raise Skip("%s; GPU call skipped: %s" % (said, reason))
        message, more = call_func(ctx, module)
        figures.update(more)
        return "%s; %s" % (said, message), figures
    return check


def checks(ctx, call=True):
    return [("ext." + package, make_check(package, module, version, call))
            for package, module, version in wanted(ctx)]
