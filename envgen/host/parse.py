"""Parsers for what NVIDIA's and Docker's tools print. Pure functions over text; no I/O.

Formats read: `nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]`, `nvidia-smi -q`, the default
`nvidia-smi` table (old 79-column, new 89-column, and the Windows/WDDM layout), the pynvml reading that
`RealProvider.nvml` serialises, and `docker info` as JSON (`--format '{{json .}}'` or the SDK) or as text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from envgen.docker.engine import PODMAN_CDI_DIRS, engine_from_version

QUERY_FIELDS = ("index", "name", "driver_version", "memory.total", "compute_cap")

_DRIVER_RE = re.compile(r"Driver Version\s*:\s*([0-9][0-9.]*)")
_CUDA_RE = re.compile(r"CUDA Version\s*:\s*([0-9][0-9.]*)")
_TABLE_GPU_RE = re.compile(r"^\|\s+(\d+)\s+(.+?)\s+(On|Off|WDDM|TCC)\s*\|")
_TABLE_MEM_RE = re.compile(r"(\d+)\s*MiB\s*/\s*(\d+)\s*MiB")
_CC_RE = re.compile(r"^\d+\.\d+$")


@dataclass(frozen=True)
class GpuRow:
    index: int
    name: str
    memory_mib: int | None = None
    compute_capability: str | None = None


@dataclass(frozen=True)
class SmiReading:
    driver: str | None
    cuda: str | None
    gpus: tuple[GpuRow, ...]


@dataclass(frozen=True)
class DockerInfo:
    server_version: str | None
    runtimes: tuple[str, ...]
    default_runtime: str | None
    operating_system: str | None
    kernel_version: str | None
    cdi_spec_dirs: tuple[str, ...]
    engine: str | None = None  # "docker" or "podman" (from the version's components, when given)


def _int_or_none(text: str) -> int | None:
    digits = re.match(r"\s*(\d+)", text)
    return int(digits.group(1)) if digits else None


def parse_query_csv(text: str) -> SmiReading:
    """Rows of `index, name, driver_version, memory.total[, compute_cap]`; a header line is skipped."""
    rows: list[GpuRow] = []
    drivers: list[str] = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < 4 or not cells[0].isdigit():
            continue  # header, blank line or an error message
        cc = cells[4] if len(cells) > 4 and _CC_RE.match(cells[4]) else None
        rows.append(GpuRow(int(cells[0]), cells[1], _int_or_none(cells[3]), cc))
        drivers.append(cells[2])
    return SmiReading(drivers[0] if drivers else None, None, tuple(rows))


def parse_smi_q(text: str) -> SmiReading:
    """`nvidia-smi -q`: driver and CUDA version at the top, then one block per GPU."""
    driver = _DRIVER_RE.search(text)
    cuda = _CUDA_RE.search(text)
    rows: list[GpuRow] = []
    name: str | None = None
    in_fb = False
    memory: int | None = None
    for line in text.splitlines():
        stripped = line.strip()
        key, _, value = (part.strip() for part in stripped.partition(":"))
        if key == "Product Name":
            if name is not None:
                rows.append(GpuRow(len(rows), name, memory))
            name, memory, in_fb = value, None, False
        elif stripped == "FB Memory Usage":
            in_fb = True
        elif in_fb and key == "Total":
            memory, in_fb = _int_or_none(value), False
    if name is not None:
        rows.append(GpuRow(len(rows), name, memory))
    return SmiReading(driver.group(1) if driver else None, cuda.group(1) if cuda else None, tuple(rows))


def parse_smi_table(text: str) -> SmiReading:
    """The default `nvidia-smi` table. Names may be cut ("NVIDIA A100-SXM...")."""
    driver = _DRIVER_RE.search(text)
    cuda = _CUDA_RE.search(text)
    rows: list[GpuRow] = []
    pending: tuple[int, str] | None = None
    for line in text.splitlines():
        gpu = _TABLE_GPU_RE.match(line.strip())
        if gpu:
            if pending is not None:
                rows.append(GpuRow(pending[0], pending[1]))
            pending = (int(gpu.group(1)), gpu.group(2).strip())
            continue
        mem = _TABLE_MEM_RE.search(line)
        if pending is not None and mem:
            rows.append(GpuRow(pending[0], pending[1], int(mem.group(2))))
            pending = None
    if pending is not None:
        rows.append(GpuRow(pending[0], pending[1]))
    return SmiReading(driver.group(1) if driver else None, cuda.group(1) if cuda else None, tuple(rows))


def parse_nvml_json(text: str) -> SmiReading:
    """The JSON `RealProvider.nvml` writes: {"driver", "cuda", "gpus": [{index, name, compute_capability,
    memory_mib}]}."""
    data = json.loads(text)
    rows = tuple(
        GpuRow(int(g.get("index", i)), str(g["name"]), g.get("memory_mib"), g.get("compute_capability"))
        for i, g in enumerate(data.get("gpus", []))
    )
    return SmiReading(data.get("driver"), data.get("cuda"), rows)


def _docker_info_from_dict(data: dict[str, Any]) -> DockerInfo:
    """The SDK's info dict; a "Components" key (the engine's /version components, which RealProvider adds)
    names the engine. Podman lists no CDISpecDirs but reads the default directories always."""
    runtimes = data.get("Runtimes") or {}
    names = tuple(sorted(runtimes)) if isinstance(runtimes, dict) else tuple(runtimes)
    engine = engine_from_version(data).kind if data.get("Components") else None
    cdi_dirs = tuple(data.get("CDISpecDirs") or (PODMAN_CDI_DIRS if engine == "podman" else ()))
    return DockerInfo(
        server_version=data.get("ServerVersion") or None,
        runtimes=names,
        default_runtime=data.get("DefaultRuntime") or None,
        operating_system=data.get("OperatingSystem") or None,
        kernel_version=data.get("KernelVersion") or None,
        cdi_spec_dirs=cdi_dirs,
        engine=engine,
    )


def _docker_info_from_text(text: str) -> DockerInfo:
    fields: dict[str, str] = {}
    cdi_dirs: list[str] = []
    in_cdi = False
    for line in text.splitlines():
        stripped = line.strip()
        if in_cdi:
            if stripped.startswith("/"):
                cdi_dirs.append(stripped)
                continue
            in_cdi = False
        if stripped == "CDI spec directories:":
            in_cdi = True
            continue
        key, sep, value = stripped.partition(":")
        if sep and key not in fields:
            fields[key] = value.strip()
    runtimes = tuple(fields.get("Runtimes", "").split())
    return DockerInfo(
        server_version=fields.get("Server Version") or None,
        runtimes=runtimes,
        default_runtime=fields.get("Default Runtime") or None,
        operating_system=fields.get("Operating System") or None,
        kernel_version=fields.get("Kernel Version") or None,
        cdi_spec_dirs=tuple(cdi_dirs),
    )


def parse_docker_info(text: str) -> DockerInfo:
    """`docker info` as JSON (CLI `--format '{{json .}}'`, or the SDK's dict dumped) or as plain text."""
    try:
        data = json.loads(text)
    except ValueError:
        return _docker_info_from_text(text)
    if not isinstance(data, dict):
        return _docker_info_from_text(text)
    return _docker_info_from_dict(data)


def is_wsl_kernel(proc_version: str) -> bool:
    """/proc/version of a WSL kernel names Microsoft ("...-microsoft-standard-WSL2")."""
    return "microsoft" in proc_version.lower()


def version_tuple(version: str) -> tuple[int, ...]:
    """"418.87.00" -> (418, 87, 0); "18.09.1-ce" -> (18, 9, 1); "20.10.24+dfsg1" -> (20, 10, 24)."""
    parts: list[int] = []
    for piece in re.split(r"[.]", version):
        digits = re.match(r"\d+", piece)
        if not digits:
            break
        parts.append(int(digits.group(0)))
        if digits.group(0) != piece:
            break
    return tuple(parts)
