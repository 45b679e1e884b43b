"""User configuration: ``$ENVGEN_CONFIG`` or ``~/.config/envgen/config.yaml``.

A small strict model: package mirrors (the same model as a profile's ``mirrors``; user values
fill or override the profile's), the default registry, where envgen keeps its state, and the
CA bundle handed to builds as the BuildKit secret ``ca_bundle``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from envgen.errors import InputError
from envgen.profile.model import Mirrors

DEFAULT_REGISTRY = "ghcr.io/envgen-dev/envgen"
SYSTEM_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
# Environment variables that name a CA bundle, in the order they are consulted.
CA_ENV_VARS = ("PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE")


class UserConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    mirrors: Mirrors = Field(default_factory=Mirrors)
    registry: str = Field(default=DEFAULT_REGISTRY, pattern=r"^[a-z0-9.-]+(:[0-9]+)?(/[a-z0-9._-]+)*$")
    state_dir: Path = Field(default_factory=lambda: Path("~/.local/share/envgen").expanduser())
    ca_bundle: Path | None = None


def config_path(env: Mapping[str, str]) -> Path:
    explicit = env.get("ENVGEN_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    base = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", "~")) / ".config")
    return Path(base).expanduser() / "envgen" / "config.yaml"


def default_ca_bundle(env: Mapping[str, str], system_bundle: Path = SYSTEM_CA_BUNDLE) -> Path | None:
    """The CA bundle the host already trusts: PIP_CERT, REQUESTS_CA_BUNDLE, SSL_CERT_FILE, then the
    system bundle if it exists."""
    for name in CA_ENV_VARS:
        value = env.get(name)
        if value and Path(value).expanduser().is_file():
            return Path(value).expanduser()
    return system_bundle if system_bundle.is_file() else None


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(f"cannot read user config {path}: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise InputError(f"user config {path} is not valid YAML: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(f"user config {path} must be a mapping (key: value), not {type(data).__name__}")
    return data


def load_config(env: Mapping[str, str] | None = None) -> UserConfig:
    """Load the user config; a missing file gives the defaults. ``$ENVGEN_CONFIG`` naming a
    missing file is an error (the user asked for that file)."""
    env = os.environ if env is None else env
    path = config_path(env)
    data: dict[str, Any] = {}
    if path.is_file():
        data = _read_yaml(path)
    elif env.get("ENVGEN_CONFIG"):
        raise InputError(f"ENVGEN_CONFIG names {path}, which does not exist",
                         fix="create it or unset ENVGEN_CONFIG")
    for key in ("state_dir", "ca_bundle"):
        if isinstance(data.get(key), str):
            data[key] = str(Path(data[key]).expanduser())
    try:
        config = UserConfig.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '(top)'}: {err['msg']}" for err in exc.errors()
        )
        raise InputError(f"user config {path}: {problems}") from exc
    if config.ca_bundle is None:
        config = config.model_copy(update={"ca_bundle": default_ca_bundle(env)})
    return config


def merge_mirrors(profile_mirrors: Mirrors, user_mirrors: Mirrors) -> Mirrors:
    """The user's values fill in or override the profile's (only fields the user set count)."""
    update = {name: getattr(user_mirrors, name) for name in user_mirrors.model_fields_set}
    merged = profile_mirrors.model_dump()
    merged.update(update)
    return Mirrors.model_validate(merged)
