"""Write a resolved-profile JSON (the probe's --expect) that matches the Python and PyTorch of this
machine, so that an honest probe run here passes. Used by the GPU tests and the validation runs.

    python tests/gpu/expect_here.py OUT.json [--cpu-only] [--matmul-size 4096]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import platform


def build(cpu_only: bool, matmul_size: int) -> dict:
    import torch

    cudnn = torch.backends.cudnn.version()
    cudnn_text = None
    if cudnn:
        scale = 10000 if cudnn >= 10000 else 1000
        major, minor = cudnn // scale, cudnn % scale // 100
        cudnn_text = f"{major}.{minor}"
    frameworks = {"pytorch": torch.__version__}
    for extra in ("torchvision", "torchaudio"):
        with contextlib.suppress(ImportError):
            frameworks[extra] = __import__(extra).__version__
    return {
        "name": "device-here-cpu" if cpu_only else "device-here",
        "description": "the device machine's own Python and PyTorch",
        "base": "local",
        "python": platform.python_version(),
        "cuda": None if cpu_only else torch.version.cuda,
        "cudnn": None if cpu_only else cudnn_text,
        "frameworks": frameworks,
        "gpu": {"targets": [], "required": not cpu_only},
        "smoke": {"matmul_size": matmul_size, "batch_size": 64, "train_steps": 20, "timeout_s": 300},
        "expected": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "cuda": None if cpu_only else {"torch": torch.version.cuda},
            "cudnn": None if cpu_only else {"torch": cudnn_text},
            "gpu_required": not cpu_only,
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--cpu-only", action="store_true")
    parser.add_argument("--matmul-size", type=int, default=4096)
    args = parser.parse_args()
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(build(args.cpu_only, args.matmul_size), handle, indent=2)


if __name__ == "__main__":
    main()
