"""PyTorch checks of the envgen probe: version truth, devices and kernels here; the rest by kind in
torch_compute (placement, correctness, training), torch_speed and torch_dist
(several GPUs). torch is imported inside the checks; Python 3.7+.

Each check is ``func(ctx) -> (message, figures)`` and raises ``Skip`` or ``Fail`` (core.common).
"""

import os
import traceback

from ..core.common import Fail, Skip
from ..core.kernels import kernel_support, loaded_libraries
from .torch_base import FRAMEWORK, _facts, _import_torch, _require_gpu, _require_torch
from .torch_compute import check_amp, check_conv, check_matmul, check_train
from .torch_dist import check_allreduce
from .torch_speed import check_speed
from ..core.versions import compare_versions, cudnn_text

__all__ = ["FRAMEWORK", "checks", "facts_after"]


# --- version truth ----------------------------------------------------------------------------------

def check_version(ctx):
    try:
        torch = _import_torch()
    except Exception as exc:  # noqa: BLE001 - an ImportError may name a missing CUDA library
        if ctx.expects_framework("torch"):
            raise Fail("torch %s expected by the profile but cannot be imported: %s"
                       % (ctx.expected("torch"), exc), log=traceback.format_exc()) from exc
        raise Skip("torch is not installed") from exc
    facts = _facts(ctx)
    facts.update({
        "version": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": None,
        "arch_list": [],
    })
    if torch.version.cuda is not None:
        try:
            facts["cudnn"] = cudnn_text(torch.backends.cudnn.version())
        except Exception:  # noqa: BLE001 - cuDNN missing: reported by the conv check
            facts["cudnn"] = None
        try:
            facts["arch_list"] = list(torch.cuda.get_arch_list())
        except Exception:  # noqa: BLE001
            facts["arch_list"] = []
    rows = [("torch", ctx.expected("torch"), torch.__version__, None)]
    for extra in ("torchvision", "torchaudio"):
        try:
            module = __import__(extra)
            facts[extra] = module.__version__
        except Exception as exc:  # noqa: BLE001
            facts[extra] = None
            if ctx.expects_framework(extra):
                raise Fail("%s %s expected by the profile but cannot be imported: %s"
                           % (extra, ctx.expected(extra), exc), facts, log=traceback.format_exc()) from exc
        rows.append((extra, ctx.expected(extra), facts[extra], None))
    cuda_expected, cudnn_expected, cudnn_depth = _expected_cuda(ctx, torch)
    rows.append(("cuda", cuda_expected, torch.version.cuda, 2))
    rows.append(("cudnn", cudnn_expected, facts["cudnn"], cudnn_depth))
    mismatches, figures = compare_versions(rows)
    figures["arch_list"] = facts["arch_list"]
    if mismatches:
        raise Fail("version mismatch: " + "; ".join(mismatches), figures)
    return ("torch %s (CUDA %s, cuDNN %s)" % (torch.__version__, torch.version.cuda, facts["cudnn"]),
            figures)


def _expected_cuda(ctx, torch):
    """(cuda, cudnn, cudnn depth) the plan expects of torch (its ``torch_cuda``: the CUDA of the build the plan
    chose, none for a CPU build); None where it says nothing."""
    cuda, specific = ctx.expected_for("cuda", "torch")
    cudnn, cudnn_specific = ctx.expected_for("cudnn", "torch")
    if not specific:
        cuda = None
    if torch.version.cuda is None and cuda is None:
        cudnn = None
    # a plain profile-wide cuDNN is compared on its major version only: torch wheels bundle their own
    return cuda, cudnn, (2 if cudnn_specific else 1)


# --- devices and kernels ---------------------------------------------------------------------------

def check_devices(ctx):
    torch = _require_torch(ctx)
    reason = ctx.gpu_skip_reason()
    if reason and ctx.mode == "cpu-only":
        raise Skip(reason + ": torch runs on the CPU")
    if torch.version.cuda is None:
        raise Fail("torch is a CPU-only build (torch.version.cuda is None) but the profile expects a GPU")
    if not torch.cuda.is_available():
        try:
            torch.cuda.init()
        except Exception as exc:  # noqa: BLE001 - the real reason CUDA is unusable
            raise Fail("torch.cuda.is_available() is False: %s" % exc, log=traceback.format_exc()) from exc
        raise Fail("torch.cuda.is_available() is False although torch was built with CUDA %s"
                   % torch.version.cuda)
    count = torch.cuda.device_count()
    devices = []
    for index in range(count):
        props = torch.cuda.get_device_properties(index)
        devices.append({
            "index": index,
            "name": props.name,
            "capability": "%d.%d" % (props.major, props.minor),
            "memory_mib": int(props.total_memory // (1024 * 1024)),
            "multiprocessors": props.multi_processor_count,
        })
    figures = {"device_count": count, "devices": devices}
    restricted = os.environ.get("CUDA_VISIBLE_DEVICES") not in (None, "")
    if ctx.gpus and count != len(ctx.gpus) and not restricted:
        raise Fail("torch sees %d GPU(s), the driver %d" % (count, len(ctx.gpus)), figures)
    _facts(ctx)["gpu_ok"] = True
    return "torch sees %d GPU(s): %s" % (count, ", ".join(d["name"] for d in devices)), figures


def check_kernels(ctx):
    torch = _require_torch(ctx)
    _require_gpu(ctx)
    if ctx.arch_override:
        arch_list, source = list(ctx.arch_override), "--arch-list"
    else:
        arch_list, source = list(torch.cuda.get_arch_list()), "torch.cuda.get_arch_list()"
    rows = []
    missing = []
    jit_only = []
    for index in range(torch.cuda.device_count()):
        major, minor = torch.cuda.get_device_capability(index)
        sass, ptx = kernel_support((major, minor), arch_list)
        sm = "sm_%d%d" % (major, minor)
        rows.append({"index": index, "sm": sm, "sass": sass, "ptx": ptx})
        if not sass and not ptx:
            missing.append(sm)
        elif not sass:
            jit_only.append(sm)
    figures = {"arch_list": arch_list, "arch_list_source": source, "devices": rows}
    if missing:
        _facts(ctx)["kernels_ok"] = False
        raise Fail("no kernels for %s in the compiled architectures (%s: %s); no PTX to compile either"
                   % (", ".join(sorted(set(missing))), source, " ".join(arch_list)), figures)
    _facts(ctx)["kernels_ok"] = True
    if jit_only:
        return ("no machine code for %s: the driver JIT-compiles the embedded PTX (slow first start)"
                % ", ".join(sorted(set(jit_only))), figures)
    return "machine code for %s in %s" % (", ".join(sorted(set(r["sm"] for r in rows))), source), figures


def checks():
    return [
        ("torch.version", check_version),
        ("torch.devices", check_devices),
        ("torch.kernels", check_kernels),
        ("torch.matmul", check_matmul),
        ("torch.conv", check_conv),
        ("torch.speed", check_speed),
        ("torch.amp", check_amp),
        ("torch.train", check_train),
        ("torch.allreduce", check_allreduce),
    ]


def facts_after(ctx):
    facts = ctx.frameworks.get(FRAMEWORK)
    if facts is not None:
        facts["loaded_libraries"] = loaded_libraries()
