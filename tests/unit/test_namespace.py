"""The image namespace (config key `namespace`, `$ENVGEN_NAMESPACE`), and the suite's own isolation."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from envgen.config import DEFAULT_NAMESPACE, load_config
from envgen.errors import InputError
from envgen.pipeline.naming import alias_ref, image_ref, in_namespace
from envgen.pipeline.publish import remote_ref
from tests.isolation import guarded_ref


def test_default_namespace(tmp_path: Path) -> None:
    config = load_config({"HOME": str(tmp_path)})
    assert config.namespace == DEFAULT_NAMESPACE == "envgen"
    assert image_ref(config, "cpu-smoke", "a" * 64) == "envgen/cpu-smoke:aaaaaaaaaaaa"
    assert alias_ref(config, "cpu-smoke") == "envgen/cpu-smoke:latest"


def test_config_key_and_environment_variable(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("namespace: alice/envgen\n", encoding="utf-8")
    env = {"ENVGEN_CONFIG": str(path)}
    assert load_config(env).namespace == "alice/envgen"
    assert load_config({**env, "ENVGEN_NAMESPACE": "team.ml"}).namespace == "team.ml"  # the variable wins
    config = load_config({**env, "ENVGEN_NAMESPACE": "team.ml"})
    assert image_ref(config, "x", "b" * 64) == "team.ml/x:bbbbbbbbbbbb"
    assert in_namespace(config, "team.ml/x:latest") and not in_namespace(config, "envgen/x:latest")
    assert not in_namespace(config, "team.ml/sub/x:1")


@pytest.mark.parametrize("value", ["", "Envgen", "envgen/", "/envgen", "a//b", "a:5000/x", "a b", "-x", "x-",
                                   "a..b", "a___b", "x" * 129, "envgen\n", "envgen:latest", "ëx"])
def test_bad_namespace_is_one_line(tmp_path: Path, value: str) -> None:
    with pytest.raises(InputError) as info:
        load_config({"HOME": str(tmp_path), "ENVGEN_NAMESPACE": value})
    line = info.value.one_line()
    assert "ENVGEN_NAMESPACE" in line and "not a valid image namespace" in line and "\n" not in line
    path = tmp_path / "config.yaml"
    path.write_text(f"namespace: {value!r}\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_config({"ENVGEN_CONFIG": str(path)})
    assert f"{path}: namespace" in info.value.one_line()


@pytest.mark.parametrize("value", ["envgen", "a", "my-team/envgen", "a.b_c__d---e/f9", "envgen-test-0a1b2c"])
def test_good_namespaces(tmp_path: Path, value: str) -> None:
    assert load_config({"HOME": str(tmp_path), "ENVGEN_NAMESPACE": value}).namespace == value


def test_remote_name_drops_the_local_namespace() -> None:
    assert remote_ref("localhost:5000/pub", "alice/envgen/cpu-smoke:abc") == "localhost:5000/pub/cpu-smoke:abc"
    assert remote_ref("ghcr.io/o/e/", "envgen/x:1") == "ghcr.io/o/e/x:1"


def test_the_suite_runs_in_its_own_namespace_and_state_dir() -> None:
    config = load_config()
    assert config.namespace == os.environ["ENVGEN_NAMESPACE"] != DEFAULT_NAMESPACE
    assert config.namespace.startswith("envgen-test-")
    assert not str(config.state_dir).startswith(str(Path("~").expanduser() / ".local"))


def test_guarded_refs() -> None:
    ns = ("envgen", "alice/envgen")
    assert guarded_ref("envgen/cpu-smoke:latest", ns) and guarded_ref("localhost:5000/envgen/x:1", ns)
    assert guarded_ref("alice/envgen/x:1", ns) and guarded_ref("debian:bookworm-slim", ns)
    assert not guarded_ref("envgen-test-abc/x:1", ns) and not guarded_ref("localhost:5000/envgen-test/x:1", ns)
