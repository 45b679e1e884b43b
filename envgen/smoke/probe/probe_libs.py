"""The library tier of the envgen probe: what a GPU stack needs, proved without a GPU.

For each framework: the CUDA/cuDNN/NCCL versions it was built with and the sonames it will load; each
soname is loaded with ctypes as the framework would (the real LD_LIBRARY_PATH; for PyTorch, the
libraries its RPATH made it load, read from /proc/self/maps after ``import torch``), and the path it
resolved to and the version the library reports are compared with the built-with versions. The
compiled architecture list is compared with the profile's GPU targets. Nothing here needs a GPU or a
driver. Standard library only; Python 3.7+.
"""

import glob
import json
import os
import re
import sys

from probe_common import CaptureStderr, Fail, Skip, cudnn_text, kernel_support, version_parts

LIBRARIES_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libraries.json")
TIER = "libraries"
_PROPERTY_MAJOR, _PROPERTY_MINOR, _PROPERTY_PATCH = 0, 1, 2


def load_table(path=None):
    with open(path or LIBRARIES_FILE, "r", encoding="utf-8") as handle:
        return json.load(handle)


# --- versions the library reports ---------------------------------------------------------------

def _decode(kind, number):
    if kind == "cuda":  # 11080 -> 11.8
        return "%d.%d" % (number // 1000, (number % 1000) // 10)
    if kind in ("cudnn", "nccl"):  # 8600 -> 8.6.0, 90100 -> 9.1.0; NCCL 21605 -> 2.16.5, before 2.9: 2708 -> 2.7.8
        return cudnn_text(number)
    if kind == "size_t_mmmpp":  # cublasLt: 111103 -> 11.11.3
        return "%d.%d.%d" % (number // 10000, (number % 10000) // 100, number % 100)
    return str(number)


def reported_version(ctypes, lib, family):
    """(version text, how) from the library's own call; (None, why not) when it cannot answer."""
    call = family.get("version_call")
    decode = family.get("decode")
    if not call:
        return None, "no version call known"
    try:
        func = getattr(lib, call)
    except AttributeError:
        return None, "%s not exported" % call
    try:
        if decode == "property":
            parts = []
            for kind in (_PROPERTY_MAJOR, _PROPERTY_MINOR, _PROPERTY_PATCH):
                value = ctypes.c_int(0)
                status = func(ctypes.c_int(kind), ctypes.byref(value))
                if status != 0:
                    return None, "%s returned status %d" % (call, status)
                parts.append(value.value)
            return "%d.%d.%d" % tuple(parts), call
        if decode in ("cudnn", "size_t_mmmpp"):
            func.restype = ctypes.c_size_t
            number = int(func())
        else:
            value = ctypes.c_int(0)
            status = func(ctypes.byref(value))
            if status != 0 or value.value == 0:
                return None, "%s returned error %d (value %d)" % (call, status, value.value)
            number = value.value
    except Exception as exc:  # noqa: BLE001 - a call that crashes on this library: fall back
        return None, "%s failed: %s" % (call, exc)
    if number <= 0:
        return None, "%s returned %d" % (call, number)
    return _decode(decode, number), call


def distribution_of(path):
    """(name, version) of the installed distribution that ships ``path``, or None (Python 3.8+)."""
    try:
        from importlib import metadata  # novermin - Python 3.7 falls back to the file name
    except ImportError:
        return None
    real = os.path.realpath(path)
    for dist in metadata.distributions():
        name = (dist.metadata.get("Name") or "")
        if not name.lower().startswith("nvidia-"):
            continue
        for item in dist.files or ():
            if os.path.basename(str(item)) != os.path.basename(path) and \
                    os.path.basename(str(item)) != os.path.basename(real):
                continue
            try:
                located = os.path.realpath(str(dist.locate_file(item)))
            except Exception:  # noqa: BLE001
                continue
            if located == real:
                return name, dist.version
    return None


def _version_of_file(path):
    dist = distribution_of(path)
    return dist[1] if dist else version_from_file_name(path)


def version_from_file_name(path):
    """libcudart.so.11.8.89 -> '11.8.89'; libcudnn.so.8 -> '8' (only what the name says)."""
    found = re.search(r"\.so\.([0-9][0-9.]*)$", os.path.basename(os.path.realpath(path)))
    return found.group(1) if found else None


# --- where a soname resolves ---------------------------------------------------------------------

def search_path():
    """The directories of LD_LIBRARY_PATH, in order: where dlopen looks for a bare soname before the ld.so
    cache and the default directories (for the diagnosis)."""
    return [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]


def ld_cache():
    """The ld.so cache, {soname: [paths]} in its order (``ldconfig -p``, read once per run); {} without it."""
    cache = {}
    try:
        import subprocess

        output = subprocess.run(["ldconfig", "-p"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                universal_newlines=True, timeout=10).stdout
    except Exception:  # noqa: BLE001 - no ldconfig: the cache is not consulted
        return cache
    for line in output.splitlines():
        parts = line.strip().split(" => ")
        if len(parts) == 2:
            cache.setdefault(parts[0].split(" ")[0], []).append(parts[1].strip())
    return cache


def copies_of(soname, cache):
    """Every file named ``soname`` on the search path, the ld.so cache (``ld_cache()``) and NVIDIA's wheel
    directories, in search order, one entry per distinct file."""
    candidates = [os.path.join(d, soname) for d in search_path()]
    candidates += cache.get(soname, [])
    for site in _site_dirs():
        candidates += sorted(glob.glob(os.path.join(site, "nvidia", "*", "lib", soname)))
    candidates += [os.path.join(d, soname) for d in ("/lib", "/usr/lib", "/lib64", "/usr/lib64",
                                                      "/usr/lib/x86_64-linux-gnu", "/usr/local/cuda/lib64")]
    seen, copies = set(), []
    for path in candidates:
        if not os.path.exists(path):
            continue
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        copies.append(path)
    return copies


def _site_dirs():
    dirs = []
    for entry in sys.path:
        if entry.endswith("site-packages") and os.path.isdir(os.path.join(entry, "nvidia")):
            dirs.append(entry)
    return dirs


def loaded_path(ctypes, lib, soname):
    """The file the dynamic loader mapped for ``lib`` (dlinfo's link map), else /proc/self/maps."""
    try:
        class LinkMap(ctypes.Structure):
            _fields_ = [("l_addr", ctypes.c_void_p), ("l_name", ctypes.c_char_p)]

        libc = ctypes.CDLL(None)
        dlinfo = libc.dlinfo
        pointer = ctypes.POINTER(LinkMap)()
        if dlinfo(ctypes.c_void_p(lib._handle), 2, ctypes.byref(pointer)) == 0 and pointer:  # RTLD_DI_LINKMAP
            name = pointer.contents.l_name
            if name:
                return name.decode("utf-8", "replace")
    except Exception:  # noqa: BLE001 - no dlinfo: read the maps
        pass
    return mapped_paths().get(soname)


def mapped_paths(pattern=r"lib(cudart|cublas|cublasLt|cufft|curand|cusolver|cusparse|cudnn|nccl|nvrtc|"
                          r"nvJitLink|cupti)\.so[.0-9]*$"):
    """Libraries mapped into this process now, {file name: path}: what a framework really loaded."""
    found = {}
    regex = re.compile(pattern)
    try:
        with open("/proc/self/maps", "r") as handle:
            for line in handle:
                fields = line.split()
                if len(fields) < 6:
                    continue
                path = fields[-1]
                if regex.search(os.path.basename(path)):
                    found.setdefault(os.path.basename(path), path)
    except OSError:
        pass
    return found


# --- the checks ----------------------------------------------------------------------------------

def _ctypes():
    try:
        import ctypes
        return ctypes
    except Exception as exc:  # noqa: BLE001 - a Python built without ctypes/libffi
        raise Fail("library tier cannot run: ctypes cannot be imported (%s): no library can be loaded, "
                   "so nothing is proved" % exc)


def _at_least(actual, minimum):
    """'' when ``actual`` satisfies ``minimum`` (same major, equal or newer minor), else why not."""
    want, have = version_parts(minimum), version_parts(actual)
    if not want or not have:
        return ""
    if have[0] != want[0]:
        return "wrong major"
    if have[:len(want)] < want:
        return "older than %s" % minimum
    return ""


def check_library(ctx, item, cache):
    """Load one soname (``cache``: the ld.so cache, ``ld_cache()``); returns the record. Raises nothing:
    failures are in record['problem']."""
    ctypes = _ctypes()
    soname = item["soname"]
    record = {"soname": soname, "family": item.get("family"), "needed_by": item.get("needed_by") or [],
              "min_version": item.get("min_version"), "providers": item.get("providers") or []}
    copies = copies_of(soname, cache)
    record["copies"] = copies
    searched = search_path()
    record["searched"] = searched
    preloaded = item.get("loaded_from")
    try:
        with CaptureStderr():
            lib = ctypes.CDLL(preloaded or soname)
    except OSError as exc:
        text = str(exc)
        record["problem"] = "missing" if "No such file" in text else "refused"
        record["error"] = text
        return record
    path = loaded_path(ctypes, lib, soname) or preloaded
    record["path"] = path
    version, how = reported_version(ctypes, lib, ctx.library_table["families"].get(item.get("family"), {}))
    if version is None:
        record["version_call"] = how
        dist = distribution_of(path) if path else None
        if dist is not None:
            version, how = dist[1], "distribution %s %s (the library's call: %s)" % (dist[0], dist[1], how)
        else:
            version, how = version_from_file_name(path or soname), "file name (the library's call: %s)" % how
    record["version"] = version
    record["version_source"] = how
    if path and len(copies) > 1:
        real = os.path.realpath(path)
        record["shadowed"] = [{"path": c, "version": _version_of_file(c)}
                              for c in copies if os.path.realpath(c) != real]
    why = _at_least(version, item.get("min_version")) if item.get("min_version") else ""
    if why:
        record["problem"] = why
    return record


def _provider_text(record):
    return " or ".join(record["providers"]) if record["providers"] else "the distribution that ships it"


def describe_problem(record):
    soname, users = record["soname"], ", ".join(record["needed_by"]) or "the profile"
    if record["problem"] == "missing":
        return ("cannot load %s (needed by %s): %s; searched LD_LIBRARY_PATH=%s and the ld.so cache; "
                "provided by %s; %s would run on the CPU"
                % (soname, users, record["error"], ":".join(record["searched"]) or "(unset)",
                   _provider_text(record), users))
    if record["problem"] == "refused":
        return ("ctypes refuses to load %s (needed by %s): %s; the library tier cannot prove it; provided by %s"
                % (soname, users, record["error"], _provider_text(record)))
    return ("library version mismatch: %s at %s reports %s (%s), %s needs >= %s (%s); provided by %s"
            % (soname, record.get("path"), record.get("version"), record.get("version_source"), users,
               record.get("min_version"), record["problem"], _provider_text(record)))


# --- what to check: the profile's list, or what the frameworks report ----------------------------

def _major(version):
    parts = version_parts(version)
    return str(parts[0]) if parts else None


def _family_item(table, family_name, key_version, needed_by, min_version):
    family = table["families"][family_name]
    major = _major(key_version)
    soname = family["sonames"].get(major) if major else None
    if soname is None:
        return None
    return {"soname": soname, "family": family_name, "min_version": min_version, "needed_by": [needed_by],
            "providers": [family["providers"].get(major)] if family["providers"].get(major) else []}


def tensorflow_facts(ctx):
    """TensorFlow's build info (imported only if installed); None when TensorFlow is absent."""
    # the same settings as the TensorFlow checks: its native log (dso_loader) is kept for the diagnoses
    os.environ.setdefault("TF_FORCE_GPU_ALLOW_GROWTH", "true")
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "0"
    try:
        with CaptureStderr() as captured:
            import tensorflow as tf
    except ImportError:
        return None
    except Exception as exc:  # noqa: BLE001 - a TensorFlow that cannot import is a failure of its own
        raise Fail("tensorflow cannot be imported: %s" % exc, log=getattr(captured, "text", ""))
    ctx.logs["tensorflow"] = ctx.logs.get("tensorflow", "") + captured.text
    info = {}
    try:
        info = dict(tf.sysconfig.get_build_info())
    except Exception:  # noqa: BLE001 - TF < 2.3 has no get_build_info: its build_info module
        try:
            from tensorflow.python.platform import build_info

            info = {"cuda_version": getattr(build_info, "cuda_version_number", None),
                    "cudnn_version": getattr(build_info, "cudnn_version_number", None),
                    "is_cuda_build": getattr(build_info, "is_cuda_build", None)}
        except Exception:  # noqa: BLE001
            info = {}
    if info.get("is_cuda_build") is None:
        try:
            info["is_cuda_build"] = bool(tf.test.is_built_with_cuda())
        except Exception:  # noqa: BLE001
            info["is_cuda_build"] = bool(info.get("cuda_version"))
    return {"version": tf.__version__, "cuda": info.get("cuda_version"), "cudnn": info.get("cudnn_version"),
            "cuda_build": bool(info.get("is_cuda_build", info.get("cuda_version"))),
            "arch_list": list(info.get("cuda_compute_capabilities") or [])}


def torch_facts(ctx):
    try:
        import torch
    except ImportError:
        return None
    except Exception as exc:  # noqa: BLE001
        raise Fail("torch cannot be imported: %s" % exc)
    facts = {"version": torch.__version__, "cuda": torch.version.cuda, "cudnn": None, "nccl": None,
             "arch_list": [], "cuda_build": torch.version.cuda is not None}
    if torch.version.cuda is None:
        return facts
    try:
        flags = torch._C._cuda_getArchFlags()  # readable without a device; get_arch_list() is [] then
        facts["arch_list"] = flags.split() if isinstance(flags, str) else list(flags or [])
    except Exception:  # noqa: BLE001
        facts["arch_list"] = []
    try:
        number = torch.backends.cudnn.version()
        facts["cudnn"] = cudnn_text(number) if number else None
    except Exception:  # noqa: BLE001 - cuDNN missing: checked below as a library
        facts["cudnn"] = None
    try:
        nccl = torch.cuda.nccl.version()
        facts["nccl"] = ".".join(str(part) for part in nccl) if isinstance(nccl, tuple) else str(nccl)
    except Exception:  # noqa: BLE001
        facts["nccl"] = None
    facts["loaded"] = mapped_paths()
    return facts


def _sharper(reported, expected):
    """The profile's built-with version where it says more on the same major ('8' vs '8.6')."""
    if expected and reported and _major(expected) == _major(reported) and \
            len(version_parts(expected)) > len(version_parts(reported)):
        return str(expected)
    return reported


def derived_libraries(table, frameworks, expected=None):
    """What to load when the profile names nothing: TensorFlow's sonames for its built-with CUDA and
    cuDNN; for PyTorch, the CUDA libraries its import really mapped (its RPATH), each at its path."""
    items = {}

    def add(item):
        if item is None:
            return
        held = items.get(item["soname"])
        if held is None:
            items[item["soname"]] = item
            return
        held["needed_by"] = sorted(set(held["needed_by"]) | set(item["needed_by"]))
        if item.get("min_version") and version_parts(item["min_version"]) > version_parts(held.get("min_version")):
            held["min_version"] = item["min_version"]

    expected = expected or {}
    tf = frameworks.get("tensorflow")
    if tf and tf.get("cuda_build") and tf.get("cuda"):
        cudnn = _sharper(tf.get("cudnn"), expected.get("tensorflow_cudnn"))
        for name in table["tensorflow"]:
            key = tf["cuda"] if table["families"][name]["key"] == "cuda" else cudnn
            minimum = {"cudart": tf["cuda"], "cudnn": cudnn}.get(name)
            add(_family_item(table, name, key, "tensorflow", minimum))
    torch = frameworks.get("torch")
    if torch and torch.get("cuda_build"):
        wanted = {"cudart": ("cuda", torch.get("cuda")), "cudnn": ("cudnn", torch.get("cudnn")),
                  "nccl": ("nccl", torch.get("nccl"))}
        for family, (key, version) in sorted(wanted.items()):
            item = _family_item(table, family, version, "torch", version if family == "cudart" else
                                ".".join(str(p) for p in version_parts(version)[:2]) if version else None)
            if item is None:
                continue
            path = (torch.get("loaded") or {}).get(item["soname"])
            if path:
                item["loaded_from"] = path
            add(item)
        for name, path in sorted((torch.get("loaded") or {}).items()):
            if name not in items:
                items[name] = {"soname": name, "family": _family_of(table, name), "min_version": None,
                               "needed_by": ["torch"], "providers": [], "loaded_from": path}
    return [items[key] for key in sorted(items)]


def _family_of(table, soname):
    for name, family in table["families"].items():
        if soname in family["sonames"].values():
            return name
    return None


def check_frameworks(ctx):
    """Built-with versions of each framework present; fills ctx.library_frameworks."""
    found = {}
    for name, reader in (("torch", torch_facts), ("tensorflow", tensorflow_facts)):
        facts = reader(ctx)
        if facts is not None:
            found[name] = facts
    ctx.library_frameworks = found
    for name in ("torch", "tensorflow"):
        if name not in found and ctx.expects_framework(name):
            ctx.library_frameworks_missing = True
            raise Fail("%s %s expected by the profile but not installed (No module named '%s')"
                       % (name, ctx.expected(name), name), {"frameworks": found})
    if not found:
        return "no framework installed", {}
    parts = []
    for name, facts in sorted(found.items()):
        if facts.get("cuda_build"):
            parts.append("%s %s built with CUDA %s, cuDNN %s%s" % (
                name, facts["version"], facts.get("cuda"), facts.get("cudnn") or "-",
                ", NCCL %s" % facts["nccl"] if facts.get("nccl") else ""))
        else:
            parts.append("%s %s (CPU build)" % (name, facts["version"]))
    figures = dict((name, dict((k, v) for k, v in facts.items() if k != "loaded"))
                   for name, facts in found.items())
    return "; ".join(parts), figures


def check_loading(ctx):
    """Load every library the stack needs and compare versions."""
    _ctypes()
    table = ctx.library_table
    expected = (ctx.expect.get("expected") or {}).get("libraries")
    source = "profile (expected.libraries)"
    if expected is None:
        expected = derived_libraries(table, ctx.library_frameworks, ctx.expect.get("expected"))
        source = "what the frameworks report"
    else:
        loaded = (ctx.library_frameworks.get("torch") or {}).get("loaded") or {}
        expected = [dict(item, loaded_from=loaded.get(item["soname"])) if loaded.get(item["soname"])
                    else dict(item) for item in expected]
    if not expected:
        if getattr(ctx, "library_frameworks_missing", False):
            raise Skip("nothing to load: a framework the profile expects is missing (see libraries.frameworks, "
                       "which failed)")
        if ctx.gpu_required():
            raise Fail("library tier found nothing to check: no framework built with CUDA is installed and "
                       "the profile names no libraries, so nothing proves this GPU image")
        raise Skip("no CUDA libraries to check (%s)" % ("CPU-only profile" if ctx.gpu_required() is False
                                                        else "no framework built with CUDA"))
    cache = ld_cache()
    records = [check_library(ctx, item, cache) for item in expected]
    figures = {"source": source, "libraries": records,
               "ld_library_path": os.environ.get("LD_LIBRARY_PATH", "")}
    problems = [r for r in records if r.get("problem")]
    if problems:
        # the runtime first: without it a framework loads nothing else (TensorFlow's "GPU will not be used")
        missing = sorted((r for r in problems if r["problem"] == "missing"), key=lambda r: r["family"] != "cudart")
        first = missing[0] if missing else problems[0]
        others = [r["soname"] for r in problems if r is not first]
        raise Fail(describe_problem(first) + ("; also: %s" % ", ".join(others) if others else ""), figures)
    shadowed = ["%s (%s shadowed by %s)" % (r["soname"], ", ".join(
        "%s %s" % (c["path"], c["version"] or "?") for c in r["shadowed"]), r["path"])
                for r in records if r.get("shadowed")]
    message = "%d libraries load (%s): %s" % (len(records), source, ", ".join(
        "%s %s" % (r["soname"], r["version"] or "?") for r in records))
    if shadowed:
        message += "; two copies on the search path, the later shadowed: " + "; ".join(shadowed)
    return message, figures


def check_arch(ctx):
    """The compiled architecture list against the profile's GPU targets, without a device."""
    targets = [t for t in (ctx.expected("gpu_targets") or []) if isinstance(t, dict)
               and t.get("compute_capability")]
    frameworks = ctx.library_frameworks
    rows, missing = {}, []
    for name, facts in sorted(frameworks.items()):
        arch = ctx.arch_override or facts.get("arch_list") or []
        if not facts.get("cuda_build") or not arch:
            continue
        for target in targets:
            capability = [int(p) for p in str(target["compute_capability"]).split(".")[:2]]
            sass, ptx = kernel_support(capability, arch)
            label = "%s sm_%d%d" % (target.get("name"), capability[0], capability[1])
            rows["%s %s" % (name, label)] = {"sass": sass, "ptx": ptx}
            if not sass and not ptx:
                missing.append("%s has no kernels for sm_%d%d in the compiled architectures (%s) for target %s"
                               % (name, capability[0], capability[1], " ".join(arch), target.get("name")))
    if missing:
        raise Fail("; ".join(missing), {"targets": rows})
    if not rows:
        raise Skip("no GPU targets in the profile, or no CUDA framework with a compiled architecture list")
    parts = []
    for key, value in sorted(rows.items()):
        parts.append("%s: %s" % (key, ", ".join(value["sass"]) if value["sass"]
                                 else "PTX %s only (JIT-compiled by the driver)" % ", ".join(value["ptx"])))
    return "; ".join(parts), {"targets": rows}


def checks():
    return [
        ("libraries.frameworks", check_frameworks),
        ("libraries.load", check_loading),
        ("libraries.arch", check_arch),
    ]
