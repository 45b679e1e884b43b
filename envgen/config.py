"""User configuration: ``$ENVGEN_CONFIG`` or ``~/.config/envgen/config.yaml``.

A small strict model: package mirrors (the same model as a profile's ``mirrors``; user values
fill or override the profile's), the default registry, where envgen keeps its state, and the
CA bundle handed to builds as the BuildKit secret ``ca_bundle``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import field
from pathlib import Path, PurePath
from typing import Annotated, Any, Literal

from envgen.cache import cache_dir
from envgen.errors import InputError
from envgen.profile.model import Mirrors
from envgen.records import Check, Length, Matches, Record

DEFAULT_NAMESPACE = "envgen"
NAMESPACE_ENV = "ENVGEN_NAMESPACE"
# How GPUs reach containers: auto (the NVIDIA runtime where the engine has it, else CDI), or forced.
# $ENVGEN_GPU_ROUTE (and the --gpu-route option, which sets it for one command) overrides the config.
GPU_ROUTE_ENV = "ENVGEN_GPU_ROUTE"
GPU_ROUTES = ("auto", "runtime", "cdi")
# Docker's repository grammar (distribution/reference): path components of lower-case letters and
# digits, separated inside by one '.', one or two '_', or any number of '-'; components joined by '/'.
# A namespace is the part before the profile name (`<namespace>/<profile>:<hash>`), so no host, no tag.
_COMPONENT = r"[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*"
NAMESPACE_PATTERN = rf"^{_COMPONENT}(?:/{_COMPONENT})*$"
MAX_NAMESPACE_LENGTH = 128
SYSTEM_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
# Environment variables that name a CA bundle, in the order they are consulted.
CA_ENV_VARS = ("PIP_CERT", "REQUESTS_CA_BUNDLE", "SSL_CERT_FILE")


Registry = Annotated[str, Matches(re.compile(r"^[a-z0-9.-]+(:[0-9]+)?(/[a-z0-9._-]+)*$"),
                                  "registry (host[:port][/path], such as ghcr.io/alice/envgen)")]


def _default_state_dir() -> Path:
    return Path("~/.local/share/envgen").expanduser()


def _as_path(value: object) -> Path:
    """A path written as text (or given as one) becomes a Path, as pydantic's own lax Path does; this one is a
    module-level function, so the compiled validator can be kept between runs (``envgen.compiled``)."""
    if isinstance(value, str | PurePath):
        return Path(value)
    from pydantic_core import PydanticCustomError

    raise PydanticCustomError("path_type", "Input is not a valid path for <class 'pathlib.Path'>")


LaxPath = Annotated[Path, Check(_as_path, mode="plain")]


class UserConfig(Record):
    # lax: state_dir and ca_bundle are written as text and become paths
    __pydantic_config__ = {"extra": "forbid"}  # noqa: RUF012 (pydantic's config, read only)

    mirrors: Mirrors = field(default_factory=Mirrors)
    # No default: envgen owns no registry of the user's; push/pull need one (--registry or this), and exports
    # without one name the local image and say so.
    registry: Registry | None = None
    namespace: Annotated[str, Length(max=MAX_NAMESPACE_LENGTH),
                         Matches(re.compile(NAMESPACE_PATTERN), "image namespace")] = DEFAULT_NAMESPACE
    state_dir: LaxPath = field(default_factory=_default_state_dir)
    ca_bundle: LaxPath | None = None
    gpu_route: Literal["auto", "runtime", "cdi"] = "auto"


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


def _check_config(path: Path) -> Callable[[str], None]:
    """The limits of a profile's YAML, for the config's text (checked when it is parsed: envgen.parsed)."""
    def check(text: str) -> None:
        from envgen.profile.yamlsrc import MAX_FILE_BYTES, check_structure  # with PyYAML: only for a new text

        if len(text.encode("utf-8")) > MAX_FILE_BYTES:
            raise InputError(f"user config {path} is larger than {MAX_FILE_BYTES // 1024} KiB")
        check_structure(text, path, InputError)
    return check


def _read_yaml(path: Path, env: Mapping[str, str]) -> dict[str, Any]:
    from envgen.parsed import parse_yaml, yaml_error

    try:
        text = path.read_text(encoding="utf-8")
        data = parse_yaml(text, cache_dir(env), check=_check_config(path))  # no PyYAML for a text parsed before
    except OSError as exc:
        raise InputError(f"cannot read user config {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"user config {path} is not UTF-8 text (byte {exc.start})") from None
    except yaml_error() as exc:
        raise InputError(f"user config {path} is not valid YAML: {' '.join(str(exc).split())}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise InputError(f"user config {path} must be a mapping (key: value), not {type(data).__name__}")
    return data


def check_namespace(value: str, origin: str) -> str:
    """``value`` if it is a valid image namespace, else one InputError naming where it came from."""
    if len(value) > MAX_NAMESPACE_LENGTH or not re.fullmatch(NAMESPACE_PATTERN.strip("^$"), value):
        raise InputError(
            f"{origin} = {value!r} is not a valid image namespace",
            fix="use lower-case letters, digits and single '.', '_' or '-' between them, parts joined by '/' "
                f"(e.g. {DEFAULT_NAMESPACE} or alice/envgen)",
        )
    return value


def check_gpu_route(value: str, origin: str) -> str:
    if value not in GPU_ROUTES:
        raise InputError(f"{origin} = {value!r} is not a GPU route",
                         fix="use auto (the NVIDIA runtime where the engine has it, else CDI), runtime or cdi")
    return value


def load_config(env: Mapping[str, str] | None = None) -> UserConfig:
    """Load the user config; a missing file gives the defaults. ``$ENVGEN_CONFIG`` naming a
    missing file is an error (the user asked for that file). ``$ENVGEN_NAMESPACE`` overrides the
    config's ``namespace`` (the image repository prefix every image envgen makes goes under)."""
    env = os.environ if env is None else env
    path = config_path(env)
    data: dict[str, Any] = {}
    if path.is_file():
        data = _read_yaml(path, env)
    elif env.get("ENVGEN_CONFIG"):
        raise InputError(f"ENVGEN_CONFIG names {path}, which does not exist",
                         fix="create it or unset ENVGEN_CONFIG")
    if isinstance(data.get("namespace"), str):
        check_namespace(data["namespace"], f"user config {path}: namespace")
    if env.get(NAMESPACE_ENV) is not None:
        data["namespace"] = check_namespace(env[NAMESPACE_ENV], NAMESPACE_ENV)
    if env.get(GPU_ROUTE_ENV):
        data["gpu_route"] = check_gpu_route(env[GPU_ROUTE_ENV], GPU_ROUTE_ENV)
    for key in ("state_dir", "ca_bundle"):
        if isinstance(data.get(key), str):
            data[key] = str(Path(data[key]).expanduser())
    from envgen.compiled import validated

    try:  # a config validated before from the same data is kept (envgen.compiled): no pydantic_core is imported
        config = validated(cache_dir(env), UserConfig, data, str(_default_state_dir()))  # the default: from $HOME
    except Exception as exc:
        from pydantic_core import ValidationError  # pydantic's own (re-exported): no import of pydantic

        if not isinstance(exc, ValidationError):
            raise
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
