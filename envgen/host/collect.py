"""Turn a provider's raw outputs into `HostFacts`: NVML first, then nvidia-smi in its three formats; the
Docker engine, BuildKit, the NVIDIA container runtime (registered runtime, CDI devices, or the hook); WSL2.

The knowledge base is optional: with it, a GPU whose compute capability no tool reported (drivers before
`--query-gpu=compute_cap`, the default table) gets it from the KB by name. Without it (a machine with no
pydantic), that capability stays unknown and the facts say so.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from envgen.host.cdi import parse_spec
from envgen.host.facts import CDI_DIRS, HostFactsProvider
from envgen.host.model import CdiFacts, DockerFacts, GpuFact, HostFacts, Probe, RuntimeFacts
from envgen.host.parse import (
    SmiReading,
    parse_docker_info,
    parse_nvml_json,
    parse_query_csv,
    parse_smi_q,
    parse_smi_table,
    version_tuple,
)
from envgen.host.route import gpu_access

# BuildKit shipped in Docker Engine 18.09.
BUILDKIT_MIN_ENGINE = (18, 9)


def _read_gpus(provider: HostFactsProvider) -> tuple[SmiReading | None, str | None, list[str]]:
    """The first source that names at least one GPU; else (None, None, [reasons])."""
    sources: list[tuple[str, Callable[[], Probe], Callable[[str], SmiReading]]] = [
        ("nvml", provider.nvml, parse_nvml_json),
        ("nvidia-smi --query-gpu", provider.nvidia_smi_query, parse_query_csv),
        ("nvidia-smi -q", provider.nvidia_smi_q, parse_smi_q),
        ("nvidia-smi", provider.nvidia_smi_table, parse_smi_table),
    ]
    errors: list[str] = []
    for label, read, parse in sources:
        probe = read()
        if not probe.ok:
            if probe.error and probe.error not in errors:
                errors.append(probe.error)
            continue
        try:
            reading = parse(probe.output or "")
        except (ValueError, KeyError, TypeError) as exc:
            errors.append(f"{label}: unreadable output ({exc})")
            continue
        if reading.gpus:
            return reading, label, errors
        errors.append(f"{label}: no GPU listed")
    return None, None, errors


def _cuda_from_other_sources(provider: HostFactsProvider, reading: SmiReading) -> str | None:
    if reading.cuda:
        return reading.cuda
    for read, parse in ((provider.nvidia_smi_q, parse_smi_q), (provider.nvidia_smi_table, parse_smi_table)):
        probe = read()
        if probe.ok:
            cuda = parse(probe.output or "").cuda
            if cuda:
                return cuda
    return None


def name_candidates(name: str) -> list[str]:
    """Names to look up in the KB, most specific first: "NVIDIA A100-SXM..." -> [..., "A100-SXM", "A100"]."""
    base = name.replace("...", "").replace("…", "").strip()
    candidates = [name, base]
    bare = re.sub(r"^(NVIDIA|GeForce|Quadro|Tesla)\s+", "", base, flags=re.IGNORECASE)
    bare = re.sub(r"^(GeForce)\s+", "", bare, flags=re.IGNORECASE)
    candidates.append(bare)
    first = bare.split()[0] if bare.split() else bare
    candidates.extend([first, first.split("-")[0]])
    seen: list[str] = []
    for candidate in candidates:
        if candidate and candidate not in seen:
            seen.append(candidate)
    return seen


def _cc_from_kb(kb: Any, name: str) -> str | None:
    if kb is None:
        return None
    for candidate in name_candidates(name):
        try:
            model = kb.gpu(candidate)
        except Exception:  # an odd name must not break the doctor
            model = None
        if model is not None and getattr(model, "compute_capability", None):
            return str(model.compute_capability)
    return None


def _gpus(reading: SmiReading, source: str, kb: Any) -> tuple[GpuFact, ...]:
    facts = []
    for row in reading.gpus:
        cc, cc_source = row.compute_capability, ("nvml" if source == "nvml" else "nvidia-smi")
        if not cc:
            cc = _cc_from_kb(kb, row.name)
            cc_source = "kb" if cc else ""
        facts.append(GpuFact(row.index, row.name, cc, row.memory_mib, cc_source))
    return tuple(facts)


def _docker(provider: HostFactsProvider) -> DockerFacts:
    probe = provider.docker_info()
    if not probe.ok:
        return DockerFacts(reachable=False, error=probe.error or "the Docker engine did not answer")
    info = parse_docker_info(probe.output or "")
    if info.server_version is None:
        first = (probe.output or "").strip().splitlines()
        return DockerFacts(reachable=False, error=first[0] if first else "docker info said nothing")
    builder = provider.builder()
    if builder.ok:
        kind = (builder.output or "").strip()
        buildkit: bool | None = kind != "classic"
    else:
        kind = None
        buildkit = version_tuple(info.server_version)[:2] >= BUILDKIT_MIN_ENGINE
    return DockerFacts(
        reachable=True,
        server_version=info.server_version,
        buildkit=buildkit,
        builder=kind,
        runtimes=info.runtimes,
        default_runtime=info.default_runtime,
        operating_system=info.operating_system,
        kernel_version=info.kernel_version,
        cdi_spec_dirs=info.cdi_spec_dirs,
        engine=info.engine,
    )


def _runtime(provider: HostFactsProvider, docker: DockerFacts) -> RuntimeFacts:
    if not docker.reachable:
        return RuntimeFacts("unknown", "the Docker engine could not be asked")
    if "nvidia" in docker.runtimes:
        return RuntimeFacts("registered", "the engine lists the nvidia runtime")
    hook = provider.nvidia_hook()
    if hook:
        return RuntimeFacts(
            "hook", f"{hook} is on PATH: the engine registers its GPU driver when it starts with it there"
        )
    return RuntimeFacts(
        "missing", "the engine lists no nvidia runtime and no nvidia-container-runtime-hook is on PATH"
    )


def _cdi(provider: HostFactsProvider, docker: DockerFacts) -> CdiFacts:
    """The engine reads CDI specs when `docker info` lists CDI spec directories; the specs are read from
    those (from the default ones when the engine lists none, so the doctor can say they go unused)."""
    dirs = docker.cdi_spec_dirs or CDI_DIRS
    specs = tuple(parse_spec(text, path) for path, text in provider.cdi_specs(tuple(dirs)))
    return CdiFacts(enabled=bool(docker.cdi_spec_dirs), spec_dirs=tuple(docker.cdi_spec_dirs), specs=specs)


def collect(provider: HostFactsProvider, kb: Any = None) -> HostFacts:
    reading, source, errors = _read_gpus(provider)
    docker = _docker(provider)
    notes: list[str] = []
    if reading is None:
        gpus: tuple[GpuFact, ...] = ()
        driver = cuda = None
        gpu_error = "; ".join(errors) if errors else "no GPU found"
    else:
        gpus = _gpus(reading, source or "", kb)
        driver, gpu_error = reading.driver, None
        cuda = _cuda_from_other_sources(provider, reading)
        for gpu in gpus:
            if gpu.compute_capability is None:
                notes.append(f"compute capability of {gpu.name!r} unknown: not reported by the driver "
                             "and not found in the knowledge base")
    runtime = _runtime(provider, docker)
    cdi = _cdi(provider, docker)
    return HostFacts(
        gpus=gpus,
        driver=driver,
        cuda_driver_api=cuda,
        gpu_source=source,
        gpu_error=gpu_error,
        docker=docker,
        nvidia_runtime=runtime,
        wsl=provider.is_wsl(),
        notes=tuple(notes),
        cdi=cdi,
        gpu_access=gpu_access(docker, runtime, cdi),
    )
