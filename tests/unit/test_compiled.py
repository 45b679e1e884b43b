"""Compiled validators and serialisers kept between runs (envgen.compiled): a process that restores them validates
and dumps as one that generated the schemas, without importing pydantic; a file whose modules changed is not used."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from envgen import compiled
from envgen.config import UserConfig
from envgen.plan.expected import Expected
from envgen.profile.loader import LoadedProfile
from envgen.profile.model import Mirrors

CLASSES = (UserConfig, LoadedProfile, Mirrors, Expected)
PROBE = """
import sys
from envgen import compiled
from envgen.config import UserConfig
from envgen.plan.expected import Expected
from envgen.profile.loader import LoadedProfile
from envgen.profile.model import Mirrors

restored = compiled.restore(None if sys.argv[1] == "-" else __import__("pathlib").Path(sys.argv[1]),
                            (UserConfig, LoadedProfile, Mirrors, Expected))
print("RESTORED", restored)
for data in ({"state_dir": "/x", "namespace": "a/b"}, {"state_dir": 5}, {"ca_bundle": [1]}, {"bogus": 1},
             {"mirrors": {"pip_index_url": "https://pypi.example/simple", "apt_mirror": 3}}):
    try:
        print(UserConfig.model_validate(data))
    except Exception as exc:  # the message as the CLI shows it
        print(type(exc).__name__, exc.errors(include_url=False))
mirrors = Mirrors.model_validate({"pip_index_url": "https://pypi.example/simple",
                                  "registries": {"docker.io": "m:5000"}})
print(mirrors.model_dump(), mirrors.model_dump(mode="json", exclude_defaults=True))
print("PYDANTIC", "pydantic" in sys.modules)
"""


def _probe(directory: Path | None) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, str(directory) if directory else "-"], capture_output=True,
                          text=True, check=True)
    return done.stdout.splitlines()


def test_restored_validators_answer_as_generated_ones_without_pydantic(tmp_path: Path) -> None:
    assert compiled.restore(tmp_path, CLASSES) is False  # nothing kept yet
    compiled.keep(tmp_path, CLASSES)
    assert len(list(tmp_path.glob("compiled-*.pickle"))) == 1
    generated, restored = _probe(None), _probe(tmp_path)
    assert generated[0] == "RESTORED False" and restored[0] == "RESTORED True"
    assert generated[-1] == "PYDANTIC True" and restored[-1] == "PYDANTIC False"
    assert restored[1:-1] == generated[1:-1]
    assert "Input is not a valid path for <class 'pathlib.Path'>" in generated[2]  # pydantic's own message, kept


def test_a_file_whose_modules_changed_is_not_used(tmp_path: Path) -> None:
    compiled.keep(tmp_path, CLASSES)
    [target] = tmp_path.glob("compiled-*.pickle")
    entry = pickle.loads(target.read_bytes())
    assert any(path.endswith("profile/model.py") for path, _ in entry["files"])  # a nested record's module
    # and its package's other modules, where the profile's patterns are written (profile/values.py)
    assert any(path.endswith("profile/values.py") for path, _ in entry["files"])
    entry["files"][0] = (entry["files"][0][0], "0" * 64)
    target.write_bytes(pickle.dumps(entry))
    assert compiled.restore(tmp_path, CLASSES) is False
    target.write_bytes(b"torn")
    assert compiled.restore(tmp_path, CLASSES) is False
    assert compiled.restore(None, CLASSES) is False


VALIDATED = """
import sys
from pathlib import Path
from envgen import compiled
from envgen.config import UserConfig

config = compiled.validated(Path(sys.argv[1]), UserConfig, {"state_dir": "/x", "namespace": "a/b"})
print(config.state_dir, config.namespace, "pydantic_core" in sys.modules)
"""


def test_a_record_validated_before_from_the_same_data_is_kept(tmp_path: Path) -> None:
    """`envgen run` reads the user config validated before (compiled.validated): the same data and code give the
    record without importing pydantic_core; other data is validated, invalid data raises pydantic's own error and
    is never kept, and an entry whose modules changed is validated again."""
    import pydantic_core

    data = {"state_dir": "/x", "namespace": "a/b"}
    made = compiled.validated(tmp_path, UserConfig, data)
    assert made == UserConfig.model_validate(data)
    assert len(list(tmp_path.glob("validated-*.pickle"))) == 1
    done = subprocess.run([sys.executable, "-c", VALIDATED, str(tmp_path)], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["/x", "a/b", "False"], done.stderr
    assert compiled.validated(tmp_path, UserConfig, {**data, "namespace": "c"}).namespace == "c"
    with pytest.raises(pydantic_core.ValidationError):
        compiled.validated(tmp_path, UserConfig, {"state_dir": 5})
    assert len(list(tmp_path.glob("validated-*.pickle"))) == 2
    for path in tmp_path.glob("validated-*.pickle"):  # a module changed since: validated afresh, kept again
        entry = pickle.loads(path.read_bytes())
        entry["files"][0] = (entry["files"][0][0], "0" * 64)
        entry["value"] = UserConfig.model_validate({"namespace": "stale"})
        path.write_bytes(pickle.dumps(entry))
    assert compiled.validated(tmp_path, UserConfig, data).namespace == "a/b"


def test_a_kept_config_follows_the_home_its_default_state_dir_is_under(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The config's default state_dir is made from $HOME when it is validated: load_config names it as an input of
    the kept record, so another home (a shared cache directory) never gets the first one's state directory."""
    from envgen.config import load_config

    env = {"ENVGEN_CACHE_DIR": str(tmp_path / "cache"), "ENVGEN_CONFIG": str(tmp_path / "config.yaml")}
    (tmp_path / "config.yaml").write_text("namespace: a/b\n", encoding="utf-8")
    for home in ("alice", "bob", "alice"):
        monkeypatch.setenv("HOME", str(tmp_path / home))
        config = load_config(env)
        assert config.state_dir == tmp_path / home / ".local" / "share" / "envgen" and config.namespace == "a/b"
    assert len(list((tmp_path / "cache").glob("validated-*.pickle"))) == 2



def test_a_kept_config_keeps_the_order_its_data_gives(tmp_path: Path) -> None:
    """The data's JSON text keys the kept record in the data's own order: a config whose mappings were reordered is
    a new record in the new order, equal to a fresh validation, never the one kept for the old order (a review of
    #41 found the key sorted them: the served record kept the first order; the render sorts the channel mirrors and
    looks registries up by key, so what showed it was the record itself: its dump, its iteration)."""
    first = {"mirrors": {"conda_channels": {"a": "https://m/a", "b": "https://m/b"},
                         "registries": {"docker.io": "m.example.org", "nvcr.io": "m.example.org/nvcr"}}}
    again = {"mirrors": {"conda_channels": {"b": "https://m/b", "a": "https://m/a"},
                         "registries": {"nvcr.io": "m.example.org/nvcr", "docker.io": "m.example.org"}}}
    kept = compiled.validated(tmp_path, UserConfig, first)
    served = compiled.validated(tmp_path, UserConfig, again)
    assert list(kept.mirrors.conda_channels) == ["a", "b"] and list(kept.mirrors.registries)[0] == "docker.io"
    assert list(served.mirrors.conda_channels) == ["b", "a"] and list(served.mirrors.registries)[0] == "nvcr.io"
    assert served.model_dump() == UserConfig.model_validate(again).model_dump()
    # served again from the store: the same order, and the keys the data gave (merge_mirrors reads them)
    twice = compiled.validated(tmp_path, UserConfig, again)
    assert list(twice.mirrors.conda_channels) == ["b", "a"]
    assert twice.mirrors.model_fields_set == UserConfig.model_validate(again).mirrors.model_fields_set == {
        "conda_channels", "registries"}
    assert len(list(tmp_path.glob("validated-*.pickle"))) == 2
