"""The profile model: strict (unknown keys are errors), typed, and safe to put in a Dockerfile.

Every string that can reach a Dockerfile, a shell line or a YAML file is matched against a
pattern that admits no quoting, whitespace, ``$``, backtick, ``;``, ``&``, ``|`` or newline.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from envgen.errors import shown

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
# pip requirement pinned exactly: name[extras]==version
PIP_PIN_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9._,-]+\])?==[A-Za-z0-9.+!_-]+$")
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


def _matches(pattern: re.Pattern[str], what: str) -> AfterValidator:
    def check(value: str) -> str:
        if not pattern.match(value):
            raise ValueError(f"{shown(value)} is not a valid {what}")
        return value

    return AfterValidator(check)


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
PipPin = Annotated[str, _matches(PIP_PIN_RE, "pip requirement pinned with == (such as \"rich==13.7.1\")")]
CondaPin = Annotated[str, _matches(CONDA_PIN_RE, "conda spec pinned with = (such as \"numpy=1.21.6\")")]
AptPackage = Annotated[str, _matches(APT_RE, "Debian/Ubuntu package name (such as \"git\" or \"git=1:2.39.5-0\")")]
Channel = Annotated[str, _matches(CHANNEL_RE, "conda channel name (such as \"conda-forge\")")]
EnvValue = Annotated[str, _matches(ENV_VALUE_RE, "environment value (letters, digits and _.,:/=+@%- only)")]
Url = Annotated[str, _matches(URL_RE, "URL (http://, https:// or file://, no spaces or quotes)")]
GpuTarget = Annotated[str, _matches(GPU_TARGET_RE, "GPU name or compute capability (such as \"A100\" or \"8.0\")")]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Frameworks(Strict):
    tensorflow: Version | None = None
    # The pip distribution that carries TensorFlow; default chosen from the knowledge base
    # (tensorflow-gpu for 2.0, tensorflow from 2.1, tensorflow[and-cuda] from 2.14).
    tensorflow_package: Literal["tensorflow", "tensorflow-gpu", "tensorflow-cpu", "tensorflow[and-cuda]"] | None = None
    pytorch: FrameworkVersion | None = None
    torchvision: FrameworkVersion | None = None
    torchaudio: FrameworkVersion | None = None


class Gpu(Strict):
    targets: list[GpuTarget] = Field(default_factory=list)
    # False for CPU-only profiles: the smoke test then expects no GPU and says so.
    required: bool = True


class Packages(Strict):
    apt: list[AptPackage] = Field(default_factory=list)
    conda: list[CondaPin] = Field(default_factory=list)
    pip: list[PipPin] = Field(default_factory=list)


class Smoke(Strict):
    """Sizes the smoke test uses inside the image (small defaults for 2 GB cards)."""

    matmul_size: int = Field(default=4096, ge=64, le=32768)
    batch_size: int = Field(default=64, ge=1, le=4096)
    train_steps: int = Field(default=20, ge=2, le=1000)
    timeout_s: int = Field(default=300, ge=10, le=3600)


class Mirrors(Strict):
    """Where packages come from. Not part of the profile's identity hash: a mirror changes the
    route, not the environment. Also settable per user (``~/.config/envgen/config.yaml``)."""

    pip_index_url: Url | None = None
    pip_extra_index_urls: list[Url] = Field(default_factory=list)
    pip_trusted_hosts: list[Annotated[str, _matches(CHANNEL_RE, "host name")]] = Field(default_factory=list)
    conda_channel_alias: Url | None = None
    conda_channels: dict[Channel, Url] = Field(default_factory=dict)
    apt_mirror: Url | None = None
    http_proxy: Url | None = None
    https_proxy: Url | None = None
    no_proxy: EnvValue | None = None
    # A local directory of wheels (pip --find-links) copied into the build context.
    wheelhouse: LocalPath | None = None


class User(Strict):
    name: Annotated[str, _matches(NAME_RE, "user name")] = "envgen"
    uid: int = Field(default=1000, ge=1, le=65000)


class Profile(Strict):
    name: Annotated[str, _matches(NAME_RE, "profile name (lower-case letters, digits, . _ -)")]
    description: str = Field(default="", max_length=200)
    extends: str | None = None
    base: ImageRef
    # True for a base image built locally (debootstrap + docker import): it has no registry
    # digest, so digest pinning is skipped, visibly, in the Dockerfile and in `envgen check`.
    local_base: bool = False
    # How the Python environment is made: conda (micromamba) from channels, or pip on the
    # base image's own Python (NGC images, plain Debian/Ubuntu bases).
    installer: Literal["conda", "pip"] = "conda"
    cuda: Version | None = None
    cudnn: Version | None = None
    python: Version
    frameworks: Frameworks = Field(default_factory=Frameworks)
    gpu: Gpu = Field(default_factory=Gpu)
    packages: Packages = Field(default_factory=Packages)
    channels: list[Channel] = Field(default_factory=list)
    env: dict[Annotated[str, _matches(ENV_KEY_RE, "environment variable name")], EnvValue] = Field(
        default_factory=dict
    )
    smoke: Smoke = Field(default_factory=Smoke)
    mirrors: Mirrors = Field(default_factory=Mirrors)
    user: User = Field(default_factory=User)

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
        if self.cudnn and not self.cuda:
            raise ValueError("cudnn is set but cuda is not: set cuda too, or remove cudnn")
        if self.gpu.required and not self.cuda:
            raise ValueError("gpu.required is true but cuda is not set: set cuda, or gpu.required: false")
        if self.installer == "conda" and not self.channels:
            raise ValueError("installer is conda but channels is empty: list at least one channel")
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
    def is_ngc(self) -> bool:
        return self.base.startswith("nvcr.io/nvidia/")

    def identity(self) -> dict[str, object]:
        """What defines the environment: everything but the route packages take (mirrors)
        and the `extends` link (already merged)."""
        return self.model_dump(mode="json", exclude={"mirrors", "extends"})
