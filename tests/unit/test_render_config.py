"""User configuration (envgen.config): file location, strictness, CA bundle default, mirror merge."""

from __future__ import annotations

from pathlib import Path

import pytest

from envgen.config import default_ca_bundle, load_config, merge_mirrors
from envgen.errors import InputError
from envgen.profile.model import Mirrors


def test_defaults_without_a_file(tmp_path: Path) -> None:
    config = load_config({"HOME": str(tmp_path)})
    assert config.registry is None  # issue 32 item 5: envgen owns no registry of the user's, so none by default
    assert config.mirrors == Mirrors()


def test_reads_envgen_config(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text("x")
    path = tmp_path / "c.yaml"
    path.write_text(
        "registry: localhost:5000/envgen\n"
        f"ca_bundle: {ca}\n"
        "state_dir: ~/state\n"
        "mirrors:\n  pip_index_url: https://pypi.example/simple\n  wheelhouse: /opt/wheels\n"
    )
    config = load_config({"ENVGEN_CONFIG": str(path), "HOME": str(tmp_path)})
    assert config.registry == "localhost:5000/envgen"
    assert config.ca_bundle == ca
    assert config.mirrors.pip_index_url == "https://pypi.example/simple"
    assert config.state_dir == Path("~/state").expanduser()


def test_xdg_location(tmp_path: Path) -> None:
    (tmp_path / "envgen").mkdir()
    (tmp_path / "envgen" / "config.yaml").write_text("registry: reg.example/x\n")
    assert load_config({"XDG_CONFIG_HOME": str(tmp_path)}).registry == "reg.example/x"


@pytest.mark.parametrize(
    "text, match",
    [
        ("registy: typo\n", "registy"),
        ("mirrors:\n  pip_index_url: 'not a url'\n", "pip_index_url"),
        ("- a list\n", "mapping"),
        ("registry: [unclosed\n", "YAML"),
    ],
)
def test_bad_config_is_an_input_error(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match=match):
        load_config({"ENVGEN_CONFIG": str(path)})


def test_missing_explicit_config_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="does not exist"):
        load_config({"ENVGEN_CONFIG": str(tmp_path / "nope.yaml")})


def test_ca_bundle_default_order(tmp_path: Path) -> None:
    pip_cert, ssl_file, system = (tmp_path / n for n in ("pip.pem", "ssl.pem", "system.pem"))
    for p in (pip_cert, ssl_file, system):
        p.write_text("x")
    env = {"PIP_CERT": str(pip_cert), "SSL_CERT_FILE": str(ssl_file)}
    assert default_ca_bundle(env, system) == pip_cert
    assert default_ca_bundle({"SSL_CERT_FILE": str(ssl_file)}, system) == ssl_file
    assert default_ca_bundle({"PIP_CERT": str(tmp_path / "missing")}, system) == system
    assert default_ca_bundle({}, tmp_path / "absent.pem") is None


def test_user_mirrors_fill_and_override_profile_mirrors() -> None:
    profile = Mirrors(pip_index_url="https://profile.example/simple", apt_mirror="http://apt.example/debian")
    user = Mirrors(pip_index_url="https://user.example/simple", http_proxy="http://proxy.example:3128")
    merged = merge_mirrors(profile, user)
    assert merged.pip_index_url == "https://user.example/simple"
    assert merged.apt_mirror == "http://apt.example/debian"
    assert merged.http_proxy == "http://proxy.example:3128"


def test_wheelhouse_with_framework_wheels_drops_framework_index(tmp_path: Path) -> None:
    from envgen.plan.lockfile import wheelhouse_covers
    from envgen.render.plan import build_args

    pins = ["tensorflow-cpu==2.12.0", "torch==2.13.0+cpu"]
    assert not wheelhouse_covers(tmp_path, pins)
    (tmp_path / "torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"")
    assert wheelhouse_covers(tmp_path, pins)
    assert not wheelhouse_covers(tmp_path, ["torch==2.1.2+cu118"])
    assert not wheelhouse_covers(None, pins)
    from envgen.profile.model import Mirrors

    assert build_args(Mirrors(), False, framework_index=False) == {"ENVGEN_FRAMEWORK_INDEX": "0"}
    assert build_args(Mirrors(), False) == {}
