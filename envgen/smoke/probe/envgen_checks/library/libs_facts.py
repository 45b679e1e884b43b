"""Library tier of the envgen probe: what to check when the profile names nothing: the frameworks'
built-with versions (TensorFlow's build info, torch's CUDA, cuDNN, NCCL and the libraries its import
mapped) and the sonames derived from them with libraries.json.

Standard library only; Python 3.7+.
"""

import os

from ..core.common import CaptureStderr, Fail
from .libs_search import mapped_paths
from ..core.versions import cudnn_text, version_parts


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
