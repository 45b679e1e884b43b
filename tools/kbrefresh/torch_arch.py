"""Extract per-CUDA TORCH_CUDA_ARCH_LIST from a saved PyTorch ``build_cuda.sh`` and print arch lists in
``torch.cuda.get_arch_list()`` form (``8.6`` -> ``sm_86``; ``9.0+PTX`` adds ``compute_90``).

Usage: ``python -m tools.kbrefresh.torch_arch build_cuda.sh``. The stored excerpts of the release branches'
scripts (``upstream/pytorch-builder-arch-lists.txt``: ``== torch X.Y`` sections of ``line number: line``) are read
by :func:`sections`; :func:`case_for` finds the case a CUDA version falls in (bash case patterns are globs).
"""

from __future__ import annotations

import fnmatch
import re
import sys
from pathlib import Path

import yaml

_CASE = re.compile(r"^\s*(?P<cuda>\d+\.[\d\[\]*]+)\)\s*$")
_NUMBERED = re.compile(r"^\d+: ")
_SECTION = re.compile(r"^== torch (?P<torch>[\w.-]+): ")
STORED = Path(__file__).resolve().parent / "upstream" / "pytorch-builder-arch-lists.txt"
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


def sections(text: str) -> dict[str, tuple[int, dict[str, dict[str, list[str]]]]]:
    """The stored excerpts: ``{torch X.Y or X.Y.Z: (the section's line in the file, its cases)}``."""
    out: dict[str, tuple[int, dict[str, dict[str, list[str]]]]] = {}
    current: tuple[str, int] | None = None
    body: list[str] = []
    for number, line in enumerate([*text.splitlines(), "== torch 0: end"], start=1):
        head = _SECTION.match(line)
        if head:
            if current is not None:
                out[current[0]] = (current[1], parse("\n".join(body)))
            current, body = (head.group("torch"), number), []
        elif _NUMBERED.match(line):
            body.append(_NUMBERED.sub("", line, count=1))
    return out


def case_for(cases: dict[str, dict[str, list[str]]], cuda: str) -> dict[str, list[str]] | None:
    """The arch list of the first case whose pattern matches ``cuda`` (as bash's case does)."""
    return next((value for pattern, value in cases.items() if fnmatch.fnmatchcase(cuda, pattern)), None)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: python -m tools.kbrefresh.torch_arch build_cuda.sh\n")
        return 2
    with open(argv[0], encoding="utf-8") as handle:
        sys.stdout.write(yaml.safe_dump(parse(handle.read()), sort_keys=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
