"""The profile's values: the patterns every string a profile holds is matched against, and the typed strings built on
them (``envgen.profile.model`` puts them in fields). Every string that can reach a Dockerfile, a shell line or a YAML
file is matched against a pattern that admits no quoting, whitespace, ``$``, backtick, ``;``, ``&``, ``|`` or
newline (environment values excepted, as said at ``ENV_VALUE_RE``)."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from envgen.errors import shown
from envgen.profile.requirements import SAFE_RE, RefusedLine, parse_line
from envgen.records import Check, Length, Matches

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
# Values as users write them (`TORCH_CUDA_ARCH_LIST: "8.0;8.6+PTX"`, `CFLAGS: "-O2 -g"`): every printable ASCII
# character but the four that a double-quoted Dockerfile ENV word or shell word would read (" \ $ `), so the value
# stands literally between the double quotes of the Dockerfile's ENV and of the Apptainer %environment.
ENV_VALUE_RE = re.compile(r"^[A-Za-z0-9_.,:/=+@%\- ;*~#!?()\[\]{}<>|&'^]*$")
# URLs reach shell lines (sed, pip, proxies): no '#', '&', ';', quotes, brackets or spaces.
URL_RE = re.compile(r"^(https?|file)://[A-Za-z0-9._~:/?=%+@-]+$")
GPU_TARGET_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._()-]{0,63}$")
# A registry host (docker.io, nvcr.io, localhost:5000) and a mirror: host[:port][/path prefix].
REGISTRY_HOST_RE = re.compile(r"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?$")
REGISTRY_MIRROR_RE = re.compile(r"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]{1,5})?(/[a-z0-9]+([._-][a-z0-9]+)*)*$")


def matches(pattern: re.Pattern[str], what: str) -> Matches:
    """A string constraint: validated with envgen's own message, and shown as ``pattern`` in the JSON Schema
    (``envgen schema``)."""
    return Matches(pattern, what, show=shown)


def _local_path(value: str) -> str:
    """A host directory path: no control characters (NUL, newlines), within the file system's limits."""
    if not value or len(value) > 1024 or any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise ValueError(f"{shown(value)} is not a usable directory path (1-1024 characters, no control "
                         "characters)")
    if any(len(part.encode("utf-8")) > 255 for part in value.split("/")):
        raise ValueError(f"{shown(value)} has a path component longer than 255 bytes")
    return value


LocalPath = Annotated[str, Check(_local_path)]
Version = Annotated[str, matches(VERSION_RE, "version (expected digits and dots, such as \"3.7.9\")")]
FrameworkVersion = Annotated[
    str, matches(FRAMEWORK_VERSION_RE, "framework version (such as \"1.7.1\" or \"1.7.1+cu101\")")
]
ImageRef = Annotated[
    str, matches(IMAGE_RE, "image reference (such as \"nvidia/cuda:12.1.1-runtime-ubuntu22.04\")")
]


def _requirement(value: str) -> str:
    """A ``packages.pip`` line as requirements.txt takes it (``envgen.profile.requirements``); shown in the JSON
    Schema as the characters such a line may hold."""
    try:
        parse_line(value)
    except RefusedLine as exc:
        raise ValueError(str(exc)) from exc
    return value


PipRequirement = Annotated[str, Check(_requirement, pattern=SAFE_RE.pattern)]
CondaPin = Annotated[str, matches(CONDA_PIN_RE, "conda spec pinned with = (such as \"numpy=1.21.6\")")]
AptPackage = Annotated[str, matches(APT_RE, "Debian/Ubuntu package name (such as \"git\" or \"git=1:2.39.5-0\")")]
Channel = Annotated[str, matches(CHANNEL_RE, "conda channel name (such as \"conda-forge\")")]
EnvValue = Annotated[str, matches(ENV_VALUE_RE, "environment value (printable characters but \" \\ $ ` only)")]
Url = Annotated[str, matches(URL_RE, "URL (http://, https:// or file://, no spaces or quotes)")]
GpuTarget = Annotated[str, matches(GPU_TARGET_RE, "GPU name or compute capability (such as \"A100\" or \"8.0\")")]


# The platforms envgen plans, locks and builds for (OCI os/architecture): Linux on x86-64 and on 64-bit Arm.
PlatformName = Literal["linux/amd64", "linux/arm64"]
PLATFORMS: tuple[PlatformName, ...] = ("linux/amd64", "linux/arm64")
DEFAULT_PLATFORMS: tuple[PlatformName, ...] = ("linux/amd64",)


def _platform(value: object) -> object:
    if value not in PLATFORMS:
        raise ValueError(f"{shown(value)} is not a platform envgen builds for: use {' or '.join(PLATFORMS)}")
    return value


# (checked before the Literal, for envgen's own message; the Literal makes the JSON Schema's enum)
Platform = Annotated[PlatformName, Check(_platform, mode="before")]


def default_platforms() -> list[PlatformName]:
    """``platforms`` left out: linux/amd64 alone (a named function: the compiled validator is pickled)."""
    return list(DEFAULT_PLATFORMS)


def platform_list(value: list[str]) -> list[str]:
    """``platforms``: each platform once, at least one."""
    if len(set(value)) != len(value):
        raise ValueError(f"[{', '.join(value)}] must name each platform once, at least one: such as "
                         f"[{', '.join(PLATFORMS)}]")
    return value


INTERPRETER_RE = re.compile(r"^(/[A-Za-z0-9._+-]+)+$")
Interpreter = Annotated[str, matches(INTERPRETER_RE, "absolute path of a Python interpreter in the image "
                                                      "(such as \"/usr/bin/python3\" or \"/opt/conda/bin/python\")")]


DISTRIBUTION_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$")
DISTRIBUTION_VERSION_RE = re.compile(r"^\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?(\+[a-z0-9.]+)?$")
Distribution = Annotated[str, matches(DISTRIBUTION_RE, "distribution name (such as \"cupy-cuda13x\")")]
DistributionVersion = Annotated[str, matches(
    DISTRIBUTION_VERSION_RE, "distribution version (such as \"14.2.0\", \"2.3.0rc1\" or \"2.11.0+cu130\")")]


RegistryHost = Annotated[str, matches(REGISTRY_HOST_RE, "registry host (such as \"docker.io\" or \"nvcr.io\")")]
RegistryMirror = Annotated[
    str, matches(REGISTRY_MIRROR_RE, "registry mirror (host[:port][/path], such as \"mirror.example.org:5000\")")
]


def one_line(value: str) -> str:
    if "\n" in value or "\r" in value:
        raise ValueError("must be one line")
    # Printable text only: no NUL or other control characters, no Unicode direction marks or
    # invisible format characters (they make a label or a help text read differently than it is).
    odd = next((c for c in value if not c.isprintable()), None)
    if odd is not None:
        raise ValueError(f"holds the non-printable character U+{ord(odd):04X}; "
                         "write plain one-line text")
    return value


LabelText = Annotated[str, Length(max=200), Check(one_line, pattern="^[^\\r\\n]*$")]
