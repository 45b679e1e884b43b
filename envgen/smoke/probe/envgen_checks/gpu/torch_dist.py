"""PyTorch multi-GPU check of the envgen probe: an NCCL all-reduce, one process per GPU. Python 3.7+."""

import contextlib
import os
import socket
import tempfile
import time

from ..core.common import Fail, Skip
from .torch_base import _require_gpu, _require_torch


def _free_port():
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def allreduce_worker(rank, world, port, out_dir):
    """One process per GPU: all-reduce a tensor holding rank + 1 and write what arrived."""
    import datetime

    import torch
    import torch.distributed as dist

    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method="tcp://127.0.0.1:%d" % port, world_size=world, rank=rank,
                            timeout=datetime.timedelta(seconds=60))
    try:
        tensor = torch.full((1 << 20,), float(rank + 1), device="cuda:%d" % rank)
        dist.all_reduce(tensor)
        torch.cuda.synchronize()
        began = time.perf_counter()
        dist.all_reduce(tensor)
        torch.cuda.synchronize()
        seconds = time.perf_counter() - began
        with open(os.path.join(out_dir, "rank%d" % rank), "w") as handle:
            handle.write("%r %r %r" % (float(tensor.min()) / world, float(tensor.max()) / world, seconds))
    finally:
        dist.destroy_process_group()


def check_allreduce(ctx):
    torch = _require_torch(ctx)
    _require_gpu(ctx)
    count = torch.cuda.device_count()
    if count < 2:
        raise Skip("%d GPU visible: the all-reduce needs two or more" % count)
    import torch.distributed as dist
    if not dist.is_available() or not dist.is_nccl_available():
        raise Fail("torch.distributed with NCCL is not available in this build")
    out_dir = tempfile.mkdtemp(prefix="envgen-allreduce-")
    torch.multiprocessing.spawn(allreduce_worker, args=(count, _free_port(), out_dir), nprocs=count,
                                join=True)
    # after the first all-reduce every element is S = n(n+1)/2; after the second, n * S
    expected = count * (count + 1) / 2.0
    figures = {"world_size": count, "expected_sum": expected, "backend": "nccl"}
    wrong = []
    for rank in range(count):
        with open(os.path.join(out_dir, "rank%d" % rank)) as handle:
            low, high, seconds = [float(v) for v in handle.read().split()]
        figures["rank%d_seconds" % rank] = round(seconds, 5)
        if low != expected or high != expected:
            wrong.append("rank %d got %s..%s" % (rank, low, high))
    if wrong:
        raise Fail("all-reduce result differs from the reference sum %s: %s" % (expected, "; ".join(wrong)),
                   figures)
    return "NCCL all-reduce over %d GPUs gives the right sum" % count, figures

