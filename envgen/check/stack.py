"""The concrete install plan a profile resolves to (used by render and the smoke test's expectations)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from envgen.check.context import CheckContext, build_context
from envgen.check.rules_driver import cuda_in_use
from envgen.kb import KnowledgeBase, TorchVariant
from envgen.kb.versions import minor, vtuple
from envgen.profile import Profile


@dataclass(frozen=True)
class ResolvedStack:
    pip: list[str]  # framework pins then the profile's own pip pins, in install order
    pip_index_urls: list[str]  # --extra-index-url for framework wheels (new-style torch indexes)
    pip_find_links: list[str]  # --find-links pages (old torch_stable.html wheels)
    conda: list[str]  # python=X plus the profile's conda pins (installer conda only)
    preinstalled: list[str]  # frameworks the base image already carries (NGC), not installed again
    tensorflow_package: str | None
    torch_variant: TorchVariant | None
    required_cuda_for_driver: str | None  # the CUDA version NVIDIA_REQUIRE_CUDA should name
    expected: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # choices envgen made that the profile did not give


def _local(version: str, variant: TorchVariant | None) -> str:
    if variant is None or "+" in version:
        return version
    return f"{version}+{variant.tag}"


def _torch_pins(ctx: CheckContext) -> list[str]:
    profile, variant, release = ctx.profile, ctx.torch_variant, ctx.torch_release
    version = profile.torch_version
    if version is None:
        return []
    pins = [f"torch=={_local(version, variant)}"]
    tv = profile.frameworks.torchvision
    if tv:
        pins.append(f"torchvision=={_local(tv, variant)}")
    ta = profile.frameworks.torchaudio
    if ta:
        tagged = release.torchaudio_variant if release else True
        pins.append(f"torchaudio=={_local(ta, variant) if tagged else ta}")
    return pins


def _framework_of(pin: str) -> str:
    """The frameworks: key of a framework pin: torch==2.1.2+cu118 -> pytorch."""
    name = pin.split("==", 1)[0]
    return "pytorch" if name == "torch" else name


def expected_libraries(ctx: CheckContext) -> list[dict[str, Any]]:
    """What the smoke test's library tier loads: each soname a GPU framework of the image needs, the version
    it was built with (cudart, cuDNN), who needs it, and the wheel that provides it."""
    merged: dict[str, dict[str, Any]] = {}
    for need in ctx.libraries.needs:
        entry = merged.setdefault(need.soname, {
            "soname": need.soname, "family": need.family, "min_version": need.min_version,
            "cuda_major": need.cuda_major, "needed_by": [], "providers": [], "how": {}})
        if need.framework not in entry["needed_by"]:
            entry["needed_by"].append(need.framework)
        entry["how"][need.framework] = need.provision
        older = entry["min_version"] is None or vtuple(need.min_version or "0") > vtuple(entry["min_version"])
        if need.min_version and older:
            entry["min_version"] = need.min_version
        if need.distribution and need.distribution not in entry["providers"]:
            entry["providers"].append(need.distribution)
    return [merged[k] for k in sorted(merged)]


def resolve_stack(profile: Profile, kb: KnowledgeBase) -> ResolvedStack:
    ctx = build_context(profile, kb, None)
    notes: list[str] = []
    pip: list[str] = []
    preinstalled: list[str] = []
    tf_version = profile.frameworks.tensorflow
    provided = profile.base_frameworks
    if tf_version:
        if ctx.ngc is not None and ctx.ngc.framework == "tensorflow":
            preinstalled.append(f"tensorflow=={ctx.ngc.framework_version}")
        elif "tensorflow" in provided:
            preinstalled.append(f"tensorflow=={tf_version}")
        else:
            pip.append(f"{ctx.tf_package}=={tf_version}")
            if profile.frameworks.tensorflow_package is None:
                notes.append(
                    f"TensorFlow {tf_version} is installed as `{ctx.tf_package}` (the distribution that "
                    f"carries {'GPU' if ctx.gpu else 'CPU'} support for this release)"
                )
    torch_pins = _torch_pins(ctx)
    pip += [pin for pin in torch_pins if _framework_of(pin) not in provided]
    preinstalled += [pin for pin in torch_pins if _framework_of(pin) in provided]
    if ctx.torch_variant_note and "pytorch" not in provided:
        notes.append(ctx.torch_variant_note)
    index_urls: list[str] = []
    find_links: list[str] = []
    if ctx.torch_variant is not None and "pytorch" not in provided:
        (find_links if ctx.torch_variant.find_links else index_urls).append(ctx.torch_variant.index_url)
    pip += list(profile.packages.pip)
    conda = [f"python={profile.python}", *profile.packages.conda] if profile.installer == "conda" else []
    used = cuda_in_use(ctx) if ctx.gpu else []
    if ctx.ngc is not None:
        used.append((minor(ctx.ngc.cuda), "NGC image"))
    required = max((v for v, _ in used), key=vtuple, default=None)
    tf_cuda = None
    if ctx.ngc is not None and ctx.ngc.framework == "tensorflow":
        tf_cuda = ctx.ngc.cuda
    elif ctx.tf_build is not None and ctx.gpu and ctx.tf_package != "tensorflow-cpu":
        tf_cuda = ctx.tf_build.cuda
    expected: dict[str, Any] = {
        "python": profile.python,
        "tensorflow": (
            ctx.ngc.framework_version
            if ctx.ngc is not None and ctx.ngc.framework == "tensorflow"
            else tf_version
        ),
        "tensorflow_cuda": tf_cuda,
        "tensorflow_cudnn": ctx.tf_build.cudnn
        if ctx.tf_build is not None and tf_cuda and ctx.ngc is None
        else None,
        "torch": _local(profile.frameworks.pytorch, ctx.torch_variant)
        if profile.frameworks.pytorch
        else None,
        "torch_cuda": ctx.torch_variant.cuda if ctx.torch_variant is not None else None,
        "cuda": profile.cuda,
        "cudnn": profile.cudnn,
        "gpu_required": ctx.gpu,
        "arch_list": list(ctx.torch_variant.arch_list) if ctx.torch_variant is not None else [],
        "ptx": list(ctx.torch_variant.ptx) if ctx.torch_variant is not None else [],
        # frameworks of the base find their own libraries: the probe derives them from what they report
        "libraries": expected_libraries(ctx) if not provided or ctx.libraries.needs else None,
        "gpu_targets": [
            {"name": t.label, "compute_capability": t.model.compute_capability if t.model else None}
            for t in ctx.targets
        ],
    }
    if profile.base_provides is not None:
        expected["base_provides"] = {"python": profile.base_provides.python, "frameworks": {
            name: getattr(profile.frameworks, name) for name in provided}}
    return ResolvedStack(
        pip=pip,
        pip_index_urls=index_urls,
        pip_find_links=find_links,
        conda=conda,
        preinstalled=preinstalled,
        tensorflow_package=ctx.tf_package,
        torch_variant=ctx.torch_variant,
        required_cuda_for_driver=required,
        expected=expected,
        notes=notes,
    )
