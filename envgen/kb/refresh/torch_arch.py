"""Extract per-CUDA TORCH_CUDA_ARCH_LIST from a saved PyTorch ``build_cuda.sh`` and print arch lists in
``torch.cuda.get_arch_list()`` form (``8.6`` -> ``sm_86``; ``9.0+PTX`` adds ``compute_90``).

Usage: ``python -m envgen.kb.refresh.torch_arch build_cuda.sh``.
"""

from __future__ import annotations

import re
import sys

import yaml

_CASE = re.compile(r"^\s*(?P<cuda>\d+\.[\d\[\]]+)\)\s*$")
_LIST = re.compile(r'TORCH_CUDA_ARCH_LIST="(?P<value>[^"]*)"')
_BASE = re.compile(r'^TORCH_CUDA_ARCH_LIST="(?P<value>[0-9.;+A-Za-z]*)"\s*$')


def to_arch(value: str) -> tuple[list[str], list[str]]:
    archs, ptx = [], []
    for item in filter(None, value.replace("${TORCH_CUDA_ARCH_LIST}", "").split(";")):
        code = item.replace("+PTX", "").replace(".", "")
        archs.append(f"sm_{code}")
        if item.endswith("+PTX"):
            ptx.append(f"compute_{code}")
    return archs, ptx


def parse(script: str) -> dict[str, dict[str, list[str]]]:
    """``{cuda case: {arch_list, ptx}}``; a ``${TORCH_CUDA_ARCH_LIST};...`` case extends the base list."""
    base = ""
    current: str | None = None
    out: dict[str, dict[str, list[str]]] = {}
    for line in script.splitlines():
        m = _BASE.match(line)
        if m and current is None:
            base = m.group("value")
            continue
        case = _CASE.match(line)
        if case:
            current = case.group("cuda")
            continue
        m = _LIST.search(line)
        if m and current is not None:
            value = m.group("value").replace("${TORCH_CUDA_ARCH_LIST}", base)
            archs, ptx = to_arch(value)
            out[current] = {"arch_list": archs, "ptx": ptx}
        if line.strip() == ";;":
            current = None
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: python -m envgen.kb.refresh.torch_arch build_cuda.sh\n")
        return 2
    with open(argv[0], encoding="utf-8") as handle:
        sys.stdout.write(yaml.safe_dump(parse(handle.read()), sort_keys=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
