"""`check_profile`: the built-in profiles, and known good/bad combinations with the reason each gives."""

from __future__ import annotations

from typing import Any

import pytest

from envgen.check import Finding, HostSpec, check_profile, findings_to_json, format_findings
from envgen.kb import KnowledgeBase
from envgen.plan.image import plan_image
from envgen.profile import Profile, load_profile
from envgen.profile.loader import deep_merge

BUILTINS = ["legacy-maxwell", "modern-a100", "ngc-tensorflow", "cpu-smoke", "cpu-minimal"]


def errors(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "error"]


def variant(name: str, **changes: Any) -> Profile:
    """A built-in profile with some fields replaced (deep merge; lists replace)."""
    base = load_profile(name).model_dump(mode="json", exclude={"extends"})
    return Profile.model_validate(deep_merge(base, changes))


@pytest.mark.parametrize("name", BUILTINS)
def test_builtins_pass_with_their_targets(kb: KnowledgeBase, name: str) -> None:
    findings = check_profile(load_profile(name), kb)
    assert errors(findings) == [], format_findings(findings)


def test_legacy_maxwell_on_h100_has_no_kernel_image(kb: KnowledgeBase) -> None:
    findings = check_profile(load_profile("legacy-maxwell"), kb, HostSpec(gpus=["H100"]))
    bad = [f for f in errors(findings) if f.code == "torch-no-kernel"]
    assert bad and "no kernel image" in bad[0].message and "sm_90" in bad[0].message
    assert bad[0].source.startswith("pytorch.yaml#1.7.1+cu101:")


def test_modern_a100_without_cuda11_libs_is_the_silent_cpu_trap(kb: KnowledgeBase) -> None:
    profile = variant("modern-a100", packages={"apt": [], "conda": [], "pip": []})
    bad = [f for f in errors(check_profile(profile, kb)) if f.code == "tf-cuda-mismatch"]
    assert bad, "TF 2.12 on CUDA-12-only libraries must fail"
    assert "libcudart.so.11.0" in bad[0].message and "CPU" in bad[0].message
    assert "cudatoolkit=11.8.0" in bad[0].fix and "nvidia-cudnn-cu11==8.6.0.163" in bad[0].fix


# (profile, changes, host, verdict: "pass" | error code expected, substring of the message)
CASES: list[tuple[str, dict[str, Any], HostSpec | None, str, str]] = [
    # drivers
    ("legacy-maxwell", {}, HostSpec(gpus=["GTX 950M"], driver="418.87"), "pass", ""),
    ("legacy-maxwell", {}, HostSpec(gpus=["GTX 950M"], driver="410.48"), "driver-too-old", "418.39"),
    (
        "legacy-maxwell",
        {},
        HostSpec(gpus=["GTX 950M"], driver="418.81", platform="windows"),
        "driver-too-old",
        "Windows",
    ),
    ("legacy-maxwell", {}, HostSpec(gpus=["GTX 950M"], driver="425.31", platform="windows"), "pass", ""),
    ("modern-a100", {}, HostSpec(gpus=["A100"], driver="535.104.05"), "pass", ""),
    ("modern-a100", {}, HostSpec(gpus=["A100"], driver="470.82.01"), "driver-too-old", "525.60.13"),
    ("modern-a100", {}, HostSpec(gpus=["A100"], driver="520.61.05"), "driver-too-old", "CUDA 12.1"),
    # GPUs and kernels
    ("legacy-maxwell", {}, HostSpec(gpus=["H100"]), "torch-no-kernel", "no kernel image"),
    ("legacy-maxwell", {}, HostSpec(gpus=["RTX 3090"]), "torch-no-kernel", "sm_86"),
    ("legacy-maxwell", {}, HostSpec(gpus=["GTX 1080"]), "pass", ""),
    ("legacy-maxwell", {}, HostSpec(gpus=["7.5"]), "pass", ""),
    ("modern-a100", {}, HostSpec(gpus=["H100"]), "pass", ""),
    ("modern-a100", {"frameworks": {"pytorch": "2.1.2+cu121"}}, HostSpec(gpus=["Tesla K80"]), "torch-no-kernel",
     "too old"),
    ("modern-a100", {}, HostSpec(gpus=["GTX 950M"]), "pass", ""),
    (
        "modern-a100",
        {"frameworks": {"pytorch": "2.7.1+cu128", "torchvision": "0.22.1", "torchaudio": "2.7.1"}},
        HostSpec(gpus=["GTX 950M"]),
        "torch-no-kernel",
        "too old",
    ),
    (
        "modern-a100",
        {"frameworks": {"pytorch": "2.1.2+cu121"}},
        HostSpec(gpus=["RTX 5090"]),
        "torch-no-kernel",
        "too new",
    ),
    # TensorFlow
    ("modern-a100", {"packages": {"conda": [], "pip": []}}, None, "tf-cuda-mismatch", "libcudart.so.11.0"),
    (
        "modern-a100",
        {"packages": {"conda": ["cudatoolkit=11.8.0"], "pip": ["nvidia-cudnn-cu11==8.1.1.33"]}},
        None,
        "tf-cudnn-too-old",
        "compiled with: 8.6",
    ),
    (
        "modern-a100",
        {"frameworks": {"tensorflow_package": "tensorflow-gpu"}},
        None,
        "tf-gpu-stub",
        "error stub",
    ),
    (
        "modern-a100",
        {"frameworks": {"tensorflow_package": "tensorflow-cpu"}},
        None,
        "tf-cpu-package",
        "no CUDA",
    ),
    (
        "modern-a100",
        # TF 2.15[and-cuda] pulls nvidia-cudnn-cu12 8.9, torch 2.1.2+cu118 pulls nvidia-cudnn-cu11 8.7: both write
        # site-packages/nvidia/cudnn/lib/libcudnn.so.8 (and libcurand.so.10, libcusolver.so.11, libnccl.so.2).
        {"frameworks": {"tensorflow": "2.15.0"}, "packages": {"conda": [], "pip": []}},
        None,
        "lib-framework-conflict",
        "libcudnn.so.8",
    ),
    (
        "modern-a100",
        {
            "frameworks": {"tensorflow": "2.14.0", "tensorflow_package": "tensorflow[and-cuda]"},
            "packages": {"conda": [], "pip": []},
        },
        None,
        "pass",
        "",
    ),
    (
        "legacy-maxwell",
        {"frameworks": {"tensorflow": "2.0.0", "tensorflow_package": "tensorflow"}},
        None,
        "tf-package-no-gpu",
        "no GPU support",
    ),
    (
        "legacy-maxwell",
        {"frameworks": {"tensorflow": "2.4.0"}},
        None,
        "tf-cuda-mismatch",
        "libcudart.so.11.0",
    ),
    (
        "legacy-maxwell",
        {"frameworks": {"tensorflow": "2.0.0", "tensorflow_package": "tensorflow-gpu"}},
        None,
        "tf-cuda-mismatch",
        "libcudart.so.10.0",
    ),
    # Python
    ("legacy-maxwell", {"python": "3.8.10"}, None, "python-no-wheels", "TensorFlow 2.1.0"),
    ("modern-a100", {"python": "3.12.1"}, None, "python-no-wheels", "3.8-3.11"),
    ("cpu-smoke", {"python": "3.12"}, None, "python-base-mismatch", "3.11"),
    # cuDNN and base images
    ("legacy-maxwell", {"cudnn": "8.2.4"}, None, "cudnn-cuda-mismatch", "CUDA 10.1"),
    ("modern-a100", {"cudnn": "7.6.5"}, None, "cudnn-cuda-mismatch", "7.6.5"),
    (
        "legacy-maxwell",
        {"base": "nvidia/cuda:10.1-cudnn7-runtime-ubuntu18.04"},
        None,
        "base-deleted",
        "deleted",
    ),
    (
        "legacy-maxwell",
        {"base": "nvidia/cuda:10.1-cudnn7-runtime-ubuntu18.04", "local_base": True},
        None,
        "pass",
        "",
    ),
    (
        "modern-a100",
        {"base": "nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04", "cuda": "11.8"},
        None,
        "base-cuda-mismatch",
        "12.1.1",
    ),
    ("modern-a100", {"base": "nvidia/cuda:12.1-runtime"}, None, "base-tag-invalid", "does not follow"),
    # torchvision / torchaudio / variants
    ("legacy-maxwell", {"frameworks": {"torchvision": "0.9.0"}}, None, "torchvision-mismatch", "0.8.2"),
    ("modern-a100", {"frameworks": {"torchaudio": "2.0.2"}}, None, "torchaudio-mismatch", "2.1.2"),
    ("legacy-maxwell", {"frameworks": {"pytorch": "1.7.1+cu121"}}, None, "torch-variant-missing", "cu101"),
    # NGC
    ("ngc-tensorflow", {}, HostSpec(gpus=["GTX 950M"]), "ngc-gpu-too-old", "6.0"),
    ("ngc-tensorflow", {}, HostSpec(gpus=["A100"], driver="535.129.03"), "pass", ""),
    ("ngc-tensorflow", {}, HostSpec(gpus=["GTX 1080"], driver="545.23.08"), "pass", ""),
    ("ngc-tensorflow", {"python": "3.11"}, None, "python-base-mismatch", "3.10"),
    # CUDA toolkit vs GPU
    (
        "modern-a100",
        {
            "gpu": {"targets": ["Tesla K80"]},
            "frameworks": {"pytorch": None, "torchvision": None, "torchaudio": None},
        },
        None,
        "cuda-gpu-too-old",
        "3.7",
    ),
    # CPU profiles
    ("cpu-smoke", {}, HostSpec(gpus=["H100"]), "pass", ""),
    ("cpu-minimal", {}, None, "pass", ""),
]


@pytest.mark.parametrize(("name", "changes", "host", "verdict", "reason"), CASES)
def test_combinations(
    kb: KnowledgeBase, name: str, changes: dict[str, Any], host: HostSpec | None, verdict: str, reason: str
) -> None:
    findings = check_profile(variant(name, **changes), kb, host)
    found = errors(findings)
    if verdict == "pass":
        assert found == [], format_findings(findings)
        return
    matching = [f for f in found if f.code == verdict]
    assert matching, format_findings(findings)
    assert reason in matching[0].message, matching[0].message
    assert matching[0].fix and matching[0].source


def test_warnings_minor_compat_and_ptx(kb: KnowledgeBase) -> None:
    profile = variant(
        "modern-a100",
        frameworks={"tensorflow": None, "pytorch": "2.1.2+cu121", "torchvision": None, "torchaudio": None},
        packages={"conda": [], "pip": []},
    )
    findings = check_profile(profile, kb, HostSpec(gpus=["A100"], driver="525.85.12"))
    assert errors(findings) == []
    assert any(f.code == "driver-minor-compat" and f.severity == "warning" for f in findings)
    ptx = variant(
        "modern-a100", frameworks={"pytorch": "2.7.1+cu128", "torchvision": "0.22.1", "torchaudio": "2.7.1"}
    )
    # a hypothetical compute capability above sm_120: only compute_120 PTX can serve it
    result = check_profile(ptx, kb, HostSpec(gpus=["12.1"]))
    assert any(f.code == "torch-arch-binary-compat" for f in result)
    result = check_profile(ptx, kb, HostSpec(gpus=["13.0"]))
    assert any(f.code == "torch-arch-ptx-jit" and f.severity == "warning" for f in result)


def test_cpu_profile_sanity_warnings(kb: KnowledgeBase) -> None:
    profile = variant(
        "cpu-smoke", frameworks={"pytorch": "2.1.2+cu121", "tensorflow_package": "tensorflow"}, python="3.11"
    )
    codes = {f.code for f in check_profile(profile, kb)}
    assert "cpu-profile-cuda-build" in codes


def test_findings_render(kb: KnowledgeBase) -> None:
    findings = check_profile(load_profile("legacy-maxwell"), kb, HostSpec(gpus=["H100"]))
    data = findings_to_json(findings)
    assert data[0]["severity"] == "error" and set(data[0]) == {"severity", "code", "message", "fix", "source"}
    text = format_findings(findings)
    assert "[torch-no-kernel]" in text and "fix:" in text and "1 error(s)" in text
    assert all("\n" not in f.message for f in findings)


def test_resolve_stack_legacy(kb: KnowledgeBase) -> None:
    stack = plan_image(load_profile("legacy-maxwell"), kb)
    assert stack.pip[:4] == [
        "tensorflow==2.1.0",
        "torch==1.7.1+cu101",
        "torchvision==0.8.2+cu101",
        "torchaudio==0.7.2",
    ]
    assert stack.pip_find_links == ["https://download.pytorch.org/whl/torch_stable.html"]
    assert stack.conda[0] == "python=3.7.9" and "cudatoolkit=10.1.243" in stack.conda
    assert stack.nvidia_require_cuda == "cuda>=10.1"
    assert stack.expected["arch_list"] == ["sm_37", "sm_50", "sm_60", "sm_70", "sm_75"]
    assert stack.expected["torch"] == "1.7.1+cu101" and stack.expected["gpu_required"] is True


def test_resolve_stack_modern_and_choice(kb: KnowledgeBase) -> None:
    stack = plan_image(load_profile("modern-a100"), kb)
    assert "torch==2.1.2+cu118" in stack.pip and stack.pip_index_urls == [
        "https://download.pytorch.org/whl/cu118"
    ]
    assert stack.nvidia_require_cuda == "cuda>=12.0" and stack.expected["tensorflow_cuda"] == "11.8"
    chosen = plan_image(variant("modern-a100", frameworks={"pytorch": "2.1.2"}), kb)
    assert chosen.torch_variant is not None and chosen.torch_variant.tag == "cu121"
    assert any("chose torch 2.1.2+cu121" in n for n in chosen.notes)


def test_resolve_stack_ngc_and_cpu(kb: KnowledgeBase) -> None:
    ngc = plan_image(load_profile("ngc-tensorflow"), kb)
    assert ngc.preinstalled == ["tensorflow==2.14.0"] and not any(p.startswith("tensorflow") for p in ngc.pip)
    assert ngc.nvidia_require_cuda is None  # the NGC base's own requirement stays (plan.require)
    cpu = plan_image(load_profile("cpu-smoke"), kb)
    assert cpu.pip[:2] == ["tensorflow-cpu==2.12.0", "torch==2.13.0+cpu"]
    assert cpu.nvidia_require_cuda is None and cpu.expected["gpu_required"] is False


def test_one_gpu_named_two_ways_is_judged_once(kb: KnowledgeBase) -> None:
    """Issue 32 item 10: target `GeForce RTX 4090` and host `RTX 4090` gave every GPU finding twice."""
    from envgen.check.context import build_context
    from envgen.check.scope import scope_line

    profile = variant("legacy-maxwell", gpu={"targets": ["GeForce RTX 4090"]})
    host = HostSpec(gpus=["RTX 4090"])
    findings = check_profile(profile, kb, host)
    kernels = [f for f in findings if f.code == "torch-no-kernel"]
    assert len(kernels) == 1 and "GeForce RTX 4090" in kernels[0].message
    assert len([f for f in findings if f.code == "cuda-gpu-too-new"]) == 1
    assert "host RTX 4090" in scope_line(build_context(profile, kb, host))
