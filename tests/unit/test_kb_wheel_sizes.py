"""nvidia_wheel_files.yaml holds every NVIDIA wheel the profiles pin, each file with URL, sha256 and PyPI's size;
the refresh tool's file selection reads a recorded PEP 691/700 index page."""

from __future__ import annotations

from pathlib import Path

from envgen.kb import KnowledgeBase
from tools.kbrefresh.wheel_sizes import profile_pins, release_files

ROOT = Path(__file__).resolve().parents[2]


def test_every_profile_pin_has_its_files(kb: KnowledgeBase) -> None:
    pins = profile_pins(ROOT / "profiles")
    assert ("nvidia-cudnn-cu11", "8.7.0.84") in pins
    have = {(row.name, row.version) for row in kb.nvidia_wheel_files}
    assert set(pins) <= have
    for row in kb.nvidia_wheel_files:
        assert row.url.endswith("/" + row.filename) and len(row.sha256) == 64 and row.size > 0


def test_release_files_keeps_linux_x86_64_wheels_of_the_release() -> None:
    # entries as https://pypi.org/simple/nvidia-cudnn-cu11/ served them on 2026-12-03 (PEP 691 JSON, api 1.1)
    url = "https://files.pythonhosted.org/packages/0b/f6/921e080645b9e66fbf7567b5aa1741bcded69862f42f1dce796883c3345c/"
    sha = "b3e062498fbbb1c1930435a6a454c1b41c903e1e65b7063bd2b4021e8285408e"
    index = {"files": [
        {"filename": "nvidia_cudnn_cu11-8.7.0.84-py3-none-manylinux1_x86_64.whl", "size": 728455279,
         "hashes": {"sha256": sha}, "url": url + "nvidia_cudnn_cu11-8.7.0.84-py3-none-manylinux1_x86_64.whl"},
        {"filename": "nvidia_cudnn_cu11-8.7.0.84-py3-none-win_amd64.whl", "size": 1, "hashes": {"sha256": sha},
         "url": url + "x.whl"},
        {"filename": "nvidia_cudnn_cu11-8.6.0.163-py3-none-manylinux1_x86_64.whl", "size": 2,
         "hashes": {"sha256": sha}, "url": url + "y.whl"},
    ]}
    rows = release_files(index, "nvidia-cudnn-cu11", "8.7.0.84", "2026-12-03")
    assert [(r["filename"], r["size"], r["sha256"]) for r in rows] == [
        ("nvidia_cudnn_cu11-8.7.0.84-py3-none-manylinux1_x86_64.whl", 728455279, sha)]
