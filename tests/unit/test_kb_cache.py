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


# envgen modules a KB load and its validation import that are not in the key, each with why it cannot change a row
_NOT_ROWS = {
    "envgen": "its __version__ keys every store entry (envgen.cache.Store.key)",
    "envgen.errors": "the text of a refused load: nothing is kept from a load that fails",
    "envgen.paths": "names the data directory, whose files are in the key by name and bytes",
    "envgen.imageref": "reference parsing for the queries (kb.images.parse_image), run on each call, never on a row",
}
LOADS = """
import sys
from envgen.kb.loader import load_kb
load_kb().problems()
print(" ".join(sorted(m for m in sys.modules if m == "envgen" or m.startswith("envgen."))))
"""


def test_every_input_of_a_load_is_in_the_key(tmp_path: Path, monkeypatch) -> None:
    """Review of #41 (session.kb_key): an edited KB file, row module or parser can never be served a stale KB.
    Every envgen module a load runs is in the key but those of ``_NOT_ROWS``; the data files by name and bytes, a
    new file too; the interpreter's, pydantic's and PyYAML's versions."""
    import envgen
    from envgen.kb import cache

    done = subprocess.run([sys.executable, "-c", LOADS], capture_output=True, text=True, check=True)
    root = Path(envgen.__file__).resolve().parent
    hashed = {".".join(("envgen", *p.resolve().relative_to(root).with_suffix("").parts)).removesuffix(".__init__")
              for p in cache.code_files()}
    loaded = set(done.stdout.split())
    assert {"envgen.kb.models", "envgen.kb.loader", "envgen.records"} <= loaded
    assert loaded - hashed == set(_NOT_ROWS), sorted(loaded - hashed - set(_NOT_ROWS))
    data = _copy_data(tmp_path)
    before = cache_key(data)
    (data / "new_table.yaml").write_text("{}\n", encoding="utf-8")  # a new file: the loader reads every *.yaml
    assert cache_key(data) != before
    (data / "new_table.yaml").unlink()
    assert cache_key(data) == before
    monkeypatch.setattr(cache, "parser_version", lambda: b"__version__ = '99.0'")
    assert cache_key(data) != before  # another PyYAML: another key
    assert b"__version__" in cache.package_file("yaml")


def test_a_kb_edited_after_its_key_was_taken_is_not_kept_under_that_key(tmp_path: Path) -> None:
    """A session takes the KB's key first (``Session.kb_key``: a run the caches serve loads no KB) and loads under it
    later; a data file edited in between was read, and kept under the old key, so that the old files, back again,
    were served the edited KB. Kept only under the key of what was read now."""
    from envgen.kb.cache import kb_key, load_kb_keyed

    data, store = _copy_data(tmp_path), tmp_path / "c"
    old_key = kb_key(store, data)
    path = data / "cudnn.yaml"
    original = path.read_text()
    path.write_text(original.replace('version: "9.5.1"', 'version: "9.5.2"'))
    edited, key = load_kb_keyed(store, data, key=old_key)  # the edit landed between the key and the load
    assert key == old_key and any(r.version == "9.5.2" for r in edited.cudnn_releases)
    assert not list(store.glob("kb-*.pickle")), "nothing kept under a key that does not describe what was read"
    path.write_text(original)
    again = load_kb_cached(store, data)
    assert not any(r.version == "9.5.2" for r in again.cudnn_releases) and again == load_kb(data) != edited
