"""TensorFlow placement and correctness checks of the envgen probe: matmul and convolution against a
float64 CPU reference, mixed precision, a few training steps, memory growth. Python 3.7+."""

import time

from ..core.common import Fail, Skip
from .matmul import judge_error, matmul_verdict
from .tf_base import (
    FRAMEWORK,
    TOLERANCE,
    _capability,
    _device,
    _list_gpus,
    _precisions,
    _rel_error,
    _require_tf,
    _Tf32,
)


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
        judge_error(figures, bad, label, _rel_error(tf, c, reference), TOLERANCE)
    return matmul_verdict(n, device, bad, figures)


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

