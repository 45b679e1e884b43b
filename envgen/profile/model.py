"""The profile model: strict (unknown keys are errors), typed, and safe to put in a Dockerfile.

Every string that can reach a Dockerfile, a shell line or a YAML file is matched against a
pattern that admits no quoting, whitespace, ``$``, backtick, ``;``, ``&``, ``|`` or newline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema, core_schema

from envgen.errors import shown
from envgen.profile.normalise import normalise
from envgen.profile.requirements import SAFE_RE, PipLine, RefusedLine, parse_line

# model_validate(data, context={NORMALISED: True}): the data went through normalise already (load_profile)
NORMALISED = "envgen.normalised"
# model_validate(data, context={FRAMEWORK_NAMES: kb.framework_names}): the framework distributions' names to lift
# and refuse (without it, the validator reads kb/data/framework_distributions.yaml alone)
FRAMEWORK_NAMES = "envgen.framework_names"

# --- value patterns -------------------------------------------------------------------------

# A Docker repository path component (profiles become `envgen/<name>:<hash>`): lower-case
# alphanumerics joined by one '.', one or two '_', or dashes; at most 63 characters.
NAME_RE = re.compile(r"^(?=.{1,63}$)[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$")
# major.minor[.patch[.build]]
VERSION_RE = re.compile(r"^\d+(\.\d+){1,3}$")
# framework version with an optional local build variant: 1.7.1+cu101, 2.13.0+cpu
FRAMEWORK_VERSION_RE = re.compile(r"^\d+(\.\d+){1,3}(\+[a-z0-9.]+)?$")
# image reference: [registry[:port]/]path[:tag][@sha256:hex]
IMAGE_RE = re.compile(
    r"^(?:[a-z0-9.-]+(?::[0-9]+)?/)?[a-z0-9]+(?:[._/-][a-z0-9]+)*"
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$"
)
# conda spec pinned exactly: [channel::]name=version[=build]
CONDA_PIN_RE = re.compile(r"^([a-z0-9._-]+::)?[A-Za-z0-9][A-Za-z0-9._-]*=[A-Za-z0-9.+_-]+(=[A-Za-z0-9._+-]+)?$")
# apt package, optionally pinned: name[=version]
APT_RE = re.compile(r"^[a-z0-9][a-z0-9.+-]+(=[A-Za-z0-9.+:~_-]+)?$")
CHANNEL_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
ENV_KEY_RE = re.compile(r"^[A-Z_][A-Z0-9_]*$")
ENV_VALUE_RE = re.compile(r"^[A-Za-z0-9_.,:/=+@%-]*$")
# URLs reach shell lines (sed, pip, proxies): no '#', '&', ';', quotes, brackets or spaces.
URL_RE = re.compile(r"^(https?|file)://[A-Za-z0-9._~:/?=%+@-]+$")
GPU_TARGET_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._()-]{0,63}$")
# A registry host (docker.io, nvcr.io, localhost:5000) and a mirror: host[:port][/path prefix].
REGISTRY_HOST_RE = re.compile(r"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?$")
REGISTRY_MIRROR_RE = re.compile(r"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?(/[a-z0-9]+([._-][a-z0-9]+)*)*$")


@dataclass(frozen=True)
class _Matches:
    """A string constraint: validated with envgen's own message, and shown as ``pattern`` in the
    JSON Schema (``envgen schema``)."""

    pattern: re.Pattern[str]
    what: str

    def _check(self, value: str) -> str:
        if not self.pattern.match(value):
            raise ValueError(f"{shown(value)} is not a valid {self.what}")
        return value

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(self._check, handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        out = handler(schema)
        out["pattern"] = self.pattern.pattern
        return out


def _matches(pattern: re.Pattern[str], what: str) -> _Matches:
    return _Matches(pattern, what)


def _local_path(value: str) -> str:
    """A host directory path: no control characters (NUL, newlines), within the file system's limits."""
    if not value or len(value) > 1024 or any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ValueError(f"{shown(value)} is not a usable directory path (1-1024 characters, no control "
                         "characters)")
    if any(len(part.encode("utf-8")) > 255 for part in value.split("/")):
        raise ValueError(f"{shown(value)} has a path component longer than 255 bytes")
    return value


LocalPath = Annotated[str, AfterValidator(_local_path)]
Version = Annotated[str, _matches(VERSION_RE, "version (expected digits and dots, such as \"3.7.9\")")]
FrameworkVersion = Annotated[
    str, _matches(FRAMEWORK_VERSION_RE, "framework version (such as \"1.7.1\" or \"1.7.1+cu101\")")
]
ImageRef = Annotated[
    str, _matches(IMAGE_RE, "image reference (such as \"nvidia/cuda:12.1.1-runtime-ubuntu22.04\")")
]


@dataclass(frozen=True)
class _Requirement:
    """A ``packages.pip`` line as requirements.txt takes it (``envgen.profile.requirements``); shown in the JSON
    Schema as the characters such a line may hold."""

    def _check(self, value: str) -> str:
        try:
            parse_line(value)
        except RefusedLine as exc:
            raise ValueError(str(exc)) from exc
        return value

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return core_schema.no_info_after_validator_function(self._check, handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        out = handler(schema)
        out["pattern"] = SAFE_RE.pattern
        return out


PipRequirement = Annotated[str, _Requirement()]
CondaPin = Annotated[str, _matches(CONDA_PIN_RE, "conda spec pinned with = (such as \"numpy=1.21.6\")")]
AptPackage = Annotated[str, _matches(APT_RE, "Debian/Ubuntu package name (such as \"git\" or \"git=1:2.39.5-0\")")]
Channel = Annotated[str, _matches(CHANNEL_RE, "conda channel name (such as \"conda-forge\")")]
EnvValue = Annotated[str, _matches(ENV_VALUE_RE, "environment value (letters, digits and _.,:/=+@%- only)")]
Url = Annotated[str, _matches(URL_RE, "URL (http://, https:// or file://, no spaces or quotes)")]
GpuTarget = Annotated[str, _matches(GPU_TARGET_RE, "GPU name or compute capability (such as \"A100\" or \"8.0\")")]


SET = object()  # CrossFieldRule.equals: "whenever the field is set (not null)"


@dataclass(frozen=True)
class CrossFieldRule:
    """When the field at ``when`` (dotted path) equals ``equals`` (or is set, for :data:`SET`), the
    top-level field ``then`` must be set (``need="set"``) or a non-empty list (``need="nonempty"``).
    The model enforces these; ``envgen schema`` writes them as if/then clauses."""

    when: str
    equals: object
    then: str
    need: Literal["set", "nonempty"]
    message: str
    # What a file may leave to loading: JSON Schema conditions under which the loader fills ``then`` itself
    # (profile.normalise), so the schema of the *file* waives the rule there; the model checks the filled profile.
    filled_when: tuple[dict[str, Any], ...] = ()


# Where loading fills cuda (normalise.wheel_cuda_defaults, ngc_defaults): an NGC base, a torch build tag (+cu121),
# tensorflow[and-cuda], in frameworks: or as a packages.pip line.
_CUDA_FILLED: tuple[dict[str, Any], ...] = (
    {"required": ["base"], "properties": {"base": {"pattern": "^nvcr\\.io/nvidia/"}}},
    {"required": ["frameworks"], "properties": {"frameworks": {
        "required": ["pytorch"], "properties": {"pytorch": {"pattern": "\\+cu[0-9]+$"}}}}},
    {"required": ["frameworks"], "properties": {"frameworks": {
        "required": ["tensorflow", "tensorflow_package"],
        "properties": {"tensorflow_package": {"const": "tensorflow[and-cuda]"}}}}},
    {"required": ["packages"], "properties": {"packages": {"required": ["pip"], "properties": {"pip": {
        "contains": {"pattern": "^\\s*(torch\\s*==[^;]*\\+cu[0-9]+|tensorflow\\s*\\[\\s*and-cuda\\s*\\]\\s*==)"}}}}}},
)

CROSS_FIELD_RULES: tuple[CrossFieldRule, ...] = (
    CrossFieldRule("cudnn", SET, "cuda", "set", "cudnn is set but cuda is not: set cuda too, or remove cudnn",
                   _CUDA_FILLED),
    CrossFieldRule("gpu.required", True, "cuda", "set",
                   "gpu.required is true but cuda is not set: set cuda, or gpu.required: false", _CUDA_FILLED),
)


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, defer_build=True)


class Frameworks(Strict):
    """The deep-learning frameworks the image installs (either, both or none)."""

    tensorflow: Version | None = Field(
        default=None, description="TensorFlow release to install, such as \"2.12.0\"; omit for none.")
    tensorflow_package: Literal[
        "tensorflow", "tensorflow-gpu", "tensorflow-cpu", "tensorflow[and-cuda]"
    ] | None = Field(
        default=None,
        description="The pip distribution that carries TensorFlow; default chosen from the knowledge base "
                    "(tensorflow-gpu for 2.0, tensorflow from 2.1, tensorflow[and-cuda] from 2.14, "
                    "tensorflow-cpu for CPU profiles).")
    pytorch: FrameworkVersion | None = Field(
        default=None, description="PyTorch release, optionally with its build variant: \"2.1.2\" or "
                                  "\"2.1.2+cu118\" (\"+cpu\" for the CPU build); omit for none.")
    torchvision: FrameworkVersion | None = Field(
        default=None, description="torchvision release; default: the one the knowledge base pairs with pytorch.")
    torchaudio: FrameworkVersion | None = Field(
        default=None, description="torchaudio release; default: the one the knowledge base pairs with pytorch.")


# An absolute path inside the image: letters, digits and ._+- between slashes (it reaches a RUN line).
INTERPRETER_RE = re.compile(r"^(/[A-Za-z0-9._+-]+)+$")
Interpreter = Annotated[str, _matches(INTERPRETER_RE, "absolute path of a Python interpreter in the image "
                                                      "(such as \"/usr/bin/python3\" or \"/opt/conda/bin/python\")")]
ProvidedFramework = Literal["tensorflow", "pytorch", "torchvision", "torchaudio"]


class BaseProvides(Strict):
    """What the base image already holds: the frameworks (in the Python environment of ``python``).
    envgen installs none of them; packages.pip go on top, in /opt/env, seeing the base's packages."""

    python: Interpreter = Field(
        default="/usr/bin/python3",
        description="The interpreter whose environment holds the frameworks: /usr/bin/python3, a venv's "
                    "bin/python, a conda env's bin/python.")
    frameworks: list[ProvidedFramework] = Field(
        default=[],
        description="The frameworks: entries the base provides; left out, every one set under frameworks:. "
                    "Each must be set under frameworks: with the version the base holds, so the smoke test "
                    "can check it.")


class Gpu(Strict):
    """The GPUs the image is meant for."""

    targets: list[GpuTarget] = Field(
        default=[],
        description="GPU models (\"A100\", \"GTX 950M\") or compute capabilities (\"8.0\") the image must "
                    "have kernels for; `envgen check` compares them with the framework builds.")
    required: bool = Field(
        default=True,
        description="False for CPU-only profiles: the smoke test then expects no GPU and says so.")


class Packages(Strict):
    """Extra packages: apt and conda pinned exactly, pip as requirements.txt lines."""

    apt: list[AptPackage] = Field(
        default=[],
        description="Debian/Ubuntu packages for the runtime image: \"git\" or \"git=1:2.39.5-0\".")
    conda: list[CondaPin] = Field(
        default=[], description="conda packages (conda profiles), pinned with =: \"numpy=1.21.6\".")
    pip: list[PipRequirement] = Field(
        default=[], description="pip packages as requirements.txt lines: \"rich==13.7.1\", \"numpy>=1.24,<2\", "
                                "\"six\", \"jax[cuda12]==0.4.30\", \"tomli==2.0.1; python_version < '3.11'\". "
                                "Ranges and unpinned names are resolved by `envgen lock` (else at build time); "
                                "`envgen check` names each line that floats.")


class Smoke(Strict):
    """Sizes the smoke test uses inside the image (small defaults for 2 GB cards)."""

    # matmul_size: the GPU speed check's size (doubled on a fast GPU, up to 8192, memory allowing); CPU and
    # correctness matmuls use at most 1024
    matmul_size: int = Field(default=4096, ge=64, le=32768,
                             description="Side of the square matrices the GPU/CPU matmul check multiplies.")
    batch_size: int = Field(default=64, ge=1, le=4096, description="Batch size of the tiny training check.")
    train_steps: int = Field(default=20, ge=2, le=1000, description="Steps of the tiny training check.")
    timeout_s: int = Field(default=300, ge=10, le=3600, description="Seconds the whole smoke test may take.")


RegistryHost = Annotated[str, _matches(REGISTRY_HOST_RE, "registry host (such as \"docker.io\" or \"nvcr.io\")")]
RegistryMirror = Annotated[
    str, _matches(REGISTRY_MIRROR_RE, "registry mirror (host[:port][/path], such as \"mirror.example.org:5000\")")
]


class Mirrors(Strict):
    """Where packages come from. Not part of the profile's identity hash: a mirror changes the
    route, not the environment. Also settable per user (``~/.config/envgen/config.yaml``)."""

    pip_index_url: Url | None = Field(default=None, description="pip index to use instead of PyPI (PIP_INDEX_URL).")
    pip_extra_index_urls: list[Url] = Field(
        default=[], description="Further pip indexes (PIP_EXTRA_INDEX_URL).")
    pip_trusted_hosts: list[Annotated[str, _matches(CHANNEL_RE, "host name")]] = Field(
        default=[], description="Hosts pip may reach over plain HTTP or unverified TLS (PIP_TRUSTED_HOST).")
    conda_channel_alias: Url | None = Field(
        default=None, description="Base URL that bare conda channel names resolve against (channel_alias).")
    conda_channels: dict[Channel, Url] = Field(
        default={}, description="Per-channel mirror URLs: {conda-forge: https://mirror/conda-forge}.")
    apt_mirror: Url | None = Field(
        default=None, description="Replaces the base's Debian or Ubuntu archive (deb.debian.org/debian, "
                                  "archive.ubuntu.com/ubuntu, security.ubuntu.com/ubuntu; Debian's debian-security "
                                  "becomes MIRROR-security) during the build.")
    micromamba_url: Url | None = Field(
        default=None, description="Where conda profiles fetch the micromamba binary instead of github.com "
                                  "(build arg MICROMAMBA_URL); the file must have the pinned sha256.")
    pytorch_wheels: Url | None = Field(
        default=None, description="Replaces https://download.pytorch.org/whl in torch's wheel indexes and find-links "
                                  "pages (build arg PYTORCH_WHEELS): MIRROR/cu121, MIRROR/torch_stable.html.")
    http_proxy: Url | None = Field(default=None, description="HTTP proxy for the build (HTTP_PROXY).")
    https_proxy: Url | None = Field(default=None, description="HTTPS proxy for the build (HTTPS_PROXY).")
    no_proxy: EnvValue | None = Field(default=None, description="Hosts the build reaches without the proxy (NO_PROXY).")
    registries: dict[RegistryHost, RegistryMirror] = Field(
        default={},
        description="Image registry mirrors: {docker.io: mirror.example.org, nvcr.io: mirror.example.org/nvcr}. "
                    "docker.io also covers unqualified names (ubuntu:22.04) and library/ names. The base image "
                    "and `envgen pull` take these routes; a digest-pinned base stays pinned.")
    # A local directory of wheels (pip --find-links) copied into the build context.
    wheelhouse: LocalPath | None = Field(
        default=None, description="Local directory of wheels (pip --find-links) bind-mounted into the build.")


class User(Strict):
    """The unprivileged user the image runs as."""

    name: Annotated[str, _matches(NAME_RE, "user name")] = Field(default="envgen", description="User name.")
    uid: int = Field(default=1000, ge=1, le=65000, description="User ID (envgen run maps your own UID onto it).")


class Profile(Strict):
    """An envgen profile: one validated GPU deep-learning environment. Generated from envgen's typed
    model (`envgen schema`); the loader (`envgen check`) enforces the same rules."""

    model_config = ConfigDict(title="envgen profile")

    name: Annotated[str, _matches(NAME_RE, "profile name (lower-case letters, digits, . _ -)")] = Field(
        description="Profile name; the image becomes envgen/<name>:<hash>. Must match the file name for "
                    "profiles found by name.")
    description: str = Field(default="", max_length=200, description="One line saying what the environment is for.",
                             json_schema_extra={"pattern": "^[^\\r\\n]*$"})
    extends: str | None = Field(
        default=None,
        description="Another profile (name, or path relative to this file) this one deep-merges over; "
                    "keys set here win, lists replace.")
    base: ImageRef = Field(
        description="Base image: [registry/]repository[:tag][@sha256:digest], such as "
                    "\"nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04\".")
    # True for a base image built locally (debootstrap + docker import): it has no registry
    # digest, so digest pinning is skipped, visibly, in the Dockerfile and in `envgen check`.
    local_base: bool = Field(
        default=False,
        description="True for a base image built locally (no registry digest): digest pinning is "
                    "skipped, visibly, in the Dockerfile and in `envgen check`.")
    # How the Python environment is made: conda (micromamba) from channels, or pip on the
    # base image's own Python (NGC images, plain Debian/Ubuntu bases).
    installer: Literal["conda", "pip"] = Field(
        default="pip",
        description="How the Python environment is made: conda (micromamba, from channels) or pip on the "
                    "base image's own Python (NGC images, plain Debian/Ubuntu bases). Left out: conda when the "
                    "profile lists conda packages or channels, else pip.")
    cuda: Version | None = Field(
        default=None, description="CUDA version the stack targets (\"11.8\"); required when gpu.required is true.")
    cudnn: Version | None = Field(default=None, description="cuDNN version (\"8.6.0\"); needs cuda.")
    python: Version = Field(description="Python version, in quotes: \"3.11\" (YAML reads 3.10 as 3.1).")
    frameworks: Frameworks = Field(default_factory=Frameworks, description=Frameworks.__doc__)
    base_provides: BaseProvides | None = Field(
        default=None, description=BaseProvides.__doc__)
    gpu: Gpu = Field(default_factory=Gpu, description=Gpu.__doc__)
    packages: Packages = Field(default_factory=Packages, description=Packages.__doc__)
    channels: list[Channel] = Field(
        default=[],
        description="conda channels in priority order; left out with installer: conda, conda-forge.")
    env: dict[Annotated[str, _matches(ENV_KEY_RE, "environment variable name")], EnvValue] = Field(
        default={}, description="Environment variables set in the image (NAME: value).")
    smoke: Smoke = Field(default_factory=Smoke, description=Smoke.__doc__)
    mirrors: Mirrors = Field(
        default_factory=Mirrors,
        description="Package and image mirrors: routes, not part of the environment's identity or hash.")
    user: User = Field(default_factory=User, description=User.__doc__)

    @model_validator(mode="before")
    @classmethod
    def _normalise(cls, data: Any, info: ValidationInfo) -> Any:
        """Frameworks named in packages.pip move to frameworks; defaults are filled (profiles made in
        code get the same treatment as loaded ones, which went through it with line numbers, once)."""
        context = info.context or {}
        if not isinstance(data, dict) or context.get(NORMALISED):
            return data
        names = context.get(FRAMEWORK_NAMES)
        if names is None:  # no knowledge base at hand: its one small file of framework names, never the whole KB
            from envgen.kb.distributions import read_framework_names

            names = read_framework_names()
        return normalise(data, {}, Path("<profile>"), names).data

    @field_validator("description")
    @classmethod
    def _one_line(cls, value: str) -> str:
        if "\n" in value or "\r" in value:
            raise ValueError("description must be one line")
        # Printable text only: no NUL or other control characters, no Unicode direction marks or
        # invisible format characters (they make a label or a help text read differently than it is).
        odd = next((c for c in value if not c.isprintable()), None)
        if odd is not None:
            raise ValueError(f"description holds the non-printable character U+{ord(odd):04X}; "
                             "write plain one-line text")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> Profile:
        if self.base_provides is not None:
            if self.installer != "pip":
                raise ValueError("base_provides with installer: conda: a conda environment brings its own Python "
                                 "and frameworks; use installer: pip to build on the base's frameworks")
            for name in self.base_provides.frameworks:
                if getattr(self.frameworks, name) is None:
                    raise ValueError(f"base_provides.frameworks lists {name} but frameworks.{name} is not set: "
                                     f"declare the version the base holds (such as \"2.4.0+cu121\"), so the "
                                     "smoke test can check it")
        for rule in CROSS_FIELD_RULES:
            value: Any = self
            for part in rule.when.split("."):
                value = getattr(value, part)
            triggered = value is not None if rule.equals is SET else value == rule.equals
            if triggered and not getattr(self, rule.then):
                raise ValueError(rule.message)
        return self

    # --- derived facts used by the knowledge base, templates and labels ----------------

    @property
    def python_minor(self) -> str:
        return ".".join(self.python.split(".")[:2])

    @property
    def torch_version(self) -> str | None:
        """PyTorch version without the build variant: "1.7.1" for "1.7.1+cu101"."""
        return self.frameworks.pytorch.split("+")[0] if self.frameworks.pytorch else None

    @property
    def torch_variant(self) -> str | None:
        """Build variant given in the profile ("cu101", "cpu"), or None."""
        if self.frameworks.pytorch and "+" in self.frameworks.pytorch:
            return self.frameworks.pytorch.split("+", 1)[1]
        return None

    @property
    def is_gpu(self) -> bool:
        """A GPU profile: one whose image must see a GPU (``gpu.required``, which needs ``cuda``). The one notion
        the install plan (CUDA builds, NVIDIA_* variables, library path), the exports (``--gpus``), the image's
        io.envgen.gpu-required label and the smoke tiers share."""
        return self.gpu.required

    @property
    def base_frameworks(self) -> tuple[str, ...]:
        """The frameworks the base image provides ("tensorflow", "pytorch", ...): base_provides.frameworks,
        or every framework set when that list is empty; () without base_provides."""
        if self.base_provides is None:
            return ()
        named = self.base_provides.frameworks or [n for n in ("tensorflow", "pytorch", "torchvision", "torchaudio")
                                                  if getattr(self.frameworks, n) is not None]
        return tuple(named)

    @property
    def pip_lines(self) -> list[PipLine]:
        """``packages.pip`` read (name, extras, specifier, marker), in profile order."""
        return [parse_line(spec) for spec in self.packages.pip]

    @property
    def pip_installed(self) -> list[PipLine]:
        """The ``packages.pip`` lines whose marker holds in the image (its Python, CPython on Linux x86-64)."""
        return [line for line in self.pip_lines if line.applies(self.python)]

    @property
    def pip_pins(self) -> list[str]:
        """The exact ``packages.pip`` pins the image gets, without their markers: "nvidia-cudnn-cu12==9.1.0.70"."""
        return [line.requirement for line in self.pip_installed if not line.floats]

    @property
    def is_ngc(self) -> bool:
        return self.base.startswith("nvcr.io/nvidia/")

    def identity(self) -> dict[str, object]:
        """What defines the environment: everything but the route packages take (mirrors)
        and the `extends` link (already merged)."""
        # base_provides only when set: a profile without it keeps the identity (and hash) it had before the
        # field existed, so its images stay cache hits
        return self.model_dump(mode="json", exclude={"mirrors", "extends"} | (
            {"base_provides"} if self.base_provides is None else set()))
