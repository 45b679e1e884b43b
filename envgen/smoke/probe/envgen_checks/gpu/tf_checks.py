"""TensorFlow checks of the envgen probe: version truth and devices here; the rest by kind in
tf_compute (placement, correctness, training, memory), tf_speed and tf_dist (several
GPUs). tensorflow is imported inside the checks; Python 3.7+.

What TensorFlow's C++ code logs while it loads CUDA and registers GPUs (where "Could not load dynamic
library" and "Skipping registering GPU devices" appear) is captured and fed to the diagnoses.
"""

import os
import traceback

from ..core.common import CaptureStderr, Fail, Skip
from ..core.kernels import loaded_libraries
from .tf_base import FRAMEWORK, _facts, _list_gpus, _log, _require_tf
from .tf_compute import check_amp, check_conv, check_matmul, check_memory, check_train
from .tf_dist import check_allreduce
from .tf_speed import check_speed
from ..core.versions import compare_versions

__all__ = ["FRAMEWORK", "checks", "facts_after"]


def _build_info(tf):
    """(cuda, cudnn, is_cuda_build) TensorFlow was compiled with."""
    info = {}
    try:
        info = dict(tf.sysconfig.get_build_info())
    except Exception:  # noqa: BLE001 - TF < 2.3
        try:
            from tensorflow.python.platform import build_info
            info = {"cuda_version": getattr(build_info, "cuda_version_number", None),
                    "cudnn_version": getattr(build_info, "cudnn_version_number", None)}
        except Exception:  # noqa: BLE001
            info = {}
    try:
        cuda_build = bool(tf.test.is_built_with_cuda())
    except Exception:  # noqa: BLE001
        cuda_build = bool(info.get("is_cuda_build"))
    return info.get("cuda_version"), info.get("cudnn_version"), cuda_build



# --- version truth and devices ----------------------------------------------------------------------

def check_version(ctx):
    # memory growth before TensorFlow touches a GPU, and warnings in the log so they can be diagnosed
    os.environ.setdefault("TF_FORCE_GPU_ALLOW_GROWTH", "true")
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "0"
    with CaptureStderr() as captured:
        try:
            import tensorflow as tf
            error = None
        except Exception as exc:  # noqa: BLE001 - an ImportError may name a missing CUDA library
            error = exc
            trace = traceback.format_exc()
    _log(ctx, captured.text)
    if error is not None:
        if ctx.expects_framework("tensorflow"):
            raise Fail("tensorflow %s expected by the profile but cannot be imported: %s"
                       % (ctx.expected("tensorflow"), error), log=trace + captured.text)
        raise Skip("TensorFlow is not installed")
    cuda, cudnn, cuda_build = _build_info(tf)
    facts = _facts(ctx)
    facts.update({"version": tf.__version__, "cuda": cuda, "cudnn": cudnn, "cuda_build": cuda_build})
    cuda_expected, cuda_specific = ctx.expected_for("cuda", "tensorflow")
    cudnn_expected, cudnn_specific = ctx.expected_for("cudnn", "tensorflow")
    rows = [("tensorflow", ctx.expected("tensorflow"), tf.__version__, None)]
    # a profile-wide CUDA/cuDNN need not be TensorFlow's (TF 2.12 beside a CUDA 12 base is built for 11.8):
    # only a TensorFlow-specific expectation is compared
    rows.append(("cuda", cuda_expected if cuda_specific else None, cuda, 2))
    rows.append(("cudnn", cudnn_expected if cudnn_specific else None, cudnn, 2))
    mismatches, figures = compare_versions(rows)
    figures["cuda_build"] = cuda_build
    if mismatches:
        raise Fail("version mismatch: " + "; ".join(mismatches), figures)
    return "tensorflow %s (built with CUDA %s, cuDNN %s)" % (tf.__version__, cuda, cudnn), figures


def check_devices(ctx):
    tf = _require_tf(ctx)
    with CaptureStderr() as captured:
        gpus = _list_gpus(tf)
        growth = []
        for gpu in gpus:
            tf.config.experimental.set_memory_growth(gpu, True)
            growth.append(bool(tf.config.experimental.get_memory_growth(gpu)))
    _log(ctx, captured.text)
    figures = {"gpus": [gpu.name for gpu in gpus], "memory_growth": growth,
               "cuda_build": _facts(ctx).get("cuda_build")}
    reason = ctx.gpu_skip_reason()
    if reason and ctx.mode == "cpu-only":
        raise Skip(reason + ": TensorFlow runs on the CPU")
    if not _facts(ctx).get("cuda_build"):
        raise Fail("TensorFlow is a CPU-only build but the profile expects a GPU: placed on the CPU", figures)
    if not gpus:
        raise Fail("TensorFlow registered no GPU although the driver sees %d: every op is placed on the CPU"
                   % len(ctx.gpus), figures, log=ctx.logs.get(FRAMEWORK, ""))
    restricted = os.environ.get("CUDA_VISIBLE_DEVICES") not in (None, "")
    if ctx.gpus and len(gpus) != len(ctx.gpus) and not restricted:
        raise Fail("TensorFlow sees %d GPU(s), the driver %d" % (len(gpus), len(ctx.gpus)), figures)
    _facts(ctx)["gpu_ok"] = True
    return "TensorFlow sees %d GPU(s), memory growth on" % len(gpus), figures



def checks():
    return [
        ("tensorflow.version", check_version),
        ("tensorflow.devices", check_devices),
        ("tensorflow.matmul", check_matmul),
        ("tensorflow.conv", check_conv),
        ("tensorflow.speed", check_speed),
        ("tensorflow.amp", check_amp),
        ("tensorflow.train", check_train),
        ("tensorflow.memory", check_memory),
        ("tensorflow.allreduce", check_allreduce),
    ]


def facts_after(ctx):
    facts = ctx.frameworks.get(FRAMEWORK)
    if facts is not None:
        facts["loaded_libraries"] = loaded_libraries()
        facts["log_tail"] = ctx.logs.get(FRAMEWORK, "")[-2000:]
