"""The probe's Triton kernel: imported only by the Triton check (``import triton`` at the top), so that the
probe itself never needs Triton. Python 3.7+."""

import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def vector_add(torch, n=98432):
    """(max absolute error against torch's x + y, n) of one launch of ``_add``."""
    gen = torch.Generator(device="cuda").manual_seed(5)
    x = torch.rand(n, device="cuda", generator=gen)
    y = torch.rand(n, device="cuda", generator=gen)
    out = torch.empty_like(x)
    _add[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK_SIZE=BLOCK)
    torch.cuda.synchronize()
    return float((out - (x + y)).abs().max()), n
