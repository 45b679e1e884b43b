"""What every TensorFlow check of the envgen probe shares: the facts and the log, the import gate, the
GPU list and device, TF32, the precisions and the error measure. Python 3.7+."""

from ..core.common import Skip

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


def _list_gpus(tf):
    config = tf.config
    lister = getattr(config, "list_physical_devices", None) or config.experimental.list_physical_devices
    return lister("GPU")



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

