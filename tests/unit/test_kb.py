"""Knowledge base: loading, strict validation, consistency, and the query API."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from envgen.errors import KnowledgeBaseError
from envgen.kb import KnowledgeBase, load_kb
from envgen.paths import kb_data_dir


def test_loads_and_is_consistent(kb: KnowledgeBase) -> None:
    assert kb.problems() == []
    kb.validate()
    assert len(kb.tensorflow) >= 20 and len(kb.pytorch) >= 30 and len(kb.gpus) >= 100


def test_every_row_has_a_source(kb: KnowledgeBase) -> None:
    tables = [
        kb.tensorflow,
        kb.pytorch,
        kb.cuda_toolkits,
        kb.cudnn_releases,
        kb.gpus,
        kb.ngc_releases,
        kb.cuda_images,
        kb.os_images,
    ]
    for rows in tables:
        for row in rows:
            assert row.source.strip()
            assert row.cite().startswith(row.FILE + "#")
    for release in kb.pytorch:
        assert all(v.source for v in release.variants)


def _copy_data(tmp_path: Path) -> Path:
    for path in kb_data_dir().glob("*.yaml"):
        (tmp_path / path.name).write_text(path.read_text())
    return tmp_path


def test_unknown_key_in_a_row_is_an_error(tmp_path: Path) -> None:
    data = _copy_data(tmp_path)
    doc = yaml.safe_load((data / "cuda.yaml").read_text())
    doc["cuda"][0]["driver_min"] = "1.0"
    (data / "cuda.yaml").write_text(yaml.safe_dump(doc))
    with pytest.raises(KnowledgeBaseError, match="driver_min"):
        load_kb(data)


def test_missing_source_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "cudnn.yaml").write_text('cudnn:\n  - {version: "8.6.0", cuda: ["11"]}\n')
    with pytest.raises(KnowledgeBaseError, match="source"):
        load_kb(tmp_path)


def test_unquoted_version_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "cudnn.yaml").write_text('cudnn:\n  - {version: 8.6, cuda: ["11"], source: "a document"}\n')
    with pytest.raises(KnowledgeBaseError, match="version"):
        load_kb(tmp_path)


def test_unknown_table_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "x.yaml").write_text("drivers: []\n")
    with pytest.raises(KnowledgeBaseError, match="unknown table"):
        load_kb(tmp_path)


def test_validate_catches_dangling_cuda(tmp_path: Path) -> None:
    data = _copy_data(tmp_path)
    doc = yaml.safe_load((data / "cuda.yaml").read_text())
    doc["cuda"] = [row for row in doc["cuda"] if row["version"] != "10.1"]
    (data / "cuda.yaml").write_text(yaml.safe_dump(doc))
    kb = load_kb(data)
    assert any("CUDA 10.1 is not in cuda.yaml" in p for p in kb.problems())
    with pytest.raises(KnowledgeBaseError):
        kb.validate()


@pytest.mark.parametrize(
    ("name", "cc"),
    [
        ("GTX 950M", "5.0"),
        ("GeForce GTX 950M", "5.0"),
        ("NVIDIA GeForce GTX 950M", "5.0"),
        ("GTX 950", "5.2"),
        ("GTX 960M", "5.0"),
        ("GTX 965M", "5.2"),
        ("MX150", "6.1"),
        ("GeForce MX150", "6.1"),
        ("Tesla K80", "3.7"),
        ("Tesla V100-SXM2-16GB", "7.0"),
        ("NVIDIA A100-SXM4-80GB", "8.0"),
        ("NVIDIA H100 80GB HBM3", "9.0"),
        ("H200", "9.0"),
        ("B200", "10.0"),
        ("RTX 3090", "8.6"),
        ("NVIDIA GeForce RTX 3060 Laptop GPU", "8.6"),
        ("RTX 4090", "8.9"),
        ("RTX 5090", "12.0"),
        ("L40S", "8.9"),
        ("T4", "7.5"),
        ("Quadro RTX 4000", "7.5"),
        ("RTX 4000 Ada Generation", "8.9"),
    ],
)
def test_gpu_names(kb: KnowledgeBase, name: str, cc: str) -> None:
    gpu = kb.gpu(name)
    assert gpu is not None, name
    assert gpu.compute_capability == cc


def test_gpu_by_compute_capability_and_unknown(kb: KnowledgeBase) -> None:
    gpu = kb.gpu("5.0")
    assert gpu is not None and gpu.compute_capability == "5.0" and gpu.architecture == "Maxwell"
    assert kb.gpu("GTX 9999") is None


def test_tensorflow_queries(kb: KnowledgeBase) -> None:
    build = kb.tensorflow_build("2.12.0")
    assert build is not None and (build.cuda, build.cudnn, build.python_max) == ("11.8", "8.6", "3.11")
    assert build.cite().startswith("tensorflow.yaml#2.12: https://www.tensorflow.org/install/source")
    assert kb.tensorflow_package("2.0.0", gpu=True) == "tensorflow-gpu"
    assert kb.tensorflow_package("1.15.5", gpu=True) == "tensorflow-gpu"
    assert kb.tensorflow_package("2.1.0", gpu=True) == "tensorflow"
    assert kb.tensorflow_package("2.13.1", gpu=True) == "tensorflow"
    assert kb.tensorflow_package("2.14.0", gpu=True) == "tensorflow[and-cuda]"
    assert kb.tensorflow_package("2.12.0", gpu=False) == "tensorflow-cpu"
    assert kb.tensorflow_build("2.11.0") is not None and not kb.tensorflow_build("2.11.0").gpu_stub  # type: ignore[union-attr]
    assert kb.tensorflow_build("2.12.0").gpu_stub  # type: ignore[union-attr]


def test_torch_queries(kb: KnowledgeBase) -> None:
    release = kb.torch_release("1.7.1+cu101")
    assert release is not None and (release.torchvision, release.torchaudio) == ("0.8.2", "0.7.2")
    variant = kb.torch_variant("1.7.1", "10.1")
    assert variant is not None and variant.arch_list == ["sm_37", "sm_50", "sm_60", "sm_70", "sm_75"]
    assert variant.find_links and variant.index_url.endswith("torch_stable.html")
    cu110 = kb.torch_variant("1.7.1", "11.0")
    assert cu110 is not None and "sm_80" in cu110.arch_list
    cu121 = kb.torch_variant("2.1.2", "12.1")
    assert cu121 is not None and cu121.arch_list == [
        "sm_50",
        "sm_60",
        "sm_70",
        "sm_75",
        "sm_80",
        "sm_86",
        "sm_90",
    ]
    assert cu121.index_url == "https://download.pytorch.org/whl/cu121"
    cu128 = kb.torch_variant("2.7.1", "12.8")
    assert cu128 is not None and "sm_50" not in cu128.arch_list and cu128.ptx == ["compute_120"]
    assert kb.torch_variant("2.1.2", "10.1") is None
    cpu = kb.torch_variant("2.13.0", None)
    assert cpu is not None and cpu.tag == "cpu" and "local wheel" in cpu.source


def test_cuda_and_cudnn_queries(kb: KnowledgeBase) -> None:
    c101 = kb.cuda("10.1.243")
    assert c101 is not None and c101.driver_linux_min == "418.39" and c101.minor_compat_driver_min is None
    c118 = kb.cuda("11.8")
    assert c118 is not None and c118.minor_compat_driver_min == "450.80.02" and c118.cc_min == "3.5"
    c121 = kb.cuda("12.1")
    assert c121 is not None and c121.minor_compat_driver_min == "525.60.13" and c121.cc_min == "5.0"
    c130 = kb.cuda("13.0")
    assert c130 is not None and c130.cc_min == "7.5"
    row = kb.cudnn("8.6.0.163")
    assert row is not None and kb.cudnn_supports(row, "11.8") and not kb.cudnn_supports(row, "12.1")
    row765 = kb.cudnn("7.6.5")
    assert row765 is not None and kb.cudnn_supports(row765, "10.1") and not kb.cudnn_supports(row765, "11.0")
    assert kb.cudnn("8.9") is not None


def test_image_queries(kb: KnowledgeBase) -> None:
    ngc = kb.ngc("nvcr.io/nvidia/tensorflow:23.12-tf2-py3")
    assert ngc is not None and (ngc.framework_version, ngc.cuda, ngc.python, ngc.cc_min, ngc.driver_min) == (
        None,  # no NVIDIA page or file read states 23.12's TensorFlow
        "12.3.2",
        "3.10",
        "6.0",
        "545",
    )
    info = kb.base_image("nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04")
    assert info is not None and (info.status, info.cuda, info.cudnn, info.python) == (
        "available",
        "12.1.1",
        "8",
        "3.10.12",
    )
    gone = kb.base_image("nvidia/cuda:10.1-cudnn7-runtime-ubuntu18.04")
    assert gone is not None and gone.status == "deleted"
    bad = kb.base_image("nvidia/cuda:latest")
    assert bad is not None and bad.status == "unknown" and "does not follow" in bad.reason
    deb = kb.base_image("debian:bookworm-slim")
    assert deb is not None and deb.python == "3.11.2"
    assert kb.base_image("example.com/nothing:1") is None
