"""The Docker engine's refusals of a container's GPU request, read from its error text into envgen's typed engine
error (`GpuRequestRefused`, which says which refusal it is). The engine layer words nothing for the host: `pipeline/`
turns the refusal into the doctor's sentences (`envgen.host.engine_errors`)."""

from __future__ import annotations

import re

from envgen.errors import GpuRequestRefused

# docker: Error response from daemon: could not select device driver "" with capabilities: [[gpu]].
_NO_DRIVER_RE = re.compile(r'could not select device driver "[^"]*" with capabilities: \[\[gpu\]\]')
# nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update your driver ...
# (old toolkits wrote "cuda >= 9.0")
_CUDA_REQ_RE = re.compile(r"unsatisfied condition:\s*cuda\s*>=\s*([0-9]+(?:\.[0-9]+)*)")
_UNKNOWN_RUNTIME_RE = re.compile(r"(unknown or invalid runtime name|Unknown runtime specified):? nvidia")
_WSL_NO_ADAPTER_RE = re.compile(r"WSL environment detected but no adapters were found")
# a CDI request to an engine that does not read CDI specs (recorded here, Debian 12's Docker 20.10.24):
# could not select device driver "cdi" with capabilities: []
_NO_CDI_RE = re.compile(r'could not select device driver "cdi"')
# Docker >= 25 with CDI (recorded on the H200, Docker 26.1.5): a device no spec declares
# CDI device injection failed: unresolvable CDI devices nvidia.com/gpu=7
_CDI_UNRESOLVABLE_RE = re.compile(r"unresolvable CDI devices ([A-Za-z0-9./_-]+=[A-Za-z0-9:._-]+(?:[, ]+[A-Za-z0-9./_-]+"
                                  r"=[A-Za-z0-9:._-]+)*)")


def gpu_refusal(text: str) -> GpuRequestRefused | None:
    """The engine's error ``text`` as a GPU refusal (first match wins, in this order); None for any other error."""
    if _NO_CDI_RE.search(text):
        return GpuRequestRefused(text, reason="no-cdi")
    if _NO_DRIVER_RE.search(text) or _UNKNOWN_RUNTIME_RE.search(text):
        return GpuRequestRefused(text, reason="no-runtime")
    cdi = _CDI_UNRESOLVABLE_RE.search(text)
    if cdi:
        return GpuRequestRefused(text, reason="cdi-unresolvable", detail=cdi.group(1).rstrip("."))
    match = _CUDA_REQ_RE.search(text)
    if match:
        return GpuRequestRefused(text, reason="cuda-requirement", detail=match.group(1))
    if _WSL_NO_ADAPTER_RE.search(text):
        return GpuRequestRefused(text, reason="wsl-no-adapter")
    if "nvidia-container-cli" in text:
        return GpuRequestRefused(text, reason="container-cli")
    return None
