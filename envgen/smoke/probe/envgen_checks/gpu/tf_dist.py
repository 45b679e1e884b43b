"""TensorFlow multi-GPU check of the envgen probe: a MirroredStrategy all-reduce. Python 3.7+."""

from ..core.common import Fail, Skip
from .tf_base import _device, _list_gpus, _require_tf


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

