"""tools.kbrefresh.pins on recorded index entries (no network), and the table it made: every exact pin of
framework_requires.yaml has its row in pinned_releases.yaml."""

from __future__ import annotations

from pathlib import Path

from envgen.kb import KnowledgeBase
from tools.kbrefresh.pins import exact_pins, served

DATA = Path(__file__).resolve().parents[2] / "envgen" / "kb" / "data"

# recorded from https://pypi.org/simple/tensorrt/ and https://pypi.org/simple/tensorrt-libs/ (PEP 691 JSON,
# 2026-12-01): the files of tensorrt 8.5.3.1 and 8.6.1.post1, the first files of tensorrt-libs (no 8.6.1)
TENSORRT = [
    {"filename": "tensorrt-8.5.3.1-cp310-none-manylinux_2_17_x86_64.whl", "requires-python": None},
    {"filename": "tensorrt-8.5.3.1-cp36-none-manylinux_2_17_x86_64.whl", "requires-python": None},
    {"filename": "tensorrt-8.5.3.1-cp37-none-manylinux_2_17_x86_64.whl", "requires-python": None},
    {"filename": "tensorrt-8.5.3.1-cp38-none-manylinux_2_17_x86_64.whl", "requires-python": None},
    {"filename": "tensorrt-8.5.3.1-cp39-none-manylinux_2_17_x86_64.whl", "requires-python": None},
    {"filename": "tensorrt-8.6.1.post1.tar.gz", "requires-python": ">=3.6"},
]
TENSORRT_LIBS = [{"filename": "tensorrt-libs-9.0.0.post11.dev1.tar.gz"},
                 {"filename": "tensorrt-libs-9.0.0.post12.dev1.tar.gz"}]


def test_wheels_per_cpython_minor_and_sdists() -> None:
    assert served(TENSORRT, "tensorrt", "8.5.3.1") == (["3.6", "3.7", "3.8", "3.9", "3.10"], False)
    assert served(TENSORRT, "tensorrt", "8.6.1.post1") == ([], True)
    assert served(TENSORRT_LIBS, "tensorrt-libs", "8.6.1") == ([], False)


def test_pure_and_abi3_wheels_serve_every_python_their_requires_python_allows() -> None:
    # the nvidia-cudnn file name as PyPI lists it; "x" is a made-up distribution in PEP 427 form (an abi3 wheel)
    files = [{"filename": "nvidia_cudnn_cu12-9.1.0.70-py3-none-manylinux2014_x86_64.whl", "requires-python": ">=3"},
             {"filename": "x-1.0-cp39-abi3-manylinux_2_28_x86_64.whl", "requires-python": ">=3.9"},
             {"filename": "x-1.0-cp39-abi3-win_amd64.whl", "requires-python": ">=3.9"}]
    assert "3.14" in served(files, "nvidia-cudnn-cu12", "9.1.0.70")[0]
    assert served(files, "x", "1.0")[0][0] == "3.9"


def test_every_exact_pin_of_the_recorded_requires_dist_has_its_row(kb: KnowledgeBase) -> None:
    have = {(row.name, row.version) for row in kb.pinned_releases}
    missing = [pin for pin in exact_pins(DATA / "framework_requires.yaml") if pin not in have]
    assert not missing, f"refresh with python -m tools.kbrefresh.pins: {missing[:5]}"
