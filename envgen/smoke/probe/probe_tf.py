"""TensorFlow checks of the envgen probe. tensorflow is imported inside the checks; Python 3.7+.

What TensorFlow's C++ code logs while it loads CUDA and registers GPUs (where "Could not load dynamic
library" and "Skipping registering GPU devices" appear) is captured and fed to the diagnoses.
"""

import os
import time
import traceback

from probe_common import (
    PAUSE_S,
    PEAK_ITERS,
    PEAK_WARMUP,
    PEAK_WINDOWS,
    SUSTAIN_BATCHES,
    SUSTAIN_LOAD_S,
    CaptureStderr,
    Fail,
    Skip,
    compare_versions,
    loaded_libraries,
    median,
    plan_speed,
    speed_budget,
    tflops,
)

FRAMEWORK = "tensorflow"
TOLERANCE = {"fp32": 1e-4, "tf32": 5e-3, "fp16": 5e-3}


def _facts(ctx):
    return ctx.frameworks.setdefault(FRAMEWORK, {})


def _log(ctx, text):
    if text:
        ctx.logs[FRAMEWORK] = ctx.logs.get(FRAMEWORK, "") + text


def _require_tf(ctx):
    if FRAMEWORK not in ctx.frameworks:
        raise Skip("TensorFlow is not available (see tensorflow.version)")
    import tensorflow as tf
    return tf


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


def _list_gpus(tf):
    config = tf.config
    lister = getattr(config, "list_physical_devices", None) or config.experimental.list_physical_devices
    return lister("GPU")


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


def _device(ctx):
    if ctx.mode == "cpu-only":
        return "/CPU:0"
    reason = ctx.gpu_skip_reason()
    if reason:
        raise Skip(reason)
    if not _facts(ctx).get("gpu_ok"):
        raise Skip("TensorFlow cannot use the GPU (see tensorflow.devices)")
    return "/GPU:0"


def _capability(tf):
    try:
        details = tf.config.experimental.get_device_details(_list_gpus(tf)[0])
        return tuple(details.get("compute_capability") or (0, 0))
    except Exception:  # noqa: BLE001 - TF < 2.3
        return (0, 0)


class _Tf32(object):
    """Turn TensorFloat-32 on or off for a block (TF >= 2.4), restoring the previous setting."""

    def __init__(self, tf, enabled):
        self.tf = tf
        self.enabled = enabled
        self.saved = None

    def __enter__(self):
        experimental = self.tf.config.experimental
        if hasattr(experimental, "enable_tensor_float_32_execution"):
            self.saved = experimental.tensor_float_32_execution_enabled()
            experimental.enable_tensor_float_32_execution(self.enabled)
        return self

    def __exit__(self, *exc):
        if self.saved is not None:
            self.tf.config.experimental.enable_tensor_float_32_execution(self.saved)
        return False


def _precisions(tf, device):
    if device.startswith("/CPU"):
        return [("fp32", tf.float32, False)]
    rows = [("fp32", tf.float32, False)]
    if _capability(tf)[0] >= 8:
        rows.append(("tf32", tf.float32, True))
    rows.append(("fp16", tf.float16, False))
    return rows


def _rel_error(tf, value, reference):
    value = tf.cast(value, tf.float64)
    reference = tf.cast(reference, tf.float64)
    return float(tf.norm(value - reference) / tf.norm(reference))


# --- placement, correctness, speed ------------------------------------------------------------------

def check_matmul(ctx):
    tf = _require_tf(ctx)
    device = _device(ctx)
    n = min(ctx.matmul_size, 1024)
    with tf.device("/CPU:0"):
        gen = tf.random.Generator.from_seed(0) if hasattr(tf.random, "Generator") else None
        a = gen.normal((n, n)) if gen is not None else tf.random.normal((n, n), seed=0)
        b = gen.normal((n, n)) if gen is not None else tf.random.normal((n, n), seed=1)
        reference = tf.matmul(tf.cast(a, tf.float64), tf.cast(b, tf.float64))
    figures = {"n": n, "device": device}
    bad = []
    for label, dtype, tf32 in _precisions(tf, device):
        with _Tf32(tf, tf32), tf.device(device):
            c = tf.matmul(tf.cast(a, dtype), tf.cast(b, dtype))
        figures["result_device_" + label] = c.device
        if device.startswith("/GPU") and "GPU" not in c.device.upper():
            raise Fail("matmul placed on the CPU (result on %s)" % c.device, figures,
                       log=ctx.logs.get(FRAMEWORK, ""))
        error = _rel_error(tf, c, reference)
        figures["rel_error_" + label] = float("%.3g" % error)
        if not error < TOLERANCE[label]:
            bad.append("%s %.3g > %.0e" % (label, error, TOLERANCE[label]))
    if bad:
        raise Fail("matmul result differs from the reference (relative error %s)" % ", ".join(bad), figures)
    return "%dx%d matmul on %s matches float64 CPU reference" % (n, n, device), figures


def check_conv(ctx):
    tf = _require_tf(ctx)
    device = _device(ctx)
    batch = max(1, min(ctx.batch_size, 32))
    with tf.device("/CPU:0"):
        x = tf.random.stateless_normal((batch, 32, 32, 16), seed=(1, 0))
        w = tf.random.stateless_normal((3, 3, 16, 32), seed=(1, 1)) * 0.1
        x64, w64 = tf.cast(x, tf.float64), tf.cast(w, tf.float64)
        with tf.GradientTape() as tape:
            tape.watch([x64, w64])
            y_ref = tf.nn.conv2d(x64, w64, strides=1, padding="SAME")
            loss_ref = tf.reduce_sum(y_ref * y_ref)
        gx_ref, gw_ref = tape.gradient(loss_ref, [x64, w64])
    with _Tf32(tf, False), tf.device(device):
        xd, wd = tf.identity(x), tf.identity(w)
        with tf.GradientTape() as tape:
            tape.watch([xd, wd])
            y = tf.nn.conv2d(xd, wd, strides=1, padding="SAME")
            loss = tf.reduce_sum(y * y)
        gx, gw = tape.gradient(loss, [xd, wd])
    figures = {"device": device, "result_device": y.device, "shape": [batch, 32, 32, 16]}
    if device.startswith("/GPU") and "GPU" not in y.device.upper():
        raise Fail("convolution placed on the CPU (result on %s)" % y.device, figures,
                   log=ctx.logs.get(FRAMEWORK, ""))
    errors = {"rel_error_forward": _rel_error(tf, y, y_ref),
              "rel_error_grad_input": _rel_error(tf, gx, gx_ref),
              "rel_error_grad_weight": _rel_error(tf, gw, gw_ref)}
    figures.update((key, float("%.3g" % value)) for key, value in errors.items())
    if not max(errors.values()) < 1e-3:
        raise Fail("convolution result differs from the reference (max relative error %.3g)"
                   % max(errors.values()), figures)
    return "conv2d forward and backward on %s match float64 CPU reference" % device, figures


def _time_tf(tf, func, sync, target_s=0.05, repeats=7, warmup=2):
    """Median seconds per call: batches of calls bracketed by a device sync (fetching a value
    produced after the batch waits for the whole stream), sized to ~target_s."""
    sync(func())
    began = time.perf_counter()
    sync(func())
    once = max(time.perf_counter() - began, 1e-6)
    iters = int(max(1, min(2000, target_s / once)))
    samples = []
    for attempt in range(warmup + repeats):
        began = time.perf_counter()
        for _ in range(iters):
            result = func()
        sync(result)
        if attempt >= warmup:
            samples.append((time.perf_counter() - began) / iters)
    return median(samples), iters


def _time_tf_gpu(func, sync, share_s, sleep=time.sleep, clock=time.perf_counter):
    """The GPU speed plan of probe_common.plan_speed for TensorFlow: (peak seconds per call, sustained
    seconds per call or None, plan). A host timer between device syncs (fetching a value produced
    last waits for the whole stream) brackets each timed loop."""

    def timed(count):
        sync(func())
        began = clock()
        for _ in range(count):
            result = func()
        sync(result)
        return clock() - began

    sync(func())
    plan = plan_speed(timed(1), share_s)
    peaks = []
    for _ in range(plan.windows):
        sleep(plan.pause_s)  # idle: the SM clock comes back from a power-capped state
        for _ in range(max(0, plan.warmup - 1)):
            func()
        peaks.append(timed(plan.iters) / plan.iters)  # timed() starts with the last warm-up product
    sustained = None
    if plan.sustain_iters:
        for _ in range(plan.sustain_load):
            func()
        sustained = median([timed(plan.sustain_iters) / plan.sustain_iters
                            for _ in range(plan.sustain_batches)])
    return median(peaks), sustained, plan


def check_speed(ctx):
    tf = _require_tf(ctx)
    device = _device(ctx)

    def sync(tensor):
        return tensor[0, 0].numpy()

    figures = {}
    n_cpu = min(ctx.matmul_size, 1024)
    with tf.device("/CPU:0"):
        a = tf.random.normal((n_cpu, n_cpu))
        b = tf.random.normal((n_cpu, n_cpu))
        cpu_s, _iters = _time_tf(tf, lambda: tf.matmul(a, b), sync, target_s=0.2, repeats=3, warmup=1)
    figures["cpu_fp32_tflops"] = round(tflops(n_cpu, cpu_s), 4)
    figures["cpu_n"] = n_cpu
    if device.startswith("/CPU"):
        return "CPU fp32 matmul %.3f TFLOP/s (n=%d)" % (figures["cpu_fp32_tflops"], n_cpu), figures
    rows = _precisions(tf, device)
    share_s = speed_budget(ctx, len(rows))
    n = ctx.matmul_size
    figures["n"] = n
    figures["method"] = ("host timer between device syncs; peak: %d products after %d warm-up and an idle "
                         "pause of %gs, median of %d windows; sustained: after %gs of load, median of %d batches"
                         % (PEAK_ITERS, PEAK_WARMUP, PAUSE_S, PEAK_WINDOWS, SUSTAIN_LOAD_S, SUSTAIN_BATCHES))
    figures["budget_s_per_precision"] = round(share_s, 2)
    parts = []
    for label, dtype, tf32 in rows:
        with _Tf32(tf, tf32), tf.device(device):
            pair = (tf.random.normal((n, n), dtype=dtype), tf.random.normal((n, n), dtype=dtype))
            peak_s, sustained_s, plan = _time_tf_gpu(lambda ops=pair: tf.matmul(ops[0], ops[1]), sync, share_s)
        figures[label + "_tflops"] = round(tflops(n, peak_s), 2)
        figures[label + "_tflops_sustained"] = round(tflops(n, sustained_s), 2) if sustained_s else None
        figures[label + "_iters"] = plan.iters
        text = "%s %.1f" % (label, figures[label + "_tflops"])
        if sustained_s:
            text += " (%.1f)" % figures[label + "_tflops_sustained"]
        parts.append(text)
    figures["speedup_fp32_vs_cpu"] = round(figures["fp32_tflops"] / figures["cpu_fp32_tflops"], 1)
    return ("matmul n=%d TFLOP/s, peak (sustained): %s; fp32 %.0fx the CPU"
            % (n, ", ".join(parts), figures["speedup_fp32_vs_cpu"]), figures)


# --- mixed precision, training, memory, several GPUs ----------------------------------------------

def _set_policy(tf, name):
    mixed = tf.keras.mixed_precision
    if hasattr(mixed, "set_global_policy"):
        mixed.set_global_policy(name)
    else:
        mixed.experimental.set_policy(name)


def check_amp(ctx):
    tf = _require_tf(ctx)
    device = _device(ctx)
    if device.startswith("/CPU"):
        policy = "mixed_bfloat16"
    else:
        policy = "mixed_bfloat16" if _capability(tf)[0] >= 8 else "mixed_float16"
    compute = policy.replace("mixed_", "")
    try:
        _set_policy(tf, policy)
        with tf.device(device):
            layer = tf.keras.layers.Dense(64)
            x = tf.random.stateless_normal((max(ctx.batch_size, 8), 128), seed=(2, 0))
            out = layer(x)
    finally:
        _set_policy(tf, "float32")
    reference = tf.matmul(x, tf.cast(layer.kernel, tf.float32)) + tf.cast(layer.bias, tf.float32)
    error = _rel_error(tf, out, reference)
    figures = {"policy": policy, "output_dtype": out.dtype.name, "device": device,
               "result_device": out.device, "rel_error_vs_fp32": float("%.3g" % error)}
    if out.dtype.name != compute:
        raise Fail("mixed precision did not compute in %s (output %s)" % (compute, out.dtype.name), figures)
    if not error < 5e-2:
        raise Fail("mixed-precision result differs from the reference (relative error %.3g)" % error, figures)
    return "Keras policy %s on %s: relative error %.2g vs fp32" % (policy, device, error), figures


def check_train(ctx):
    tf = _require_tf(ctx)
    device = _device(ctx)
    batch = ctx.batch_size
    tf.random.set_seed(3)
    images = tf.random.stateless_normal((batch, 28, 28, 1), seed=(3, 0))
    teacher = tf.random.stateless_normal((28 * 28, 10), seed=(3, 1))
    labels = tf.argmax(tf.matmul(tf.reshape(images, (batch, -1)), teacher), axis=1)
    layers = tf.keras.layers
    losses = []
    with tf.device(device):
        model = tf.keras.Sequential([
            layers.Conv2D(8, 3, activation="relu", input_shape=(28, 28, 1)),
            layers.MaxPooling2D(2), layers.Flatten(), layers.Dense(10),
        ])
        model.compile(optimizer=tf.keras.optimizers.Adam(3e-3),
                      loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        began = time.perf_counter()
        for _ in range(ctx.train_steps):
            value = model.train_on_batch(images, labels)
            if isinstance(value, (list, tuple)):
                value = value[0]
            losses.append(float(value))
        seconds = time.perf_counter() - began
    figures = {"device": device, "batch": batch, "steps": ctx.train_steps,
               "loss_first": round(losses[0], 4), "loss_last": round(losses[-1], 4),
               "losses": [round(v, 4) for v in losses], "seconds": round(seconds, 3),
               "weights_device": _variable_device(model.weights[0]) if model.weights else None}
    if not losses[-1] < losses[0] or any(v != v for v in losses):
        raise Fail("loss did not decrease: %.4f -> %.4f" % (losses[0], losses[-1]), figures)
    return ("%d steps of an MNIST-shaped CNN on %s: loss %.3f -> %.3f"
            % (ctx.train_steps, device, losses[0], losses[-1]), figures)


def _variable_device(variable):
    for holder in (variable, getattr(variable, "value", None)):
        device = getattr(holder, "device", None)
        if isinstance(device, str):
            return device
    return None


def check_memory(ctx):
    tf = _require_tf(ctx)
    device = _device(ctx)
    if device.startswith("/CPU"):
        raise Skip(ctx.gpu_skip_reason() or "CPU-only")
    figures = {}
    try:
        info = tf.config.experimental.get_memory_info("GPU:0")
        figures["tf_peak_mib"] = int(info["peak"] // (1024 * 1024))
    except Exception:  # noqa: BLE001 - TF < 2.5
        pass
    gpus = _list_gpus(tf)
    figures["memory_growth"] = [bool(tf.config.experimental.get_memory_growth(g)) for g in gpus]
    used = _used_fraction()
    if used is not None:
        figures["gpu0_used_percent"] = round(100.0 * used, 1)
        if used > 0.9:
            raise Fail("TensorFlow took %.1f%% of the GPU memory" % (100.0 * used), figures)
    if not all(figures["memory_growth"]):
        raise Fail("memory growth is off: TensorFlow took %s%% of the GPU memory"
                   % figures.get("gpu0_used_percent", "?"), figures)
    return "memory growth on; GPU 0 %s%% used" % figures.get("gpu0_used_percent", "?"), figures


def _used_fraction():
    try:
        import pynvml
        pynvml.nvmlInit()
        try:
            info = pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(0))
            return float(info.used) / float(info.total)
        finally:
            pynvml.nvmlShutdown()
    except Exception:  # noqa: BLE001 - no NVML: the growth flags alone decide
        return None


def check_allreduce(ctx):
    tf = _require_tf(ctx)
    if ctx.mode == "cpu-only":
        raise Skip(ctx.gpu_skip_reason())
    _device(ctx)
    gpus = _list_gpus(tf)
    if len(gpus) < 2:
        raise Skip("%d GPU visible: the all-reduce needs two or more" % len(gpus))
    strategy = tf.distribute.MirroredStrategy()
    count = strategy.num_replicas_in_sync

    def replica_value():
        context = tf.distribute.get_replica_context()
        return tf.cast(context.replica_id_in_sync_group + 1, tf.float32) * tf.ones((1024,))

    per_replica = strategy.run(replica_value)
    total = strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)
    expected = count * (count + 1) / 2.0
    low, high = float(tf.reduce_min(total)), float(tf.reduce_max(total))
    figures = {"replicas": count, "expected_sum": expected, "min": low, "max": high}
    if low != expected or high != expected:
        raise Fail("all-reduce result differs from the reference sum %s (%s..%s)" % (expected, low, high),
                   figures)
    return "MirroredStrategy all-reduce over %d GPUs gives the right sum" % count, figures


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
