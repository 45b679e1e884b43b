"""Knowledge-base regressions from the compatibility-check review: each test failed before its fix."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from envgen.kb import KnowledgeBase, load_kb
from envgen.kb.versions import at_least, same_version
from envgen.paths import kb_data_dir


def test_version_comparisons_of_different_lengths() -> None:
    assert at_least("8", "8.6") is None  # a major-only cuDNN: the minor cannot be told
    assert at_least("8", "8.0") is True and at_least("9", "8.6") is True and at_least("7", "8.6") is False
    assert at_least("8.9", "8.6") is True and at_least("8.1.1.33", "8.6") is False
    assert at_least("8.6", "8.6.0") is True and at_least("535.104.05", "525.60.13") is True
    assert same_version("2.1", "2.1.0") and same_version("2.14.0", "2.14")
    assert not same_version("0.16", "0.16.2") and not same_version("2.1", "2.1.1")


@pytest.mark.parametrize(
    "tag", ["12.4.1-cudnn-runtime-ubuntu22.04", "12.6.3-cudnn-devel-ubuntu24.04", "12.8.1-cudnn-runtime-ubuntu22.04"]
)
def test_bare_cudnn_tag_means_cudnn9(kb: KnowledgeBase, tag: str) -> None:
    info = kb.base_image(f"nvidia/cuda:{tag}")
    assert info is not None and info.status == "available", info
    assert info.cudnn == "9"
    assert "base_images.yaml#nvidia/cuda:12." in info.cite()


def test_numbered_and_missing_cudnn_tags_unchanged(kb: KnowledgeBase) -> None:
    cudnn8 = kb.base_image("nvidia/cuda:11.8.0-cudnn8-runtime-ubuntu22.04")
    assert cudnn8 is not None and cudnn8.cudnn == "8" and cudnn8.status == "available"
    plain = kb.base_image("nvidia/cuda:12.4.1-runtime-ubuntu22.04")
    assert plain is not None and plain.cudnn is None
    # a bare -cudnn- tag where none was published (12.1 has cudnn8 tags only) stays unknown
    wrong = kb.base_image("nvidia/cuda:12.1.1-cudnn-runtime-ubuntu22.04")
    assert wrong is not None and wrong.status == "unknown" and wrong.cudnn is None


def test_bare_cudnn_rows_must_name_their_major(tmp_path: Path) -> None:
    for path in kb_data_dir().glob("*.yaml"):
        (tmp_path / path.name).write_text(path.read_text())
    doc = yaml.safe_load((tmp_path / "base_images.yaml").read_text())
    row = next(r for r in doc["cuda_images"] if r["cuda"] == "12.4")
    del row["cudnn_bare"]
    (tmp_path / "base_images.yaml").write_text(yaml.safe_dump(doc))
    assert any("cudnn_bare" in p and "12.4" in p for p in load_kb(tmp_path).problems())


@pytest.mark.parametrize(
    ("query", "name", "cc"),
    [
        ("4090", "GeForce RTX 4090", "8.9"),
        ("1080", "GeForce GTX 1080", "6.1"),
        ("950", "GeForce GTX 950", "5.2"),
        ("A6000", "RTX A6000", "8.6"),
        ("86", "compute capability 8.6", "8.6"),
        ("sm_86", "compute capability 8.6", "8.6"),
        ("sm_120", "compute capability 12.0", "12.0"),
        ("120", "compute capability 12.0", "12.0"),
        ("8.0", "compute capability 8.0", "8.0"),
    ],
)
def test_gpu_query_number_or_compute_capability(kb: KnowledgeBase, query: str, name: str, cc: str) -> None:
    gpu = kb.gpu(query)
    assert gpu is not None and (gpu.name, gpu.compute_capability) == (name, cc)


@pytest.mark.parametrize("query", ["sm_4090", "130", "9999", "08", "0.5"])
def test_implausible_compute_capability_is_not_one(kb: KnowledgeBase, query: str) -> None:
    assert kb.gpu(query) is None
