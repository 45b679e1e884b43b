"""`envgen suggest`: the answer for the five classic GPU/driver pairs, each written profile passing `envgen check`
with the same --gpu/--driver; the two-profile answer when no single image can hold the frameworks; and the
"nearest that has" line the check takes from the same search."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from envgen.check import HostSpec, check_profile
from envgen.kb import KnowledgeBase
from envgen.kb.builds import kernel_coverage, nearest_torch_builds
from envgen.kb.versions import vtuple
from envgen.profile import load_profile
from envgen.suggest.recipes import Recipes, load_recipes
from envgen.suggest.search import Request, parse_frameworks, suggest


@pytest.fixture(scope="module")
def recipes() -> Recipes:
    return load_recipes()


def envgen(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "envgen", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=120)


# (GPU, driver, what the answer must respect: the highest CUDA the driver runs without minor-version compat)
CLASSIC = [
    ("GTX 950M", "418.87.01", "10.1"),
    ("A100", "525.85.12", "12.0"),
    ("RTX 3090", "470.82.01", "11.4"),
    ("H100", "535.104.05", "12.2"),
    ("RTX 5090", "570.86.10", "12.8"),
]
# no TensorFlow wheel runs on compute capability 12.0 (tensorflow.yaml tensorflow_ptx_failures): PyTorch alone there
FRAMEWORKS = {"RTX 5090": "pytorch"}


@pytest.mark.parametrize(("gpu", "driver", "cuda_max"), CLASSIC)
def test_classic_pairs_get_a_profile_that_passes_check(tmp_path: Path, gpu: str, driver: str, cuda_max: str) -> None:
    out = tmp_path / "suggested.yaml"
    frameworks = FRAMEWORKS.get(gpu, "tensorflow,pytorch")
    result = envgen("suggest", "--gpu", gpu, "--driver", driver, "--frameworks", frameworks, "-o", str(out))
    assert result.returncode == 0, result.stderr
    written = sorted(tmp_path.glob("suggested*.yaml"))
    assert written, result.stderr
    for path in written:
        text = path.read_text()
        assert text.startswith("# Written by `envgen suggest")
        assert "[tensorflow.yaml#" in text or "[pytorch.yaml#" in text  # the rows each choice rests on
        check = envgen("check", str(path), "--gpu", gpu, "--driver", driver)
        assert check.returncode == 0, check.stdout + check.stderr
        cuda = yaml.safe_load(text)["cuda"]
        assert vtuple(cuda)[0] <= vtuple(cuda_max)[0]  # no CUDA major the driver cannot run at all


@pytest.mark.parametrize(("gpu", "driver", "prefer", "plain"), [
    ("H100", "580.65.06", "newest", True),  # torch 2.14.1: PyPI's wheel is the cu130 build
    ("RTX 5090", "570.86.10", "lts", True),  # torch 2.9.1: PyPI's wheel is the cu128 build
    ("RTX 5090", "570.86.10", "newest", False),  # torch 2.11.0+cu128: PyPI's 2.11.0 wheel is another build
    ("H100", "560.35.03", "newest", False),  # torch 2.13.0+cu126: the same
])
def test_torch_is_pinned_plain_where_pypis_wheel_is_the_build(tmp_path: Path, kb: KnowledgeBase, recipes: Recipes,
                                                              gpu: str, driver: str, prefer: str, plain: bool) -> None:
    """Where the chosen build's row says PyPI's own wheel is that build (pytorch.yaml `pypi: true`), the profile
    written pins the plain release (installed from PyPI, no download.pytorch.org) with `cuda:` that picks it; the
    `+cuXXX` form only elsewhere; the comment names the row either way. The file passes check for the same host and
    plans to the build and the CUDA suggest chose (was: `+cu130` everywhere, routed to download.pytorch.org)."""
    from envgen.plan.image import plan_image
    from envgen.suggest.write import profile_text

    result = suggest(kb, recipes, Request(gpu, parse_frameworks("pytorch"), driver, None, prefer))  # type: ignore[arg-type]
    chosen = result.chosen[0]
    assert chosen.candidate.torch is not None
    build = chosen.candidate.torch.build
    assert build.variant.pypi is plain
    path = tmp_path / "s.yaml"
    text = profile_text(result, chosen, "s")
    path.write_text(text, encoding="utf-8")
    profile = load_profile(str(path))
    assert profile.frameworks.pytorch == (build.release.version if plain else build.label)
    said = f"PyPI's torch {build.release.version} wheel is the {build.variant.tag} build"
    comments = text.replace("\n#   ", " ")  # each comment on one line again
    assert (said in comments) is plain and f"[pytorch.yaml#{build.label}:" in comments
    assert not [f for f in check_profile(profile, kb, HostSpec(gpus=[gpu], driver=driver)) if f.severity == "error"]
    plan = plan_image(profile, kb)
    assert (plan.expected.torch, plan.expected.torch_cuda, plan.profile.cuda) == (build.label, build.cuda, build.cuda)
    assert plan.pip[0] == f"torch=={profile.frameworks.pytorch}"
    assert (plan.pip_index_urls == []) is plain  # no index of PyTorch's for PyPI's wheel


def test_tensorflow_on_rtx_5090_has_no_stack() -> None:
    """TensorFlow's wheels fail on compute capability 12.0 (CUDA_ERROR_INVALID_PTX, TensorFlow's issues): suggest
    writes none rather than one that fails at the first GPU op."""
    result = envgen("suggest", "--gpu", "RTX 5090", "--driver", "570.86.10", "--frameworks", "tensorflow")
    assert "no stack in the knowledge base runs tensorflow" in result.stderr and "tf-ptx-fails" not in result.stdout
    assert "CUDA_ERROR_INVALID_PTX" in result.stderr


def test_gtx_950m_on_418_gets_cuda_10_1_era_builds(kb: KnowledgeBase, recipes: Recipes) -> None:
    result = suggest(kb, recipes, Request("GTX 950M", {"tensorflow": None, "pytorch": None}, "418.87.01"))
    assert result.single
    c = result.chosen[0].candidate
    assert c.tf is not None and c.tf.build.cuda == "10.1"
    assert c.torch is not None and c.torch.build.variant.tag == "cu101"
    assert kernel_coverage("5.0", c.torch.build.variant.arch_list, []) == "exact"


def test_rtx_3090_on_470_needs_no_minor_version_compat(kb: KnowledgeBase, recipes: Recipes) -> None:
    result = suggest(kb, recipes, Request("RTX 3090", {"tensorflow": None, "pytorch": None}, "470.82.01"))
    s = result.chosen[0]
    # TF 2.8-2.11 wheels carry compute_80 PTX and no sm_80/sm_86 cubins for most kernels (read from the wheels):
    # an RTX 3090 JIT-compiles them at start-up, a true warning; nothing else may be raised
    assert not [f for f in s.findings if f.severity != "info" and f.code != "tf-arch-ptx-jit"]
    cudas = [s.candidate.tf.build.cuda, s.candidate.torch.build.cuda]  # type: ignore[union-attr]
    assert all(vtuple(c) <= (11, 4) for c in cudas)


def test_rtx_5090_torch_gets_sm_120(kb: KnowledgeBase, recipes: Recipes) -> None:
    result = suggest(kb, recipes, Request("RTX 5090", {"pytorch": None}, "570.86.10"))
    torch = result.chosen[0].candidate.torch
    assert torch is not None and "sm_120" in torch.build.variant.arch_list
    assert not [f for f in result.chosen[0].findings if f.severity == "warning"]


def test_library_clash_gives_two_profiles_each_passing_check(tmp_path: Path) -> None:
    """TF 2.18 installs nvidia-*-cu12 wheels with its own exact pins (cuDNN 9.3); torch 2.3 pins cuDNN 8.9 of the
    same distributions: one environment cannot hold both."""
    out = tmp_path / "pair.yaml"
    result = envgen("suggest", "--gpu", "A100", "--driver", "550.54.15",
                    "--frameworks", "tensorflow==2.18,pytorch==2.3", "-o", str(out))
    assert result.returncode == 0, result.stderr
    assert "no single image can hold tensorflow and pytorch" in result.stderr
    assert "nvidia" in result.stderr
    paths = [tmp_path / "pair-tensorflow.yaml", tmp_path / "pair-pytorch.yaml"]
    for path in paths:
        assert path.exists()
        assert envgen("check", str(path), "--gpu", "A100", "--driver", "550.54.15").returncode == 0
    assert yaml.safe_load(paths[0].read_text())["frameworks"]["tensorflow"].startswith("2.18")
    assert yaml.safe_load(paths[1].read_text())["frameworks"]["pytorch"].startswith("2.3")


def test_python_windows_that_never_meet_give_two_profiles(kb: KnowledgeBase, recipes: Recipes) -> None:
    result = suggest(kb, recipes, Request("A100", {"tensorflow": "1.15", "pytorch": "2.5"}))
    assert not result.single and "no Python fits both" in result.split_reason


def test_python_and_prefer_are_honoured(kb: KnowledgeBase, recipes: Recipes) -> None:
    py39 = suggest(kb, recipes, Request("A100", {"pytorch": None}, python="3.9"))
    assert py39.chosen[0].candidate.python == "3.9"
    newest = suggest(kb, recipes, Request("A100", {"pytorch": None}))
    lts = suggest(kb, recipes, Request("A100", {"pytorch": None}, prefer="lts"))
    n, o = newest.chosen[0].candidate.torch, lts.chosen[0].candidate.torch
    assert n is not None and o is not None
    # lts: a settled release (the last patch of a series that had a patch release), older than the newest
    assert vtuple(o.build.release.version)[2] >= 1 and vtuple(o.build.release.version) < vtuple(n.build.release.version)
    both = suggest(kb, recipes, Request("RTX 4090", {"tensorflow": None, "pytorch": None}, prefer="lts"))
    tf = both.chosen[0].candidate.tf
    assert tf is not None and tf.rank >= 1  # not the newest TensorFlow series that fits


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--gpu", "A100", "--frameworks", "jax"), "--frameworks"),
        (("--gpu", "A100", "--frameworks", "pytorch", "--prefer", "oldest"), "--prefer"),
        (("--frameworks", "pytorch"), "--gpu"),
        (("--gpu", "No Such GPU 9", "--frameworks", "pytorch"), "not in the knowledge base"),
        (("--gpu", "GTX 950M", "--driver", "390.48", "--frameworks", "pytorch"), "no stack"),
        (("--gpu", "A100", "--driver", "latest", "--frameworks", "pytorch"), "--driver"),
    ],
)
def test_bad_requests_are_one_line(args: tuple[str, ...], needle: str) -> None:
    result = envgen("suggest", *args)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], result.stderr


def test_parse_frameworks() -> None:
    assert parse_frameworks("tensorflow, torch==2.3") == {"tensorflow": None, "pytorch": "2.3"}
    assert parse_frameworks("tf=2.15") == {"tensorflow": "2.15"}


def test_check_error_names_the_nearest_builds_that_have_the_kernels(tmp_path: Path, kb: KnowledgeBase) -> None:
    profile = tmp_path / "p.yaml"
    profile.write_text("name: p\nbase: ubuntu:22.04\ninstaller: pip\npython: '3.11'\ncuda: '12.8'\n"
                       "frameworks: {pytorch: 2.7.0+cu128}\n", encoding="utf-8")
    findings = check_profile(load_profile(str(profile)), kb, HostSpec(gpus=["GTX 950M"]))
    error = next(f for f in findings if f.code == "torch-no-kernel")
    assert "nearest that has: 2.7.0+cu126, 2.7.0+cu118" in error.fix
    assert nearest_torch_builds(kb, "5.0", "2.7.0", "12.8", driver="418.87.01")[0].endswith("+cu101")


def test_binary_compatibility_is_stated_correctly() -> None:
    assert kernel_coverage("8.9", ["sm_80", "sm_86"], []) == "binary"  # sm_86 cubin runs on sm_89
    assert kernel_coverage("9.0", ["sm_80", "sm_86"], ["compute_80"]) == "ptx"  # across majors: PTX only
    assert kernel_coverage("9.0", ["sm_80", "sm_86"], []) == "none"
    assert kernel_coverage("9.1", ["sm_90a"], []) == "none"  # arch-specific cubins run on exactly 9.0
    assert kernel_coverage("12.0", ["sm_100"], ["compute_90"]) == "ptx"


def test_sm_89_on_a_cuda_that_targets_sm_86_earns_no_warning(tmp_path: Path, kb: KnowledgeBase) -> None:
    """CUDA 11.1-11.7 target up to 8.6; an sm_89 GPU runs their sm_86 cubins (same major)."""
    toolkit = next(t for t in kb.cuda_toolkits if t.cc_max == "8.6")
    profile = tmp_path / "p.yaml"
    profile.write_text(f"name: p\nbase: ubuntu:22.04\ninstaller: pip\npython: '3.10'\ncuda: '{toolkit.version}'\n",
                       encoding="utf-8")
    findings = check_profile(load_profile(str(profile)), kb, HostSpec(gpus=["8.9"]))
    assert not [f for f in findings if f.code == "cuda-gpu-too-new"]
    findings = check_profile(load_profile(str(profile)), kb, HostSpec(gpus=["9.0"]))
    assert [f for f in findings if f.code == "cuda-gpu-too-new"]


def test_compute_capability_instead_of_a_name(tmp_path: Path) -> None:
    out = tmp_path / "cc.yaml"
    result = envgen("suggest", "--compute-capability", "8.6", "--frameworks", "pytorch", "-o", str(out))
    assert result.returncode == 0, result.stderr
    data = yaml.safe_load(out.read_text())
    assert data["gpu"]["targets"] == ["8.6"] and data["name"] == "cc"  # the file's name: found by it
    assert envgen("check", str(out), "--compute-capability", "8.6").returncode == 0
    # a profile directory finds it by that name
    assert envgen("check", "cc", "--compute-capability", "8.6", env={"ENVGEN_PROFILE_PATH": str(tmp_path)}
                  ).returncode == 0
