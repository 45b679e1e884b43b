"""The validated-KB cache: same knowledge base as a fresh load, keyed by the data files, safe to race."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from envgen.cache import cache_dir
from envgen.kb import load_kb
from envgen.kb.cache import cache_key, load_kb_cached
from envgen.paths import kb_data_dir


def _copy_data(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    shutil.copytree(kb_data_dir(), data)
    return data


def test_cached_kb_equals_fresh_load(tmp_path: Path) -> None:
    fresh = load_kb()
    first = load_kb_cached(tmp_path / "c")
    assert list((tmp_path / "c").glob("kb-*.pickle")), "the first load writes the cache"
    second = load_kb_cached(tmp_path / "c")
    assert first == fresh and second == fresh


def test_editing_a_data_file_changes_the_key_and_the_answer(tmp_path: Path) -> None:
    data = _copy_data(tmp_path)
    before = cache_key(data)
    load_kb_cached(tmp_path / "c", data)
    path = data / "cudnn.yaml"
    path.write_text(path.read_text().replace('version: "9.5.1"', 'version: "9.5.2"'))
    assert cache_key(data) != before
    kb = load_kb_cached(tmp_path / "c", data)
    assert kb.cudnn("9.5.2") is not None and kb.cudnn("9.5.2").version == "9.5.2"  # type: ignore[union-attr]
    assert len(list((tmp_path / "c").glob("kb-*.pickle"))) == 1, "the stale entry is removed"


def test_a_torn_cache_file_is_ignored_and_rewritten(tmp_path: Path) -> None:
    load_kb_cached(tmp_path / "c")
    (target,) = (tmp_path / "c").glob("kb-*.pickle")
    target.write_bytes(b"\x80\x05garbage")
    assert load_kb_cached(tmp_path / "c") == load_kb()
    assert target.read_bytes()[:2] == b"\x80\x05" and len(target.read_bytes()) > 1000


def test_unwritable_cache_dir_still_loads(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert load_kb_cached(blocker / "sub") == load_kb()


def test_cache_dir_follows_env() -> None:
    assert cache_dir({"ENVGEN_NO_CACHE": "1", "ENVGEN_CACHE_DIR": "/x"}) is None
    assert cache_dir({"ENVGEN_CACHE_DIR": "/x"}) == Path("/x")
    assert cache_dir({"XDG_CACHE_HOME": "/c", "HOME": "/h"}) == Path("/c/envgen")
    assert cache_dir({"HOME": "/h"}) == Path("/h/.cache/envgen")


def test_concurrent_writers_leave_one_readable_file(tmp_path: Path) -> None:
    """Eight processes fill the same empty cache at once; every one gets the KB and the file is whole."""
    code = (
        "import sys; from pathlib import Path; from envgen.kb.cache import load_kb_cached; "
        "kb = load_kb_cached(Path(sys.argv[1])); print(len(kb.pytorch))"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(tmp_path / "c")], stdout=subprocess.PIPE, text=True)
        for _ in range(8)
    ]
    outs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert len(set(outs)) == 1 and int(outs[0]) == len(load_kb().pytorch)
    assert len(list((tmp_path / "c").glob("kb-*.pickle"))) == 1
    assert not list((tmp_path / "c").glob(".kb-*.tmp"))
    assert load_kb_cached(tmp_path / "c") == load_kb()
