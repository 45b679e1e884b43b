"""Binary wheels judged on the CUDA libraries their objects load (issue #39, item 3): the ELF reader on real wheel
bytes, and check on both sides of each CUDA boundary from the recorded rows (wheel_libraries.yaml, read from the
wheels named in each row's source by ``python -m tools.kbrefresh.wheel_libs``)."""

from __future__ import annotations

import hashlib
import io
import re
import shutil
import subprocess
import sys
import urllib.request
import zipfile
from pathlib import Path
from typing import Any

import pytest

from envgen.check import check_profile
from envgen.kb import KnowledgeBase
from envgen.plan.image import plan_image
from envgen.profile import Profile
from tools.kbrefresh import wheel_stream
from tools.kbrefresh.elf_dynamic import BytesSource, read_dynamic
from tools.kbrefresh.member_source import MemberSource
from tools.kbrefresh.wheel_libs import read_objects

# a real 28 kB manylinux wheel from PyPI: one small extension module (sha256 as PyPI lists it for the file)
MARKUPSAFE = ("https://files.pythonhosted.org/packages/97/18/c30da5e7a0e7f4603abfc6780574131221d9148f323752c2755d48"
              "abad30/MarkupSafe-2.1.5-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl")
MARKUPSAFE_SHA256 = "b91c037585eba9095565a3556f611e3cbfaa42ca1e865f7b8015fe5c7336d5a5"
SPEEDUPS = "markupsafe/_speedups.cpython-311-x86_64-linux-gnu.so"


@pytest.fixture(scope="module")
def markupsafe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, downloaded once (PyPI is reachable here and in CI) and checked against PyPI's sha256."""
    with urllib.request.urlopen(MARKUPSAFE, timeout=120) as response:  # noqa: S310 (PyPI)
        data = response.read()
    assert hashlib.sha256(data).hexdigest() == MARKUPSAFE_SHA256
    path = tmp_path_factory.mktemp("wheel") / MARKUPSAFE.rsplit("/", 1)[-1]
    path.write_bytes(data)
    return path


def _readelf_needed(path: Path) -> list[str]:
    out = subprocess.run(["readelf", "-d", str(path)], check=True, capture_output=True, text=True).stdout
    return [line.split("[", 1)[1].split("]", 1)[0] for line in out.splitlines() if "(NEEDED)" in line]


def test_dynamic_segment_of_a_real_object_as_readelf_reads_it(markupsafe: Path, tmp_path: Path) -> None:
    data = zipfile.ZipFile(markupsafe).read(SPEEDUPS)
    dynamic = read_dynamic(BytesSource(data))
    assert dynamic is not None and "libc.so.6" in dynamic.needed
    if shutil.which("readelf"):  # binutils' reading of the same file, where it is installed
        obj = tmp_path / "speedups.so"
        obj.write_bytes(data)
        assert list(dynamic.needed) == _readelf_needed(obj)


def test_range_reads_of_the_url_equal_the_local_file(markupsafe: Path) -> None:
    local, _, requires = read_objects(str(markupsafe))
    remote, read, _ = read_objects(MARKUPSAFE)
    assert local == remote and [o["file"] for o in local] == [SPEEDUPS] and requires == []
    assert 0 < read < markupsafe.stat().st_size  # the deflated member only, not the whole wheel


def test_a_span_behind_the_kept_prefix_inflates_the_member_again(markupsafe: Path) -> None:
    whole = read_dynamic(BytesSource(zipfile.ZipFile(markupsafe).read(SPEEDUPS)))
    size, members = wheel_stream.central_directory(str(markupsafe))
    member = next(m for m in members if m.name == SPEEDUPS)
    with open(markupsafe, "rb") as handle:
        source = MemberSource(handle, member, keep=16)  # the string table is behind the dynamic segment
        assert read_dynamic(source) == whole
    assert member.method == zipfile.ZIP_DEFLATED and size > 0


def test_a_file_that_is_no_elf_object_is_skipped(tmp_path: Path) -> None:
    wheel = tmp_path / "x-1-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("x/not_elf.so", b"#!/bin/sh\n" * 10)
    assert read_objects(str(wheel))[0] == []  # nor a METADATA: no requirement read
    assert io.BytesIO(wheel.read_bytes()).read(2) == b"PK"


# --- check, from the recorded rows ---------------------------------------------------------------------------------

def _profile(base: str, pip: list[str], **fields: Any) -> Profile:
    data: dict[str, Any] = {"name": "p", "base": base, "installer": "conda", "python": "3.11",
                            "gpu": {"targets": ["A100"]}, "packages": {"pip": pip}}
    data.update(fields)
    return Profile.model_validate(data)


CUDA12 = "nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04"
CUDA12_CUDNN9 = "nvidia/cuda:12.4.1-cudnn-runtime-ubuntu22.04"
CUDA11 = "nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04"


def _wheel_findings(profile: Profile, kb: KnowledgeBase) -> list[Any]:
    return [f for f in check_profile(profile, kb) if f.code.startswith("wheel-lib")]


@pytest.mark.parametrize(("base", "cuda", "line", "missing", "fix"), [
    (CUDA12, "12.1", "cupy-cuda12x==13.3.0", None, None),
    (CUDA12, "12.1", "cupy-cuda11x==13.3.0", "libcublas.so.11", "cupy-cuda12x"),
    (CUDA11, "11.8", "cupy-cuda11x==13.3.0", None, None),
    (CUDA11, "11.8", "cupy-cuda12x==13.3.0", "libcublas.so.12", "cupy-cuda11x"),
    (CUDA11, "11.8", "onnxruntime-gpu==1.18.1", None, None),
    (CUDA11, "11.8", "onnxruntime-gpu==1.19.0", "libcudart.so.12", "onnxruntime-gpu==1.18.1"),
    (CUDA12_CUDNN9, "12.4", "onnxruntime-gpu==1.19.0", None, None),
    (CUDA12_CUDNN9, "12.4", "onnxruntime-gpu==1.18.1", "libcudart.so.11.0", "onnxruntime-gpu==1.19.0"),
    # cuDNN: ONNX Runtime 1.19 is built with cuDNN 9, the base holds cuDNN 8
    (CUDA12, "12.1", "onnxruntime-gpu==1.19.0", "libcudnn.so.9", "holds libcudnn.so.8 (base image"),
])
def test_a_wheel_loading_another_cuda_major_is_an_error(kb: KnowledgeBase, base: str, cuda: str, line: str,
                                                        missing: str | None, fix: str | None) -> None:
    found = _wheel_findings(_profile(base, [line], cuda=cuda), kb)
    if missing is None:
        assert found == []
        return
    assert [f.severity for f in found] == ["error"], found
    assert missing in found[0].message and line in found[0].message
    assert fix is not None and fix in found[0].fix
    assert found[0].source.startswith("wheel_libraries.yaml#") and "sha256 " in found[0].source


@pytest.mark.parametrize(("torch", "line", "missing"), [
    ("2.4.1+cu121", "onnxruntime-gpu==1.19.0", None),  # torch's cu12 wheels bring cuDNN 9, cuBLAS 12, cudart 12
    ("2.4.1+cu118", "onnxruntime-gpu==1.19.0", "libcudart.so.12"),  # an engine built for CUDA 12 beside +cu118
    ("2.4.1+cu118", "onnxruntime-gpu==1.18.1", "libcudnn.so.8"),  # torch 2.4 brings cuDNN 9, ORT 1.18 loads 8
    ("2.3.1+cu118", "onnxruntime-gpu==1.18.1", None),
    # xformers 0.0.28.post1 from PyPI is its CUDA 12 build (its _C.so: libcudart.so.12); its README's cu118 index
    # has the CUDA 11.8 one
    ("2.4.1+cu121", "xformers==0.0.28.post1", None),
    ("2.4.1+cu118", "xformers==0.0.28.post1", "libcudart.so.12"),  # torch 2.3 brings cuDNN 8 (ORT docs: 2.3 uses 8.x)
])
def test_the_libraries_torch_pulls_in_count(kb: KnowledgeBase, torch: str, line: str, missing: str | None) -> None:
    profile = _profile("debian:bookworm-slim", [line], local_base=True, frameworks={"pytorch": torch})
    found = _wheel_findings(profile, kb)
    if missing is None:
        assert found == []
    else:
        assert [f.severity for f in found] == ["error"] and missing in found[0].message


def test_an_unrecorded_gpu_build_is_said_not_judged(kb: KnowledgeBase) -> None:
    found = _wheel_findings(_profile(CUDA12, ["cupy-cuda12x==13.2.0"], cuda="12.1"), kb)
    assert [(f.severity, f.code) for f in found] == [("info", "wheel-libs-unread")]
    assert "tools.kbrefresh.wheel_libs" in found[0].fix


def test_the_probe_loads_what_check_found_provided(kb: KnowledgeBase) -> None:
    plan = plan_image(_profile(CUDA11, ["onnxruntime-gpu==1.18.1"], cuda="11.8"), kb)
    libraries = {lib.soname: lib for lib in plan.expected.libraries or []}
    assert {"libcudart.so.11.0", "libcudnn.so.8", "libcublasLt.so.11"} <= set(libraries)
    cudnn = libraries["libcudnn.so.8"]
    assert cudnn.needed_by == ["onnxruntime-gpu"] and cudnn.how == {"onnxruntime-gpu": "dt_needed"}
    assert cudnn.cuda_major == 11 and cudnn.providers and "base image" in cudnn.providers[0]


def test_spans_asked_in_any_order_equal_the_file(markupsafe: Path) -> None:
    """Adjacent spans (a dynamic segment, then the string table right behind it: patchelf's layout in faiss-gpu's
    wheels), spans behind the kept prefix and spans inside it all return the member's own bytes."""
    data = zipfile.ZipFile(markupsafe).read(SPEEDUPS)
    _, members = wheel_stream.central_directory(str(markupsafe))
    member = next(m for m in members if m.name == SPEEDUPS)
    asks = [(0, 64), (64, 500), (9000, 100), (9100, 3000), (12100, 7), (100, 50), (len(data) - 10, 50), (5, 5)]
    for keep in (1 << 25, 200, 0):
        with open(markupsafe, "rb") as handle:
            source = MemberSource(handle, member, keep=keep)
            assert [source.span(s, n) for s, n in asks] == [data[s:s + n] for s, n in asks]


def test_nvidia_wheels_a_wheel_requires_provide_its_libraries(kb: KnowledgeBase) -> None:
    """faiss-gpu-cu12 requires nvidia-cuda-runtime-cu12 and nvidia-cublas-cu12 (its METADATA, recorded in the row):
    beside a CUDA 11 base its CUDA 12 libraries come with it, so nothing is missing, and the probe loads them."""
    profile = _profile(CUDA11, ["faiss-gpu-cu12==1.14.1.post1"], cuda="11.8")
    assert _wheel_findings(profile, kb) == []
    libraries = {lib.soname: lib for lib in plan_image(profile, kb).expected.libraries or []}
    assert "nvidia-cuda-runtime-cu12" in libraries["libcudart.so.12"].providers[0]
    assert libraries["libcublasLt.so.12"].needed_by == ["faiss-gpu-cu12"]


def test_every_recorded_wheel_names_its_url_and_sha256(kb: KnowledgeBase) -> None:
    """Provenance (issue #39, item 5): each row was read from the file its source names, by that sha256."""
    assert kb.wheel_libraries
    for row in kb.wheel_libraries:
        url = row.source.split("segments: ", 1)[1].split(" ", 1)[0]
        assert url.startswith("https://files.pythonhosted.org/packages/") and url.endswith("/" + row.wheel), row.key
        assert re.search(r"\(sha256 [0-9a-f]{64}, PyPI's;", row.source), row.key
        assert "python -m tools.kbrefresh.wheel_libs" in row.source


def test_a_plain_check_refuses_the_wheel_and_passes_its_twin(tmp_path: Path) -> None:
    """What `envgen build` runs: a plain `envgen check` of a profile file, both sides of the CUDA 11/12 boundary."""
    results = {}
    for line in ("cupy-cuda12x==13.3.0", "cupy-cuda11x==13.3.0"):
        path = tmp_path / f"{line.split('==')[0]}.yaml"
        path.write_text(f"name: p\nbase: {CUDA11}\ninstaller: conda\npython: '3.11'\ncuda: '11.8'\n"
                        f"gpu: {{targets: [A100]}}\npackages: {{pip: ['{line}']}}\n", encoding="utf-8")
        results[line] = subprocess.run([sys.executable, "-m", "envgen", "check", str(path)], capture_output=True,
                                       text=True, timeout=120)
    broken, working = results["cupy-cuda12x==13.3.0"], results["cupy-cuda11x==13.3.0"]
    assert broken.returncode != 0 and "[wheel-lib-missing] cupy-cuda12x==13.3.0" in broken.stdout + broken.stderr
    assert working.returncode == 0 and "wheel-lib" not in working.stdout + working.stderr


def test_a_library_the_documentation_calls_optional_is_an_info(kb: KnowledgeBase) -> None:
    """cupy-cuda12x 13.3.0's cudnn module loads libcudnn.so.8; CuPy's docs call cuDNN optional: beside a cuDNN 9
    base cupy imports, cupy.cuda.cudnn does not."""
    found = _wheel_findings(_profile(CUDA12_CUDNN9, ["cupy-cuda12x==13.3.0"], cuda="12.4"), kb)
    assert [(f.severity, f.code) for f in found] == [("info", "wheel-lib-optional")]
    assert "libcudnn.so.8" in found[0].message and "cudnn" in found[0].message
