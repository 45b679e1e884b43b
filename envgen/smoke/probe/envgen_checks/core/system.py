"""Host and device facts for the envgen probe: Python, the machine, and the GPUs (NVML or nvidia-smi).

Standard library only (pynvml is used when importable); Python 3.7+.
"""

import glob
import os
import platform
import socket
import subprocess
import sys

from .common import Fail, Skip
from .versions import compare_versions


def host_facts():
    return {
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "in_container": os.path.exists("/.dockerenv") or os.path.exists("/run/.containerenv"),
        "dev_nvidia": sorted(glob.glob("/dev/nvidia*")),
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "nvidia_visible_devices": os.environ.get("NVIDIA_VISIBLE_DEVICES"),
        "cpu_count": os.cpu_count(),
    }


def python_facts():
    return {
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
    }


def check_python(ctx):
    actual = platform.python_version()
    mismatches, figures = compare_versions([("python", ctx.expected("python"), actual, None)])
    if mismatches:
        raise Fail("version mismatch: " + "; ".join(mismatches), figures)
    return "Python %s (%s)" % (actual, sys.executable), figures


# --- GPUs ------------------------------------------------------------------------------------------

def _text(value):
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def gpus_from_nvml():
    """(driver, cuda_driver, gpus) through NVML, or None when pynvml is missing or NVML fails."""
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - NVML_ERROR_LIBRARY_NOT_FOUND and friends: fall back
        return None
    try:
        driver = _text(pynvml.nvmlSystemGetDriverVersion())
        cuda_driver = None
        try:
            number = pynvml.nvmlSystemGetCudaDriverVersion()
            cuda_driver = "%d.%d" % (number // 1000, (number % 1000) // 10)
        except Exception:  # noqa: BLE001 - older NVML
            pass
        gpus = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(handle)
            gpus.append({
                "index": index,
                "name": _text(pynvml.nvmlDeviceGetName(handle)),
                "memory_mib": int(pynvml.nvmlDeviceGetMemoryInfo(handle).total // (1024 * 1024)),
                "compute_capability": "%d.%d" % (major, minor),
            })
        return driver, cuda_driver, gpus
    finally:
        try:
            pynvml.nvmlShutdown()
        except Exception:  # noqa: BLE001
            pass


def parse_nvidia_smi(text):
    """Rows of `nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap
    --format=csv,noheader` -> (driver, gpus)."""
    gpus = []
    driver = None
    for index, line in enumerate(row for row in text.splitlines() if row.strip()):
        cells = [cell.strip() for cell in line.split(",")]
        if len(cells) < 3:
            continue
        driver = cells[1]
        memory = cells[2].split()[0] if cells[2] else ""
        gpus.append({
            "index": index,
            "name": cells[0],
            "memory_mib": int(memory) if memory.isdigit() else None,
            "compute_capability": cells[3] if len(cells) > 3 and cells[3] not in ("", "[N/A]") else None,
        })
    return driver, gpus


def gpus_from_nvidia_smi():
    """(driver, None, gpus, error_text); gpus is None when nvidia-smi is missing or fails."""
    query = ["nvidia-smi", "--query-gpu=name,driver_version,memory.total,compute_cap",
             "--format=csv,noheader,nounits"]
    try:
        done = subprocess.run(query, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        return None, None, None, "nvidia-smi: %s" % exc
    if done.returncode != 0 and "compute_cap" in done.stdout + done.stderr:
        # drivers before 510 do not know compute_cap: ask without it
        query[1] = "--query-gpu=name,driver_version,memory.total"
        done = subprocess.run(query, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=30)
    if done.returncode != 0:
        return None, None, None, (done.stdout + done.stderr).strip()
    driver, gpus = parse_nvidia_smi(done.stdout)
    return driver, None, gpus, ""


def check_devices(ctx):
    """GPUs seen by the driver; decides the run's mode (gpu / cpu-only)."""
    dev_nodes = sorted(glob.glob("/dev/nvidia[0-9]*"))
    source = "nvml"
    found = gpus_from_nvml()
    error_text = ""
    if found is None or not found[2]:
        source = "nvidia-smi"
        driver, cuda_driver, gpus, error_text = gpus_from_nvidia_smi()
    else:
        driver, cuda_driver, gpus = found
    gpus = gpus or []
    ctx.gpus = gpus
    ctx.driver = driver
    figures = {
        "source": source,
        "driver": driver,
        "driver_cuda": cuda_driver,
        "gpu_count": len(gpus),
        "gpus": gpus,
        "dev_nodes": dev_nodes,
    }
    required = ctx.gpu_required()
    if required is False:
        ctx.mode = "cpu-only"
        raise Skip("CPU-only profile (GPUs seen: %d)" % len(gpus))
    if required is None and not gpus:
        ctx.mode = "cpu-only"
        raise Skip("no GPU visible and no profile given: CPU-only run")
    ctx.mode = "gpu"
    if not gpus:
        if not dev_nodes:
            why = "no /dev/nvidia* device nodes"
        else:
            why = "device nodes present (%s) but the driver answers no query" % ", ".join(dev_nodes)
        raise Fail("profile expects a GPU but no GPU is visible: %s; %s" % (why, error_text or "-"),
                   figures, log=error_text)
    names = ", ".join("%s (sm %s, %s MiB)" % (g["name"], g["compute_capability"], g["memory_mib"])
                      for g in gpus)
    return "%d GPU(s), driver %s: %s" % (len(gpus), driver, names), figures
