"""envgen's preflight: runs inside the image before the user's command, under any runtime (Docker with the NVIDIA
runtime or CDI, Podman, Kubernetes, enroot/pyxis, Apptainer, a plain ``docker run``), and checks the GPUs and the
driver it can see against what the image needs: the facts envgen's plan sealed into the image's profile.json (the
first argument) under ``preflight`` (the driver each CUDA runtime the image calls needs, its minor-version
compatibility floor, the GPU code each framework ships, whether the image needs a GPU at all).

Standard library only, Python 3.7+ (it runs in every image envgen builds). It reads the driver and the GPUs through
NVML (libnvidia-ml.so.1, which every GPU route injects into the container), else ``nvidia-smi --query-gpu``, else
the driver's version from /proc/driver/nvidia/version. It passes silently, or prints one line per finding on stderr:
a warning lets the command run, a refusal stops it with exit code 78 (EX_CONFIG) before it starts.

    python -I -S envgen_probe.py preflight PROFILE_JSON [--json]

ENVGEN_PREFLIGHT=0 (or off/false/no) skips it (the launcher reads that); ENVGEN_PREFLIGHT=warn reports refusals as
warnings and runs the command anyway.
"""

import json
import os
import re
import subprocess
import sys

from .core.kernels import kernel_support
from .core.versions import version_parts


def _version(text):
    """'580.159.04' -> (580, 159, 4): the probe's own reading of a version (core.versions)."""
    return tuple(version_parts(text))

REFUSED = 78  # sysexits' EX_CONFIG: the image and this host's GPU or driver do not fit
SKIP = ("0", "off", "false", "no")
NVML_NAMES = ("libnvidia-ml.so.1", "/usr/local/nvidia/lib64/libnvidia-ml.so.1", "/usr/lib64/libnvidia-ml.so.1")
# the query envgen.host reads too (compute_cap: drivers from 510 on; older ones refuse the query)
QUERY = ["nvidia-smi", "--query-gpu=index,name,driver_version,memory.total,compute_cap",
         "--format=csv,noheader,nounits"]


def _nvml():
    """(driver, [(index, name, "X.Y")]) through NVML; None when NVML cannot be loaded or initialised."""
    try:
        import ctypes
    except ImportError:
        return None
    lib = None
    for name in NVML_NAMES:
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError:
            continue
    if lib is None or lib.nvmlInit_v2() != 0:
        return None
    try:
        buf = ctypes.create_string_buffer(96)
        lib.nvmlSystemGetDriverVersion(buf, 96)
        driver = buf.value.decode("ascii", "replace")
        count = ctypes.c_uint(0)
        lib.nvmlDeviceGetCount_v2(ctypes.byref(count))
        gpus = []
        for index in range(count.value):
            handle = ctypes.c_void_p()
            if lib.nvmlDeviceGetHandleByIndex_v2(index, ctypes.byref(handle)) != 0:
                continue
            lib.nvmlDeviceGetName(handle, buf, 96)
            major, minor = ctypes.c_int(0), ctypes.c_int(0)
            lib.nvmlDeviceGetCudaComputeCapability(handle, ctypes.byref(major), ctypes.byref(minor))
            gpus.append((index, buf.value.decode("utf-8", "replace"), "%d.%d" % (major.value, minor.value)))
        return driver, gpus
    finally:
        lib.nvmlShutdown()


def _nvidia_smi():
    """(driver, [(index, name, "X.Y" or None)]) from ``nvidia-smi --query-gpu``; None without nvidia-smi."""
    try:
        out = subprocess.run(QUERY, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=20,
                             universal_newlines=True)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    driver, gpus = None, []
    for line in out.stdout.splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < 3 or not cells[0].isdigit():
            continue
        driver = cells[2]
        cap = cells[4] if len(cells) > 4 and cells[4][:1].isdigit() else None
        gpus.append((int(cells[0]), cells[1], cap))
    return (driver, gpus) if driver else None


def _proc_driver(path="/proc/driver/nvidia/version"):
    """The driver's version from /proc/driver/nvidia/version (no GPU list); None without the driver."""
    try:
        with open(path) as handle:
            first = handle.readline()
    except OSError:
        return None
    # "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  ..." or "... Open Kernel Module for x86_64
    # 580.159.04  Release Build ..." (seen on the H200): the first dotted number after "Module"
    _, _, after = first.partition("Module")
    return next((word for word in after.split() if re.match(r"^\d+\.\d+(\.\d+)?$", word)), None)


def host_facts():
    """What this container sees: {"driver", "gpus": [[index, name, cc]], "source"}; driver None: no GPU visible."""
    for source, read in (("NVML", _nvml), ("nvidia-smi", _nvidia_smi)):
        found = read()
        if found is not None and found[1]:
            return {"driver": found[0], "gpus": [list(g) for g in found[1]], "source": source}
    driver = _proc_driver()
    return {"driver": driver, "gpus": [], "source": "/proc/driver/nvidia/version" if driver else None}


def _start_hint():
    return ("start it with a GPU: docker run --gpus all (or --device nvidia.com/gpu=all with CDI), podman run "
            "--device nvidia.com/gpu=all, a nvidia.com/gpu limit on Kubernetes, apptainer --nv; with "
            "NVIDIA_DRIVER_CAPABILITIES=compute,utility")


def _no_gpu(facts, host):
    level = "refuse" if facts.get("gpu_required") else "warn"
    if host.get("driver"):
        return (level, "the host's NVIDIA driver %s is loaded but no GPU is usable in this container (NVML and "
                       "nvidia-smi were not injected); %s" % (host["driver"], _start_hint()))
    return (level, "no NVIDIA GPU is visible in this container (no NVML, no nvidia-smi, no /proc/driver/nvidia): "
                   "image %s needs one; %s" % (facts.get("profile", "?"), _start_hint()))


def _suggest(facts, cc, driver):
    """The `envgen suggest` line that finds a stack for this GPU and driver (None without a framework to name)."""
    frameworks = facts.get("frameworks") or []
    if not frameworks or not cc:
        return None
    return "envgen suggest --compute-capability %s --driver %s --frameworks %s" % (cc, driver, ",".join(frameworks))


def _gpu_names(host):
    return ", ".join("GPU %s %s (sm_%s)" % (i, name, (cc or "?").replace(".", "")) for i, name, cc in host["gpus"])


def _driver_findings(facts, host):
    """The host's driver against each CUDA runtime the image calls (cuda.yaml's Linux minimum, its
    minor-version compatibility floor)."""
    driver, out = host["driver"], []
    for need in facts.get("drivers", []):
        floor, compat = need.get("driver_min"), need.get("minor_compat_min")
        if not floor or _version(driver) >= _version(floor):
            continue
        what = "CUDA %s (%s)" % (need["cuda"], need.get("why", ""))
        if compat and _version(driver) >= _version(compat):
            out.append(("warn", "%s: driver %s is below %s's minimum %s but within minor-version compatibility "
                                "(>= %s): it runs, but PTX JIT of newer code and some features fail; fix: upgrade "
                                "the driver to >= %s" % (_gpu_names(host) or "this host", driver, what, floor,
                                                          compat, floor)))
            continue
        level = "warn" if facts.get("forward_compat") else "refuse"
        extra = (" (a data-centre GPU may still run it through the image's CUDA forward-compatibility libraries)"
                 if level == "warn" else "")
        suggest = _suggest(facts, host["gpus"][0][2] if host["gpus"] else None, driver)
        out.append((level, "%s: driver %s is too old for this image's %s, which needs driver >= %s%s%s; fix: run "
                           "on a host with driver >= %s, or rebuild the profile for an older CUDA%s"
                           % (_gpu_names(host) or "this host", driver, what, floor,
                              " (minor-version compatibility: >= %s)" % compat if compat else "", extra, floor,
                              " (%s)" % suggest if suggest else "")))
    return out


def _kernel_findings(facts, host):
    """Each visible GPU against the GPU code each framework ships: a cubin of its major at or below its minor,
    or PTX at or below its capability (core.kernels.kernel_support, the probe's own rule)."""
    out = []
    for kernels in facts.get("kernels", []):
        code = kernels.get("code") or []
        for index, name, cc in host["gpus"]:
            if not cc or not code:
                continue
            suggest = _suggest(facts, cc, host["driver"])
            major, _, minor = cc.partition(".")
            sass, ptx = kernel_support((major, minor or "0"), code)
            if not sass and not ptx:
                out.append(("refuse", "GPU %s %s (sm_%s): %s ships GPU code for %s only, none of which runs on it "
                                      "(\"no kernel image is available for execution on the device\"); fix: run on "
                                      "a GPU it serves, or rebuild the profile for this GPU%s"
                                      % (index, name, cc.replace(".", ""), kernels["what"], " ".join(code),
                                         " (%s)" % suggest if suggest else "")))
    return out


def judge(facts, host):
    """[(level, text)]: "refuse" stops the command, "warn" lets it run."""
    if not facts.get("gpu_required") and not facts.get("drivers"):
        return []
    if not host.get("gpus"):
        return [_no_gpu(facts, host)]
    return _driver_findings(facts, host) + _kernel_findings(facts, host)


def _facts(path):
    try:
        with open(path) as handle:
            return json.load(handle)["preflight"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        sys.stderr.write("envgen preflight: warning: cannot read %s (%s): nothing checked\n" % (path, exc))
        return None


def main(argv):
    mode = os.environ.get("ENVGEN_PREFLIGHT", "1").strip().lower()
    if mode in SKIP or len(argv) < 2:
        return 0
    facts = _facts(argv[1])
    if facts is None:
        return 0
    host = host_facts()
    findings = judge(facts, host)
    if "--json" in argv:
        print(json.dumps({"host": host, "findings": [list(f) for f in findings]}, sort_keys=True))
    refuse = mode != "warn" and any(level == "refuse" for level, _ in findings)
    for level, text in findings:
        if level == "refuse" and mode != "warn":
            sys.stderr.write("envgen preflight: refused: %s (ENVGEN_PREFLIGHT=0 skips this check)\n" % text)
        else:
            sys.stderr.write("envgen preflight: warning: %s\n" % text)
    return REFUSED if refuse else 0

