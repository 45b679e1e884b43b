"""The engine's GPU refusals (`GpuRequestRefused`, raised by `envgen.docker`) in the doctor's words, as the host
error they are (`HostIncompatible`). `pipeline/` translates where it starts a container; the fixes named here are
the doctor's and the GPU route's too."""

from __future__ import annotations

from typing import Any

from envgen.docker.gpu_errors import gpu_refusal
from envgen.errors import GpuRequestRefused, HostIncompatible

NO_RUNTIME_FIX = "install the NVIDIA Container Toolkit (package nvidia-container-toolkit), then " \
    "`sudo nvidia-ctk runtime configure --runtime=docker` and `sudo systemctl restart docker`"
CDI_GENERATE_FIX = "generate the CDI spec: `sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml`"
CDI_ENABLE_FIX = ("enable the engine's CDI feature (Docker >= 25): `{\"features\": {\"cdi\": true}}` in "
                  "/etc/docker/daemon.json, then restart the engine")


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


def _worded(refusal: GpuRequestRefused, kb: Any) -> tuple[str, str]:
    """(message, fix) for each refusal the engine layer reads."""
    text, detail = refusal.engine_message, refusal.detail
    cuda_fix = _cuda_fix(detail, kb) if refusal.reason == "cuda-requirement" and detail else ""  # the KB read only then
    return {
        "no-cdi": ("the Docker engine does not read CDI specs (Docker older than 25, or its cdi feature is off), so "
                   "a GPU asked for by CDI cannot reach the container",
                   f"{CDI_ENABLE_FIX}; or take the NVIDIA runtime route (--gpu-route runtime)"),
        "no-runtime": ("the Docker engine cannot hand GPUs to containers through the NVIDIA runtime: the NVIDIA "
                       "Container Toolkit is not installed, or Docker was not restarted after it was installed",
                       f"{NO_RUNTIME_FIX}; or, where the engine has CDI specs for the GPUs, take that route "
                       "(--gpu-route cdi; `envgen doctor` shows the routes)"),
        "cdi-unresolvable": (f"the engine's CDI specs declare no device {detail}",
                             f"ask for the devices `envgen doctor` lists, or {CDI_GENERATE_FIX}"),
        "cuda-requirement": (f"the NVIDIA driver on this host is too old for this image: it needs a driver that "
                             f"supports CUDA {detail}", cuda_fix),
        "wsl-no-adapter": ("WSL2 shows no GPU to containers: the Windows NVIDIA driver does not expose the GPU to WSL",
                           "install a current Windows NVIDIA driver with WSL support, run `wsl --update`, and check "
                           "that `nvidia-smi` works inside the WSL distribution"),
    }.get(refusal.reason, (f"the NVIDIA container runtime refused to start the container: {' '.join(text.split())}",
                           "run `nvidia-smi` on the host and `envgen doctor`"))


def host_incompatible(refusal: GpuRequestRefused, kb: Any = None) -> HostIncompatible:
    """The engine's GPU refusal as the host error, in the doctor's words (``kb``: the driver a CUDA needs)."""
    message, fix = _worded(refusal, kb)
    return HostIncompatible(message, fix=fix)


def translate_engine_error(text: str, kb: Any = None) -> HostIncompatible | None:
    """The engine's error text, when it is a GPU refusal, as the doctor words it; None for any other error."""
    refusal = gpu_refusal(text)
    return host_incompatible(refusal, kb) if refusal is not None else None
