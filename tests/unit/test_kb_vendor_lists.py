"""KB rows read from the binaries and the vendors' own lists (issue 21): nvidia/cuda tags from NVIDIA's
supported/unsupported tag lists, arch lists from the wheels' fat binaries, and the refresh tools that read them."""

from __future__ import annotations

import gzip
import hashlib
import zipfile
from pathlib import Path

import pytest

from envgen.check import HostSpec, check_profile
from envgen.kb import KnowledgeBase, load_kb
from envgen.profile import Profile
from tools.kbrefresh import cuda_tags, wheel_arch
from tools.kbrefresh.fatbin import ArchSummary, FatbinScanner

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "fatbin" / "libcheckpoint-fatbins.bin.gz"
CUPTI_CODES = ["sm_50", "sm_60", "sm_62", "sm_70", "sm_72", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89",
               "sm_90", "sm_100", "sm_101", "sm_120", "sm_121"]


def codes(kb: KnowledgeBase, base: str, **extra: object) -> dict[str, str]:
    data: dict[str, object] = {"name": "t", "base": base, "installer": "pip", "python": "3.10",
                               "gpu": {"targets": ["A100"]}}
    data.update(extra)
    findings = check_profile(Profile.model_validate(data), kb, HostSpec())
    return {f.code: f.severity for f in findings}


# --- nvidia/cuda tags ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("patch", ["11.0.3", "11.1.1", "11.2.2", "11.6.1"])
def test_end_of_life_tags_still_exist(kb: KnowledgeBase, patch: str) -> None:
    """NVIDIA's unsupported-tags.md: "These tags still exist" (only the 10.x and older tags were deleted)."""
    info = kb.base_image(f"nvidia/cuda:{patch}-cudnn8-runtime-ubuntu20.04")
    assert info is not None and info.status == "end-of-life"
    assert "2024-01-01" in info.reason  # the EOL chart's estimated deletion date
    found = codes(kb, f"nvidia/cuda:{patch}-cudnn8-runtime-ubuntu20.04", cuda=".".join(patch.split(".")[:2]))
    assert found.get("base-end-of-life") == "warning" and "base-deleted" not in found


@pytest.mark.parametrize("tag", ["12.2.0-cudnn8-devel-ubuntu22.04", "12.3.1-cudnn9-runtime-ubuntu22.04",
                                 "12.4.0-cudnn-devel-ubuntu22.04", "12.5.0-cudnn-runtime-ubuntu22.04",
                                 "13.1.0-cudnn-devel-ubuntu24.04", "12.5.1-cudnn-devel-ubuntu24.04"])
def test_cudnn_flavours_exist_only_on_some_patches(kb: KnowledgeBase, tag: str) -> None:
    found = codes(kb, f"nvidia/cuda:{tag}", cuda=".".join(tag.split(".")[:2]))
    assert found.get("base-tag-not-published") == "error", found


@pytest.mark.parametrize("tag", ["12.2.2-cudnn8-devel-ubuntu22.04", "13.0.2-cudnn-devel-ubuntu24.04",
                                 "13.1.0-base-ubi10", "11.5.2-cudnn8-runtime-ubuntu20.04",
                                 "12.5.1-runtime-ubuntu24.04", "13.1.0-devel-ubuntu24.04",
                                 "12.8.1-cudnn-runtime-rockylinux9", "12.9.1-devel-ubi8"])
def test_listed_tags_are_available(kb: KnowledgeBase, tag: str) -> None:
    info = kb.base_image(f"nvidia/cuda:{tag}")
    assert info is not None and info.status == "available", info


def test_deleted_patches_and_majors(kb: KnowledgeBase) -> None:
    assert kb.base_image("nvidia/cuda:11.2.1-devel-ubuntu20.04").status == "deleted"  # type: ignore[union-attr]
    assert kb.base_image("nvidia/cuda:10.2-devel-ubuntu18.04").status == "deleted"  # type: ignore[union-attr]


def test_tag_table_matches_nvidia_lists() -> None:
    """The rerunnable comparison: base_images.yaml against the stored copy of NVIDIA's lists."""
    from envgen.paths import kb_data_dir

    assert cuda_tags.compare(cuda_tags.load_default(), kb_data_dir() / "base_images.yaml") == []


def test_cuda_tags_parses_nvidia_markdown() -> None:
    supported = "#### CUDA 12.2.2\n- [`12.2.2-cudnn8-devel-ubuntu22.04` (*x*)](y)\n- [`12.2.2-base-ubuntu22.04`](y)\n"
    unsupported = "#### CUDA 12.2.0\n- `12.2.0-base-ubuntu22.04`\n- `12.2.0-devel-ubuntu22.04`\n"
    rows = cuda_tags.releases(cuda_tags.parse_lists(supported, unsupported), {"12.2.0": ("2023-10-01", "2024-04-01")})
    assert rows["12.2"][0] == {"patch": "12.2.2", "status": "supported", "os": ["ubuntu22.04"], "cudnn": "8",
                               "cudnn_os": ["ubuntu22.04"]}
    assert rows["12.2"][1]["status"] == "end-of-life" and "cudnn" not in rows["12.2"][1]
    assert rows["12.2"][1]["deletion_planned"] == "2024-04-01"


# --- fat binaries --------------------------------------------------------------------------------------------

def test_fatbin_scanner_reads_real_fatbins_in_any_chunking() -> None:
    blob = gzip.decompress(FIXTURE.read_bytes())
    for size in (7, 4096, len(blob)):
        scanner = FatbinScanner()
        for at in range(0, len(blob), size):
            scanner.feed(blob[at : at + size])
        summary = ArchSummary.of(scanner.fatbins)
        assert summary.fatbins == 3
        assert summary.codes("sm", 0.5) == CUPTI_CODES and summary.codes("compute") == []


def test_wheel_arch_streams_a_wheel(tmp_path: Path) -> None:
    """A wheel holding the real fat binaries (and a version.py, as torch's wheels have): the row names its
    sha256, CUDA and arch list."""
    wheel = tmp_path / "torch-9.9.0-cp311-cp311-manylinux_2_28_x86_64.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("torch/version.py", "__version__ = '9.9.0+cu129'\ncuda: Optional[str] = '12.9'\n")
        archive.writestr("torch/__init__.py", "x = 1\n" * 1000)
        archive.writestr("torch/lib/libtorch_cuda.so", b"\x7fELF" + gzip.decompress(FIXTURE.read_bytes()))
    row = wheel_arch.read(str(wheel))
    assert (row["framework"], row["version"], row["cuda"]) == ("torch", "9.9.0", "12.9")
    assert row["arch_list"] == CUPTI_CODES and row["ptx"] == [] and row["fatbins"] == 3
    assert row["sha256"] == hashlib.sha256(wheel.read_bytes()).hexdigest()
    assert row["sha256"] in wheel_arch.source_text(row)


# --- rows read from the wheels -------------------------------------------------------------------------------

def framework_codes(kb: KnowledgeBase, frameworks: dict[str, str], gpu: str, cuda: str) -> dict[str, str]:
    data = {"name": "t", "base": "debian:bookworm-slim", "local_base": True, "installer": "pip", "python": "3.11",
            "cuda": cuda, "gpu": {"targets": [gpu]}, "frameworks": frameworks}
    return {f.code: f.severity for f in check_profile(Profile.model_validate(data), kb, HostSpec())}


def test_torch_260_cu124_on_rtx_5090_is_an_error(kb: KnowledgeBase) -> None:
    """torch 2.6.0+cu124 (PyPI's default wheel) carries sm_50...sm_90 cubins and no PTX: read from the wheel."""
    variant = kb.torch_variant("2.6.0", "12.4")
    assert variant is not None and not variant.unverified and "sha256:" in variant.source
    assert variant.arch_list[-1] == "sm_90" and variant.ptx == []
    found = framework_codes(kb, {"pytorch": "2.6.0"}, "RTX 5090", "12.4")
    assert found.get("torch-no-kernel") == "error"


@pytest.mark.parametrize("version", ["2.11.0", "2.12.0", "2.13.0", "2.14.0"])
def test_cu130_wheels_carry_no_compute_120_ptx(kb: KnowledgeBase, version: str) -> None:
    variant = kb.torch_variant(version, "13.0")
    assert variant is not None and variant.ptx == [] and "sha256:" in variant.source


def test_torch_212_213_214_pairs_and_python_window(kb: KnowledgeBase) -> None:
    assert [kb.torch_release(v).torchvision for v in ("2.12.0", "2.13.0", "2.14.0")] == [  # type: ignore[union-attr]
        "0.27.0", "0.28.0", "0.29.0"]
    assert kb.torch_release("2.13.0").python_max == "3.14"  # type: ignore[union-attr]


def test_tensorflow_215_on_h100_jit_compiles(kb: KnowledgeBase) -> None:
    """TF 2.15's wheel: sm_50 sm_60 sm_70 sm_75 cubins + compute_80 PTX, no sm_90 (H100 JIT-compiles)."""
    build = kb.tensorflow_build("2.15.0")
    assert build is not None and "sha256:" in build.arch_source and "sm_90" not in build.arch_list
    found = framework_codes(kb, {"tensorflow": "2.15.0", "tensorflow_package": "tensorflow[and-cuda]"}, "H100", "12.2")
    assert found.get("tf-arch-ptx-jit") == "warning"


def test_tensorflow_218_has_no_maxwell_code(kb: KnowledgeBase) -> None:
    tf = {"tensorflow": "2.18.0", "tensorflow_package": "tensorflow[and-cuda]"}
    found = framework_codes(kb, tf, "GTX 970", "12.5")
    assert found.get("tf-no-kernel") == "error"


def test_tensorflow_221_row(kb: KnowledgeBase) -> None:
    build = kb.tensorflow_build("2.21.0")
    assert build is not None and (build.cuda, build.cudnn, build.python_max) == ("12.5", "9.3", "3.13")


def test_ngc_release_without_a_row_is_a_warning_not_an_input_error(tmp_path: Path) -> None:
    """nvcr.io/nvidia/pytorch:24.11-py3 has no row: the profile loads (Python from the nearest known release)
    and check warns ngc-unknown, naming what it could not check."""
    from envgen.profile import load_profile

    path = tmp_path / "ngc.yaml"
    path.write_text("name: ngc\nbase: nvcr.io/nvidia/pytorch:24.11-py3\ngpu: {targets: [A100]}\n")
    profile = load_profile(str(path))
    found = check_profile(profile, load_kb(), HostSpec())
    unknown = [f for f in found if f.code == "ngc-unknown"]
    assert unknown and unknown[0].severity == "warning" and "driver minimum" in unknown[0].message


@pytest.mark.parametrize(("pytorch", "python", "inside"), [("1.13", "3.11", "3.10"), ("2.5", "3.13", "3.12")])
def test_suggest_python_is_inside_the_torchvision_torchaudio_window(kb: KnowledgeBase, pytorch: str, python: str,
                                                                   inside: str) -> None:
    """torch 1.13 has experimental 3.11 wheels and 2.5 experimental 3.13, but torchvision 0.14 / 0.20 and
    torchaudio 0.13 / 2.5 stop at 3.10 / 3.12: no suggestion may pair that torch with that Python (refusing is
    right: no such set installs), while the Python inside the window gets that torch (so a suggester that
    refuses everything fails here)."""
    from envgen.errors import InputError
    from envgen.suggest.recipes import load_recipes
    from envgen.suggest.search import Request, suggest

    def pairs(profile: dict[str, object]) -> bool:
        frameworks = profile.get("frameworks") or {}
        return str(frameworks.get("pytorch", "")).startswith(pytorch + ".")  # type: ignore[union-attr]

    try:
        result = suggest(kb, load_recipes(), Request("A100", {"pytorch": pytorch}, python=python))
    except InputError as exc:
        assert "no build in the knowledge base fits" in exc.one_line()
    else:
        assert not [s.profile for s in result.chosen if pairs(s.profile)]
    inside_window = suggest(kb, load_recipes(), Request("A100", {"pytorch": pytorch}, python=inside))
    assert [s for s in inside_window.chosen if pairs(s.profile)], inside_window.chosen


def test_kb_agrees_with_cogs_tables_up_to_reviewed_differences() -> None:
    """The rerunnable comparison against cog's torch/tf/cuda tables: only reviewed differences remain."""
    from tools.kbrefresh import compare_tables

    found = compare_tables.differences(load_kb())
    assert [d for d in found if d not in compare_tables.reviewed()] == []


@pytest.mark.parametrize("tag", ["13.0.3-cudnn-devel-ubuntu24.04", "13.1.1-cudnn-devel-ubuntu22.04",
                                 "13.2.0-cudnn-devel-ubuntu24.04"])
def test_tags_after_nvidias_list_copy_from_cogs_table(kb: KnowledgeBase, tag: str) -> None:
    info = kb.base_image(f"nvidia/cuda:{tag}")
    assert info is not None and info.status == "available"


def test_partial_release_list_gives_a_warning_not_an_error(kb: KnowledgeBase) -> None:
    found = codes(kb, "nvidia/cuda:13.2.1-runtime-ubi9", cuda="13.2", python="3.9")
    assert found.get("base-tag-unknown") == "warning" and "base-tag-not-published" not in found
