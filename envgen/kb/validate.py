"""Consistency of the knowledge base across tables (a bug in envgen's data if it fails)."""

from __future__ import annotations

from collections import Counter

from envgen.kb.families import FamilyMatch
from envgen.kb.specifiers import contains
from envgen.kb.tables import Tables
from envgen.kb.versions import minor, sm_to_cc


def problems(kb: Tables) -> list[str]:
    """Every cross-table inconsistency, one sentence each; empty when the data is consistent."""
    out: list[str] = []
    for name, keys in (
        ("tensorflow.yaml", [r.series for r in kb.tensorflow]),
        ("pytorch.yaml", [r.version for r in kb.pytorch]),
        ("cuda.yaml", [r.version for r in kb.cuda_toolkits]),
        ("cudnn.yaml", [r.version for r in kb.cudnn_releases]),
        ("gpus.yaml", [r.name for r in kb.gpus]),
        ("ngc.yaml", [r.key for r in kb.ngc_releases]),
    ):
        out += [f"{name}: duplicate row {k!r}" for k, n in Counter(keys).items() if n > 1]
    return (out + _tensorflow_problems(kb) + _pytorch_problems(kb) + _image_problems(kb) + _package_problems(kb)
                 + _family_problems(kb))


def _tensorflow_problems(kb: Tables) -> list[str]:
    out: list[str] = []
    for tf in kb.tensorflow:
        if kb.cuda(tf.cuda) is None:
            out.append(f"tensorflow.yaml#{tf.series}: CUDA {tf.cuda} is not in cuda.yaml")
        row = kb.cudnn(tf.cudnn)
        if row is None:
            out.append(f"tensorflow.yaml#{tf.series}: cuDNN {tf.cudnn} is not in cudnn.yaml")
        elif not kb.cudnn_supports(row, tf.cuda):
            out.append(f"tensorflow.yaml#{tf.series}: cuDNN {row.version} does not list CUDA {tf.cuda}")
        if tf.gpu_package not in tf.gpu_capable_packages:
            out.append(f"tensorflow.yaml#{tf.series}: gpu_package is not among gpu_capable_packages")
    return out


def _pytorch_problems(kb: Tables) -> list[str]:
    """Variant tags unique and matching their CUDA, which cuda.yaml lists and whose targets cover the arch list."""
    out: list[str] = []
    for release in kb.pytorch:
        tags = [v.tag for v in release.variants]
        if len(set(tags)) != len(tags):
            out.append(f"pytorch.yaml#{release.version}: duplicate variant tags")
        for variant in release.variants:
            where = f"pytorch.yaml#{release.version}+{variant.tag}"
            if variant.cuda is None:
                if variant.arch_list:
                    out.append(f"{where}: a CPU variant has an arch list")
                continue
            if variant.tag != "cu" + variant.cuda.replace(".", ""):
                out.append(f"{where}: tag does not match CUDA {variant.cuda}")
            toolkit = kb.cuda(variant.cuda)
            if toolkit is None:
                out.append(f"{where}: CUDA {variant.cuda} is not in cuda.yaml")
                continue
            for arch in variant.arch_list + variant.ptx:
                cc = sm_to_cc(arch)
                if not (_cc(toolkit.cc_min) <= cc <= _cc(toolkit.cc_max)):
                    out.append(f"{where}: {arch} is outside what CUDA {toolkit.version} can target")
    return out


def _image_problems(kb: Tables) -> list[str]:
    """NGC releases, nvidia/cuda images and cuDNN rows name CUDA/cuDNN releases the KB has."""
    out: list[str] = []
    for ngc in kb.ngc_releases:
        if kb.cuda(minor(ngc.cuda)) is None:
            out.append(f"ngc.yaml#{ngc.key}: CUDA {ngc.cuda} is not in cuda.yaml")
        if ngc.cudnn is not None and kb.cudnn(ngc.cudnn) is None:
            out.append(f"ngc.yaml#{ngc.key}: cuDNN {ngc.cudnn} is not in cudnn.yaml")
    for img in kb.cuda_images:
        if kb.cuda(img.cuda) is None and img.status == "available":
            out.append(f"base_images.yaml#nvidia/cuda:{img.cuda}: CUDA {img.cuda} is not in cuda.yaml")
        if "" in img.cudnn and img.cudnn_bare is None:
            out.append(
                f"base_images.yaml#nvidia/cuda:{img.cuda}: bare -cudnn- tags are listed but cudnn_bare "
                "(the cuDNN major they carry) is not set"
            )
    for cudnn in kb.cudnn_releases:
        for entry in cudnn.cuda:
            if "." in entry and kb.cuda(entry) is None and entry not in ("8.0",):
                out.append(f"cudnn.yaml#{cudnn.version}: CUDA {entry} is not in cuda.yaml")
    return out


def _family_problems(kb: Tables) -> list[str]:
    """base_families.yaml: every family names python_setups rows that exist, and the last row matches every image."""
    setups = {row.name for row in kb.python_setups}
    out = [f"base_families.yaml#{row.key}: python setup {name!r} is not a python_setups row"
           for row in kb.base_families for name in (row.python, row.python_provided) if name not in setups]
    if kb.base_families and kb.base_families[-1].match != FamilyMatch():
        out.append("base_families.yaml: the last row's match must be empty (the family of every other image)")
    return out


def _package_problems(kb: Tables) -> list[str]:
    """python_packages.yaml and framework_requires.yaml: unique keys, and a way out that leaves the break."""
    out = [f"python_packages.yaml: duplicate row {k!r}" for k, n in Counter(r.id for r in kb.package_breaks).items()
           if n > 1]
    out += [f"framework_requires.yaml: duplicate row {k!r}"
            for k, n in Counter(r.key for r in kb.framework_requires).items() if n > 1]
    for row in kb.package_breaks:
        if row.unpinned is None:
            continue
        name, version = row.unpinned.pin.split("==")
        if row.other is None or name not in row.other.names or contains(row.other.versions, version):
            out.append(f"python_packages.yaml#{row.id}: unpinned.pin {row.unpinned.pin} is not a release of `other` "
                       "outside the break")
    return out


def _cc(text: str) -> tuple[int, int]:
    a, b = text.split(".")
    return int(a), int(b)
