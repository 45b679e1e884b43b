"""Write a resolved-profile JSON (the probe's --expect) that matches the Python and PyTorch of this
machine, so that an honest probe run here passes. Used by the GPU tests and the validation runs.

    python tests/gpu/expect_here.py OUT.json [--cpu-only] [--matmul-size 4096] [--extensions]

--extensions adds every GPU extension package installed here (flash-attn, xformers, bitsandbytes, CuPy, Apex,
DeepSpeed, Triton, JAX) to expected.extensions, as envgen does for a profile's packages.pip.
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
            # what the import check imports (envgen.expected/3, as envgen/plan/expected.py writes it)
            "distributions": [{"name": "torch" if key == "pytorch" else key, "kind": "framework",
                               "specifier": f"=={version}", "marker": None, "origin": f"frameworks.{key}"}
                              for key, version in frameworks.items()],
        },
    }


# import name -> how envgen's knowledge base names the distribution (kb/data/extensions.yaml)
EXTENSIONS = ("flash_attn", "xformers", "bitsandbytes", "cupy", "apex", "deepspeed", "triton", "jax", "vllm", "sglang")


def installed_extensions() -> list[dict[str, str]]:
    """{package, module, version} of each extension package importable here (cupy: cupy-cuda12x/13x)."""
    import importlib
    import importlib.util
    from importlib import metadata

    owners = metadata.packages_distributions()
    out = []
    for module in EXTENSIONS:
        if importlib.util.find_spec(module) is None:
            continue
        names = sorted(owners.get(module) or [module], key=lambda d: (d.lower().replace("_", "-") !=
                                                                       module.replace("_", "-"), d))
        try:
            dist, version = names[0], metadata.version(names[0])
        except metadata.PackageNotFoundError:  # not installed by pip: the module's own version
            dist, version = module, str(importlib.import_module(module).__version__)
        out.append({"package": dist.lower().replace("_", "-"), "module": module, "version": version})
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--cpu-only", action="store_true")
    parser.add_argument("--matmul-size", type=int, default=4096)
    parser.add_argument("--extensions", action="store_true")
    args = parser.parse_args()
    doc = build(args.cpu_only, args.matmul_size)
    if args.extensions:
        doc["expected"]["extensions"] = installed_extensions()
    with open(args.out, "w", encoding="utf-8") as handle:
        json.dump(doc, handle, indent=2)


if __name__ == "__main__":
    main()
