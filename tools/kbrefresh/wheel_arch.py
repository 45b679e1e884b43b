"""Arch lists read from a framework wheel's own CUDA code: every fat binary in its shared objects.

Usage::

    python -m tools.kbrefresh.wheel_arch [--compare] WHEEL_OR_URL...

For each wheel (a path, or an https URL streamed without saving it) prints a YAML row: the framework, its
version and CUDA (``torch/version.py`` / tensorflow's ``build_info.py``), ``arch_list`` (SASS ``sm_XX``) and
``ptx`` (``compute_XX``) of the build's code set (the most common set among multi-architecture fat binaries:
``ArchSummary.build_set``), the codes only some kernels carry (``partial``), and a ``source`` naming the
wheel's sha256. ``--compare`` prints how the knowledge base's row differs (exit 1 when it does).
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from typing import Any

import yaml

from tools.kbrefresh import wheel_stream
from tools.kbrefresh.fatbin import ArchSummary, FatbinScanner, split_codes

_INFO = ("torch/version.py", "tensorflow/python/platform/build_info.py")
_CUDA = re.compile(
    r"""(?:^cuda|['"]cuda_version['"]\]?)\s*[:=,]\s*(?:Optional\[str\]\s*=\s*)?['"](?P<v>[\d.]+)['"]""", re.M
)
_CUDNN = re.compile(r"""['"]cudnn_version['"]\]?\s*[:=,]\s*['"](?P<v>[\d.]+)['"]""")
_VERSION = re.compile(r"""^__version__\s*=\s*['"](?P<v>[^'"+]+)""", re.M)
_WHEEL = re.compile(r"^(?P<name>[A-Za-z0-9_.]+?)-(?P<version>[^-]+)-")


_GRAFTED = re.compile(r"-[0-9a-f]{8}\.so")  # a library auditwheel copied in (libcusparseLt-294d6944.so.0)


def _wanted(name: str) -> bool:
    """The framework's own shared objects (and its build-info module): vendored libraries that auditwheel
    grafted into the wheel carry their vendor's arch lists (torch 2.5.1's cuSPARSELt is mostly sm_90-only)."""
    base = name.rsplit("/", 1)[-1]
    if name in _INFO:
        return True
    return ".so" in base and not _GRAFTED.search(base) and not name.startswith("nvidia/")


def read(source: str) -> dict[str, Any]:
    """Scan one wheel and return its row (see the module docstring)."""
    scanners: dict[str, FatbinScanner] = defaultdict(FatbinScanner)
    info: list[bytes] = []
    names: set[str] = set()

    def sink(name: str, data: bytes) -> None:
        names.add(name)
        if name in _INFO:
            info.append(data)
        else:
            scanners[name].feed(data)

    result = wheel_stream.stream(source, _wanted, sink)
    fatbins = [fb for s in scanners.values() for fb in s.fatbins]
    summary = ArchSummary.of(fatbins)
    filename = source.rsplit("/", 1)[-1]
    m = _WHEEL.match(filename)
    text = b"".join(info).decode("utf-8", "replace")
    cuda, cudnn, version = _CUDA.search(text), _CUDNN.search(text), _VERSION.search(text)
    full = summary.build_set()
    arch_list, ptx = split_codes(full)
    partial = {c: f"{n}/{summary.fatbins}" for c, n in sorted(summary.counts.items()) if c not in full}
    return {
        "wheel": filename,
        "framework": "torch" if "torch/version.py" in names else (m.group("name") if m else "?").replace("_", "-"),
        "version": version.group("v") if version else (m.group("version").split("+")[0] if m else "?"),
        "cuda": cuda.group("v") if cuda else None,
        "cudnn": cudnn.group("v") if cudnn else None,
        "arch_list": arch_list,
        "ptx": ptx,
        "partial": partial,
        "sha256": result.sha256,
        "fatbins": summary.fatbins,
        "shared_objects": sum(1 for s in scanners.values() if s.fatbins),
        "read_mb": round(result.read_bytes / 1e6, 1),
        "inflated_mb": round(result.inflated_bytes / 1e6, 1),
        "seconds": round(result.seconds, 1),
    }


def source_text(row: dict[str, Any]) -> str:
    """The ``source`` a KB row read from this wheel carries."""
    partial = ", ".join(f"{c} {n}" for c, n in row["partial"].items())
    return (
        f"read from the wheel's fat binaries: {row['wheel']} sha256:{row['sha256']} "
        f"({row['fatbins']} fat binaries in {row['shared_objects']} shared objects"
        + (f"; in a few kernels only: {partial}" if partial else "")
        + "; python -m tools.kbrefresh.wheel_arch)"
    )


def compare(row: dict[str, Any]) -> list[str]:
    """How the knowledge base's row for this wheel differs from what the wheel holds."""
    from envgen.kb.loader import load_kb

    kb = load_kb()
    if row["framework"] == "torch":
        variant = kb.torch_variant(row["version"], row["cuda"])
        have = None if variant is None else (variant.arch_list, variant.ptx)
        where = f"pytorch.yaml#{row['version']}+cu{(row['cuda'] or '').replace('.', '')}"
    else:
        build = kb.tensorflow_build(row["version"])
        have = None if build is None else (build.arch_list, build.ptx)
        where = f"tensorflow.yaml#{row['version']}"
    if have is None:
        return [f"{where}: no row"]
    out = []
    for field, kb_value, wheel_value in (("arch_list", have[0], row["arch_list"]), ("ptx", have[1], row["ptx"])):
        if kb_value != wheel_value:
            out.append(f"{where} {field}: knowledge base {kb_value} != wheel {wheel_value}")
    return out


def main(argv: list[str]) -> int:
    do_compare = "--compare" in argv
    sources = [a for a in argv if a != "--compare"]
    if not sources:
        sys.stderr.write(__doc__ or "")
        return 2
    differs = False
    for source in sources:
        row = read(source)
        row["source"] = source_text(row)
        sys.stdout.write(yaml.safe_dump([row], sort_keys=False, width=120))
        if do_compare:
            lines = compare(row)
            differs = differs or bool(lines)
            sys.stdout.write("".join(f"# {line}\n" for line in lines))
    return 1 if differs else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
