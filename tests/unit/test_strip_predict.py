"""strip.sh reads from a file's headers, before stripping it, whether GNU strip would change what the loader maps
(then the file is kept as it was, without writing a stripped copy only to throw it away): on real shared objects of
envgen's own environment over 1 MiB, the prediction says what the host's strip (Debian's binutils, scripts/host-setup)
then does. The wheels of the bench profiles (torch's libtorch_cpu.so, numpy's and scipy's patchelf'd libraries):
bench/strip_predict.py, figures in strip.sh's `moves`."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bench():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("strip_predict", ROOT / "bench/strip_predict.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_prediction_agrees_with_strip_on_real_shared_objects(tmp_path: Path) -> None:
    assert shutil.which("strip"), "binutils on the host (scripts/host-setup)"
    bench = _bench()
    fn = bench.strip_sh_functions()
    site = Path(sys.prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    found = []
    for path in sorted(site.rglob("*.so")):
        if path.stat().st_size > bench.BIG and not path.is_symlink():
            verdict = bench.verdicts(str(path), fn, str(tmp_path))
            if verdict is not None:
                found.append((path.relative_to(site).as_posix(), *verdict))
    assert len(found) >= 5, found  # cryptography, pyyaml, zstandard, msgpack, rattler... each with its symbol table
    assert [row for row in found if row[1] != row[2]] == [], found
