"""The run-time gate: before `envgen run` starts a container, the host facts are checked against the
image's profile with the doctor's rules; and the engine's own GPU errors are turned into the same sentences.
"""

from __future__ import annotations

import re
from typing import Any

from envgen.errors import HostIncompatible
from envgen.host.doctor import NO_RUNTIME_FIX, ProfileVerdict, verdict_for
from envgen.host.model import HostFacts
from envgen.host.route import CDI_ENABLE_FIX, CDI_GENERATE_FIX

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


def gate(facts: HostFacts, profile: Any, kb: Any) -> ProfileVerdict:
    """Raise HostIncompatible when the doctor says the profile cannot run here; otherwise return the
    verdict (its warnings are for the caller to show)."""
    verdict = verdict_for(facts, profile, kb)
    if verdict.verdict != "cannot-run":
        return verdict
    errors = [r for r in verdict.reasons if r.severity == "error"]
    message = f"{profile.name} cannot run on this host: " + "; ".join(r.message for r in errors)
    fixes = []
    for reason in errors:
        if reason.fix and reason.fix not in fixes:
            fixes.append(reason.fix)
    raise HostIncompatible(message, fix="; ".join(fixes) or None)


def _cuda_fix(cuda: str, kb: Any) -> str:
    row = None
    if kb is not None:
        try:
            row = kb.cuda(cuda)
        except Exception:
            row = None
    if row is not None:
        return (f"upgrade the NVIDIA driver to >= {row.driver_linux_min} on Linux "
                f"(>= {row.driver_windows_min} on Windows/WSL2), or choose a profile built for an older CUDA")
    return (f"upgrade the NVIDIA driver to one that supports CUDA {cuda} (nvidia-smi shows the CUDA version "
            "it supports), or choose a profile built for an older CUDA")


def translate_engine_error(text: str, kb: Any = None) -> HostIncompatible | None:
    """The engine's GPU errors as the doctor words them; None for any other error."""
    if _NO_CDI_RE.search(text):
        return HostIncompatible(
            "the Docker engine does not read CDI specs (Docker older than 25, or its cdi feature is off), so a "
            "GPU asked for by CDI cannot reach the container",
            fix=f"{CDI_ENABLE_FIX}; or take the NVIDIA runtime route (--gpu-route runtime)",
        )
    if _NO_DRIVER_RE.search(text) or _UNKNOWN_RUNTIME_RE.search(text):
        return HostIncompatible(
            "the Docker engine cannot hand GPUs to containers through the NVIDIA runtime: the NVIDIA Container "
            "Toolkit is not installed, or Docker was not restarted after it was installed",
            fix=f"{NO_RUNTIME_FIX}; or, where the engine has CDI specs for the GPUs, take that route "
                "(--gpu-route cdi; `envgen doctor` shows the routes)",
        )
    cdi = _CDI_UNRESOLVABLE_RE.search(text)
    if cdi:
        return HostIncompatible(
            f"the engine's CDI specs declare no device {cdi.group(1).rstrip('.')}",
            fix=f"ask for the devices `envgen doctor` lists, or {CDI_GENERATE_FIX}",
        )
    match = _CUDA_REQ_RE.search(text)
    if match:
        cuda = match.group(1)
        return HostIncompatible(
            f"the NVIDIA driver on this host is too old for this image: it needs a driver that supports "
            f"CUDA {cuda}",
            fix=_cuda_fix(cuda, kb),
        )
    if _WSL_NO_ADAPTER_RE.search(text):
        return HostIncompatible(
            "WSL2 shows no GPU to containers: the Windows NVIDIA driver does not expose the GPU to WSL",
            fix="install a current Windows NVIDIA driver with WSL support, run `wsl --update`, and check "
            "that `nvidia-smi` works inside the WSL distribution",
        )
    if "nvidia-container-cli" in text:
        return HostIncompatible(
            f"the NVIDIA container runtime refused to start the container: {' '.join(text.split())}",
            fix="run `nvidia-smi` on the host and `envgen doctor`",
        )
    return None
