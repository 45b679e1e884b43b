"""Record which releases have Linux aarch64 (linux/arm64) wheels on PyPI, with which CUDA (platform_wheels.yaml).

Usage::

    python -m tools.kbrefresh.platform_wheels 'torch>=2.0' 'tensorflow>=2.10' ... [--into FILE]

For every final release a specifier admits that has a CPython (or pure-Python) manylinux x86_64 wheel (the releases
envgen plans for linux/amd64), it reads PyPI's simple index (PEP 691 JSON) once per name and records the release's
manylinux aarch64 wheels: the CPython minors they cover and the newest one's file name, URL and sha256. A release
without one gets a row that says so (``python: []``), which `envgen check` reads as "no aarch64 wheel". The CUDA of
an aarch64 framework wheel is read from the wheel, never typed: its core metadata's Requires-Dist evaluated for Linux
aarch64 (the ``nvidia-cuda-runtime``/``cuda-toolkit`` pin that holds there) and the build's own record of its CUDA
(``torch/version.py``, TensorFlow's ``build_info.py``), both read by HTTP range requests (the zip's central
directory and those members, not the whole wheel). A distribution whose name says its CUDA (``nvidia-*-cu12``,
``jax-cuda12-plugin``) is recorded with that major. Nothing is typed by hand.
"""

from __future__ import annotations

import argparse
import datetime
import email.parser
import json
import re
import sys
import zipfile
from pathlib import Path
from typing import Any

import yaml
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

from tools.kbrefresh.requires import _CP, _CUDART, _JSON, SIMPLE, _get, emit, releases, wheel_metadata
from tools.kbrefresh.wheel_stream import open_seekable

PLATFORM = "linux/arm64"
HEADER = ("# Which releases have manylinux aarch64 wheels (linux/arm64) on PyPI, and with which CUDA: one row per\n"
          "# release that has a manylinux x86_64 wheel, read from PyPI's simple index (PEP 691 JSON) and, for the\n"
          "# frameworks, from the aarch64 wheel itself (core metadata and the build's CUDA record, by range\n"
          "# requests). Made and refreshed by\n"
          "#   python -m tools.kbrefresh.platform_wheels 'torch>=2.0' 'tensorflow>=2.10' 'jaxlib>=0.4.26' \\\n"
          "#     'jax-cuda12-plugin>=0.4.26' 'nvidia-cuda-runtime-cu12>=12.1' 'nvidia-cublas-cu12>=12.1' \\\n"
          "#     'nvidia-cudnn-cu12>=8.9' 'nvidia-nccl-cu12>=2.18' 'nvidia-cuda-runtime-cu11>=11.7' \\\n"
          "#     'nvidia-cudnn-cu11>=8.5' 'torchvision>=0.15' 'torchaudio>=2.0' 'xformers>=0.0.28' \\\n"
          "#     'bitsandbytes>=0.43' 'vllm>=0.8' 'sgl-kernel>=0.1' 'flashinfer-python>=0.2' 'cupy-cuda12x>=13' \\\n"
          "#     'onnxruntime-gpu>=1.18' --into envgen/kb/data/platform_wheels.yaml\n"
          "# (never typed by hand). `python`: the CPython minors with an aarch64 wheel (py3: a pure wheel; []:\n"
          "# none, the release is x86-64 only on PyPI); `framework`: a framework build, whose CUDA was read from the\n"
          "# wheel; `cuda`: the CUDA the aarch64 build carries (null: a CPU build), `cuda_read` saying where it was\n"
          "# read; `arch_list`/`ptx` (the CUDA builds' GPU code, read from their fat binaries by `--arch`:\n"
          "#   python -m tools.kbrefresh.platform_wheels --arch 'torch>=2.11' --into ...) with `arch_source`.\n"
          "# Read by check/gpu/images.py.\n")
# The member of a framework's wheel that records the CUDA it was built with, and the pattern that reads it.
CUDA_RECORDS = {
    "torch": ("torch/version.py", re.compile(r"^cuda\s*(?::\s*[^=]+)?=\s*['\"]([\d.]+)['\"]", re.M)),
    "tensorflow": ("tensorflow/python/platform/build_info.py", re.compile(r"['\"]cuda_version['\"]:\s*['\"]([\d.]+)")),
}
_NAMED_CUDA = re.compile(r"-cu(da)?(\d+)(-|$)")


def _aarch64(tags: frozenset[Any]) -> bool:
    """A manylinux aarch64 wheel, or a pure one (``any``: every platform)."""
    return any(("manylinux" in t.platform and t.platform.endswith("aarch64")) or t.platform == "any" for t in tags)


def aarch64_wheels(files: list[dict[str, Any]], name: str, version: str) -> list[tuple[dict[str, Any], list[str]]]:
    """``version``'s manylinux aarch64 wheels (not yanked), each with the CPython minors its tags name."""
    out = []
    for entry in files:
        filename = entry["filename"]
        if not filename.endswith(".whl") or entry.get("yanked"):
            continue
        dist, wheel_version, _, tags = parse_wheel_filename(filename)
        if dist != canonicalize_name(name) or wheel_version != Version(version) or not _aarch64(tags):
            continue
        minors = sorted({(int(m.group(1)), int(m.group(2))) for t in tags if (m := _CP.match(t.interpreter))})
        out.append((entry, [f"{a}.{b}" for a, b in minors] or ["py3"]))
    return out


def _holds_on_aarch64(marker: Marker | None, python: str) -> bool:
    env = {"python_version": python, "python_full_version": f"{python}.0", "sys_platform": "linux",
           "platform_system": "Linux", "platform_machine": "aarch64", "os_name": "posix",
           "implementation_name": "cpython", "platform_python_implementation": "CPython", "extra": ""}
    return marker is None or marker.evaluate(env)


def runtime_pin(metadata: str, python: str) -> str | None:
    """The exact CUDA runtime pin (``nvidia-cuda-runtime-cu12==12.8.90``) a wheel requires on Linux aarch64 (no
    extra), or None."""
    message = email.parser.Parser().parsestr(metadata, headersonly=True)
    for line in message.get_all("Requires-Dist") or []:
        req = Requirement(line)
        spec = str(req.specifier)
        if _CUDART.match(canonicalize_name(req.name)) and spec.startswith("==") and _holds_on_aarch64(req.marker,
                                                                                                      python):
            return f"{canonicalize_name(req.name)}{spec}"
    return None


def recorded_cuda(name: str, url: str, size: int) -> tuple[str | None, str]:
    """The CUDA the build records of itself (``torch/version.py``'s ``cuda``), read by range requests."""
    member, pattern = CUDA_RECORDS[canonicalize_name(name)]
    with open_seekable(url, size) as handle, zipfile.ZipFile(handle) as wheel:
        if member not in wheel.namelist():
            return None, f"{member} absent"
        found = pattern.search(wheel.read(member).decode("utf-8", "replace"))
    return (found.group(1), f"{member}: {found.group(1)}") if found else (None, f"{member}: no CUDA (a CPU build)")


def framework_cuda(name: str, entry: dict[str, Any], python: str) -> tuple[str | None, str]:
    """(CUDA major.minor or None, what was read) of a framework's aarch64 wheel."""
    metadata = wheel_metadata(entry["url"], int(entry["size"]))
    pin = runtime_pin(metadata, python)
    said = [f"Requires-Dist on aarch64: {pin or 'no CUDA runtime pin'}"]
    cuda, record = recorded_cuda(name, entry["url"], int(entry["size"]))
    said.append(record)
    if cuda is None and pin is not None:
        cuda = ".".join(pin.split("==")[1].split(".")[:2])
    return (".".join(cuda.split(".")[:2]) if cuda else None), "; ".join(said)


def cubins(url: str) -> dict[str, Any]:
    """The aarch64 CUDA build's GPU code, read from its fat binaries (``wheel_arch``: the wheel streamed once, its
    sha256 checked against the index's by the caller)."""
    from tools.kbrefresh import wheel_arch

    read = wheel_arch.read(url)
    sys.stderr.write(f"  cubins of {read['wheel']}: {read['arch_list']} ptx {read['ptx']} ({read['seconds']} s)\n")
    return {"arch_list": read["arch_list"], "ptx": read["ptx"], "arch_source": wheel_arch.source_text(read),
            "sha256_read": read["sha256"]}


def row(name: str, version: str, files: list[dict[str, Any]], read_on: str, arch: bool = False) -> dict[str, Any]:
    name = canonicalize_name(name)
    wheels = aarch64_wheels(files, name, version)
    out: dict[str, Any] = {"name": name, "version": version, "platform": PLATFORM,
                           "python": sorted({py for _, pys in wheels for py in pys}, key=lambda p: Version(
                               p) if p != "py3" else Version("0"))}
    index = f"{SIMPLE.format(name=name)} (PEP 691 JSON; read {read_on})"
    if not wheels:
        return out | {"source": f"{index}: no manylinux aarch64 wheel of {version}"}
    entry, pythons = max(wheels, key=lambda w: [Version(p) for p in w[1] if p != "py3"] or [Version("0")])
    named = _NAMED_CUDA.search(name)
    if name in CUDA_RECORDS:
        sys.stderr.write(f"read {name}=={version}: {entry['filename']}\n")
        cuda, said = framework_cuda(name, entry, pythons[-1] if pythons[-1] != "py3" else "3.12")
        out |= {"framework": True, "cuda": cuda, "cuda_read": said}
        if arch and cuda:
            code = cubins(entry["url"].split("#")[0])
            if code.pop("sha256_read") != entry["hashes"]["sha256"]:
                raise SystemExit(f"{entry['filename']}: the bytes read do not match PyPI's sha256")
            out |= code
    elif named:
        out |= {"cuda": named.group(2), "cuda_read": f"the distribution's name ({name})"}
    return out | {"wheel": entry["filename"], "url": entry["url"].split("#")[0], "sha256": entry["hashes"]["sha256"],
                  "source": index}


def fetch(spec: str, read_on: str, arch: bool = False) -> list[dict[str, Any]]:
    req = Requirement(spec)
    index = json.loads(_get(SIMPLE.format(name=canonicalize_name(req.name)), {"Accept": _JSON}))
    return [row(req.name, version, index["files"], read_on, arch) for version in releases(index["files"], req)]


def merge(path: Path | None, rows: list[dict[str, Any]]) -> str:
    """The file's rows with ``rows`` replacing those of the same name, version and platform, sorted."""
    old = yaml.safe_load(path.read_text(encoding="utf-8")) if path is not None and path.exists() else None
    table = {(r["name"], r["version"], r["platform"]): r for r in (old or {}).get("platform_wheels", [])}
    table |= {(r["name"], r["version"], r["platform"]): r for r in rows}
    ordered = sorted(table.values(), key=lambda r: (r["name"], Version(r["version"]), r["platform"]))
    return HEADER + yaml.safe_dump({"platform_wheels": ordered}, sort_keys=False, width=200,
                                   default_flow_style=None)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.kbrefresh.platform_wheels",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("specs", nargs="+", help="a specifier (torch>=2.0): every final release it admits")
    parser.add_argument("--into", type=Path, help="merge the rows into this data file instead of printing them")
    parser.add_argument("--arch", action="store_true",
                        help="also read each aarch64 CUDA framework build's cubins and PTX (streams the wheel)")
    args = parser.parse_args(argv)
    read_on = datetime.date.today().isoformat()
    emit(merge(args.into, [r for spec in args.specs for r in fetch(spec, read_on, args.arch)]), args.into)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
