"""cuDNN: the release exists and was made for the profile's CUDA (profile field and pinned packages)."""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import finding
from envgen.plan.packages import cudnn_sources


def profile_cudnn(ctx: CheckContext) -> list[Finding]:
    cudnn, cuda = ctx.profile.cudnn, ctx.profile.cuda
    if cudnn is None or cuda is None:
        return []
    row = ctx.kb.cudnn(cudnn)
    if row is None:
        return [
            finding(
                "warning",
                "cudnn-unknown",
                f"cuDNN {cudnn} is not in the knowledge base",
                "use a cuDNN release listed in cudnn.yaml",
                "cudnn.yaml",
            )
        ]
    if not ctx.kb.cudnn_supports(row, cuda):
        return [
            finding(
                "error",
                "cudnn-cuda-mismatch",
                f"cuDNN {cudnn} was not released for CUDA {cuda} (cuDNN "
                f"{row.version} supports CUDA {', '.join(row.cuda)})",
                f"choose a cuDNN built for CUDA {cuda}",
                row.cite(),
            )
        ]
    return []


def pinned_cudnn(ctx: CheckContext) -> list[Finding]:
    out = []
    for source in cudnn_sources(ctx.profile, ctx.kb, ctx.stack.pip_pins):
        if source.origin.startswith("base image"):
            continue
        row = ctx.kb.cudnn(source.version)
        if row is None and _torch_pins(ctx, source.version, source.cuda_major):
            continue  # a torch wheel's own Requires-Dist pins it (extensions.yaml torch_cudnn_pins): known
        if row is None:
            out.append(
                finding(
                    "warning",
                    "cudnn-unknown",
                    f"cuDNN {source.version} ({source.origin}) is not in the knowledge base",
                    "use a cuDNN release listed in cudnn.yaml",
                    "cudnn.yaml",
                )
            )
        elif (
            source.cuda_major is not None
            and not ctx.kb.cudnn_supports(row, f"{source.cuda_major}.0")
            and not any(e.split(".")[0] == str(source.cuda_major) for e in row.cuda)
        ):
            out.append(
                finding(
                    "error",
                    "cudnn-cuda-mismatch",
                    f"cuDNN {source.version} ({source.origin}) was not released for CUDA {source.cuda_major}",
                    "choose a matching cuDNN",
                    row.cite(),
                )
            )
    return out


def _torch_pins(ctx: CheckContext, version: str, cuda_major: int | None) -> bool:
    """Whether a torch wheel the knowledge base read pins nvidia-cudnn at ``version`` for that CUDA major (cuDNN
    9.19.0.56 of torch 2.11.0+cu130 was "not in the knowledge base" beside the row that records it)."""
    return any(pin.cudnn == version and (cuda_major is None or pin.cuda.split(".")[0] == str(cuda_major))
               for pin in ctx.kb.torch_cudnn_pins)


RULES = [profile_cudnn, pinned_cudnn]
