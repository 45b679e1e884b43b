"""The size report's scan (envgen/docker/sizes.py, issue #44 item 1) counts a distribution's bytes from the files its
RECORD lists that the image still holds: the leave-out (plan/slim.py) removes files RECORD keeps listing, and those
are "left out", not bytes; a file listed twice, by two distributions or through a hard link counts once. The scan
program is the one the image's Python runs (``scan_command``), run here by this Python on a real directory tree."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from envgen.docker.sizes import MARK, scan_script


def _scan(root: Path) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-c", scan_script(5, str(root))], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    found: dict[str, object] = json.loads(next(line for line in out.splitlines() if line.startswith(MARK))[len(MARK):])
    return found


def _dist(sp: Path, name: str, lines: list[str]) -> Path:
    info = sp / f"{name}.dist-info"
    info.mkdir(parents=True)
    record = info / "RECORD"
    record.write_text("".join(f"{line},sha256=x,1\n" for line in lines) + f"{name}.dist-info/RECORD,,\n",
                      encoding="utf-8")
    return record


def test_only_files_the_image_holds_count_each_once(tmp_path: Path) -> None:
    sp = tmp_path / "opt/env/lib/python3.11/site-packages"
    (sp / "pkg/tests").mkdir(parents=True)
    (sp / "pkg/core.so").write_bytes(b"\0" * 300_000)
    (sp / "pkg/__init__.py").write_bytes(b"x" * 1_000)
    os.link(sp / "pkg/core.so", sp / "pkg/core-link.so")  # a hard link: the same bytes
    (sp / "shared").mkdir()
    (sp / "shared/__init__.py").write_bytes(b"y" * 50_000)  # a namespace file two wheels list (nvidia/__init__.py)
    listed = ["pkg/core.so", "pkg/__init__.py", "pkg/core.so", "pkg/core-link.so", "shared/__init__.py",
              "pkg/tests/test_core.py", "pkg/include/core.h", "pkg/libcore.a"]  # the last 3: left out by slim.sh
    record = _dist(sp, "pkg-1.0", listed)
    other = _dist(sp, "other-2.0", ["shared/__init__.py", "other.py"])
    (sp / "other.py").write_bytes(b"z" * 2_000)
    found = _scan(tmp_path)
    dists, gone = found["dists"], found["gone"]
    assert isinstance(dists, dict) and isinstance(gone, dict)
    meta = record.stat().st_size + other.stat().st_size
    # every byte the distributions hold, once: core.so (its link and its second line not again), __init__.py,
    # the shared file once, other.py, the RECORDs; nothing for the three files slim.sh removed
    assert dists["pkg-1.0"] + dists["other-2.0"] == 300_000 + 1_000 + 50_000 + 2_000 + meta, dists
    assert dists["pkg-1.0"] >= 301_000 + record.stat().st_size and dists["other-2.0"] >= 2_000
    assert gone == {"pkg-1.0": 3}, gone


def test_the_report_says_what_each_distribution_had_left_out() -> None:
    from envgen.pipeline.sizes import report_text

    report = {"image": "sha256:" + "0" * 64, "tags": ["envgen/x:1"], "size_bytes": 2_000_000,
              "layers": [{"size_bytes": 2_000_000, "step": "RUN x"}],
              "distributions": [{"name": "numpy-2.1.3", "size_bytes": 1_500_000, "files_left_out": 412}],
              "files": [{"path": "/opt/env/x.so", "size_bytes": 900_000}], "could_leave_out": {"tests": 0}}
    text = report_text(report)
    row = next(line for line in text.splitlines() if "numpy-2.1.3" in line)
    assert row.split() == ["1.5", "MB", "numpy-2.1.3", "412"], row
    assert "files it lists that the image does not" in text
