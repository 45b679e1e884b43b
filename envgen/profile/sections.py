"""The profile's sections: its strict parts (frameworks, base_provides, gpu, packages, smoke, slim, mirrors, user,
metadata), each a record type with its own fields and documentation. ``envgen.profile.model`` joins them into the
``Profile``."""

from __future__ import annotations

from dataclasses import field
from typing import Annotated, Literal

from envgen.profile.requirements import canonical
from envgen.profile.values import (
    CHANNEL_RE,
    NAME_RE,
    AptPackage,
    Channel,
    CondaPin,
    Distribution,
    DistributionVersion,
    EnvValue,
    FrameworkVersion,
    GpuTarget,
    Interpreter,
    LabelText,
    LocalPath,
    PipRequirement,
    RegistryHost,
    RegistryMirror,
    Url,
    Version,
    matches,
)
from envgen.records import Between, Doc, Record


class Strict(Record):
    """A part of the profile: strict and frozen (``envgen.records``)."""


TensorflowDistribution = Literal["tensorflow", "tensorflow-gpu", "tensorflow-cpu", "tensorflow[and-cuda]"]


class Frameworks(Strict):
    """The deep-learning frameworks the image installs (either, both or none)."""

    tensorflow: Annotated[Version | None, Doc(
        "TensorFlow release to install, such as \"2.12.0\"; omit for none.")] = None
    tensorflow_package: Annotated[TensorflowDistribution | None, Doc(
        "The pip distribution that carries TensorFlow; default chosen from the knowledge base (tensorflow-gpu"
        " for 2.0, tensorflow from 2.1, tensorflow[and-cuda] from 2.14, tensorflow-cpu for CPU profiles).")] = None
    pytorch: Annotated[FrameworkVersion | None, Doc(
        "PyTorch release, optionally with its build variant: \"2.1.2\" or \"2.1.2+cu118\" (\"+cpu\" for the CPU "
        "build); omit for none.")] = None
    torchvision: Annotated[FrameworkVersion | None, Doc(
        "torchvision release; default: the one the knowledge base pairs with pytorch.")] = None
    torchaudio: Annotated[FrameworkVersion | None, Doc(
        "torchaudio release; default: the one the knowledge base pairs with pytorch.")] = None


# An absolute path inside the image: letters, digits and ._+- between slashes (it reaches a RUN line).
ProvidedFramework = Literal["tensorflow", "pytorch", "torchvision", "torchaudio"]
# A distribution the base holds, by name (PEP 508: letters, digits, ._- inside), and its version as the base's
# metadata says it (PEP 440 release, optional pre/post/dev part and local label: 14.2.0, 2.3.0rc1, 2.11.0+cu130)
class BaseProvides(Strict):
    """What the base image already holds: the frameworks (in the Python environment of ``python``).
    envgen installs none of them; packages.pip go on top, in /opt/env, seeing the base's packages."""

    python: Annotated[Interpreter, Doc(
        "The interpreter whose environment holds the frameworks: /usr/bin/python3, a venv's bin/python, a "
        "conda env's bin/python.")] = "/usr/bin/python3"
    frameworks: Annotated[list[ProvidedFramework], Doc(
        "The frameworks: entries the base provides; left out, every one set under frameworks:. Each"
        " must be set under frameworks: with the version the base holds, so the smoke test can "
        "check it.")] = field(default_factory=list)
    packages: Annotated[dict[Distribution, DistributionVersion], Doc(
        "Other distributions the base holds, with the versions it holds (cupy-cuda13x: \"14.2.0\"): a packages.pip "
        "line the version satisfies is neither downloaded nor installed, and the smoke test checks each "
        "version.")] = field(default_factory=dict)

    def __post_init__(self) -> None:
        seen: dict[str, str] = {}
        for name in self.packages:
            other = seen.setdefault(canonical(name), name)
            if other != name:
                raise ValueError(f"base_provides.packages names one distribution twice ({other} and {name}): "
                                 "keep one of them")


class Gpu(Strict):
    """The GPUs the image is meant for."""

    targets: Annotated[list[GpuTarget], Doc(
        "GPU models (\"A100\", \"GTX 950M\") or compute capabilities (\"8.0\") the image must have kernels for; "
        "`envgen check` compares them with the framework builds.")] = field(default_factory=list)
    required: Annotated[bool, Doc(
        "False for CPU-only profiles: the smoke test then expects no GPU and says so.")] = True


class Packages(Strict):
    """Extra packages: apt and conda pinned exactly, pip as requirements.txt lines."""

    apt: Annotated[list[AptPackage], Doc(
        "Debian/Ubuntu packages for the runtime image: \"git\" or \"git=1:2.39.5-0\".")] = field(default_factory=list)
    conda: Annotated[list[CondaPin], Doc(
        "conda packages (conda profiles), pinned with =: \"numpy=1.21.6\".")] = field(default_factory=list)
    pip: Annotated[list[PipRequirement], Doc(
        "pip packages as requirements.txt lines: \"rich==13.7.1\", \"numpy>=1.24,<2\", \"six\", "
        "\"jax[cuda12]==0.4.30\", \"tomli==2.0.1; python_version < '3.11'\". Ranges and unpinned names "
        "are resolved by `envgen lock` (else at build time); `envgen check` names each line that "
        "floats.")] = field(default_factory=list)


class Smoke(Strict):
    """Sizes the smoke test uses inside the image (small defaults for 2 GB cards)."""

    # matmul_size: the GPU speed check's size (doubled on a fast GPU, up to 8192, memory allowing); CPU and
    # correctness matmuls use at most 1024
    matmul_size: Annotated[int, Between(64, 32768), Doc(
        "Side of the square matrices the GPU/CPU matmul check multiplies.")] = 4096
    batch_size: Annotated[int, Between(1, 4096), Doc("Batch size of the tiny training check.")] = 64
    train_steps: Annotated[int, Between(2, 1000), Doc("Steps of the tiny training check.")] = 20
    timeout_s: Annotated[int, Between(10, 3600), Doc("Seconds the whole smoke test may take.")] = 300


class Slim(Strict):
    """What the runtime image leaves out, one switch each (``slim: true``/``false`` sets both)."""

    leave_out: Annotated[bool, Doc(
        "Leave out what no package loads at runtime (envgen/kb/data/leave_out.yaml).")] = True
    strip_symbols: Annotated[bool, Doc(
        "Strip the symbol tables (.symtab, .debug_*) the dynamic loader never reads from the environment's shared "
        "objects and programs, where their licence allows it (envgen/kb/data/strip_symbols.yaml); false keeps them "
        "for gdb/perf backtraces with the names of TensorFlow's or torch's C++ functions.")] = True


class Mirrors(Strict):
    """Where packages come from. Not part of the profile's identity hash: a mirror changes the
    route, not the environment. Also settable per user (``~/.config/envgen/config.yaml``)."""

    REMEMBERS_KEYS = True  # the user's mirrors override a profile's where the user set them (config.merge_mirrors)

    pip_index_url: Annotated[Url | None, Doc("pip index to use instead of PyPI (PIP_INDEX_URL).")] = None
    pip_extra_index_urls: Annotated[list[Url], Doc(
        "Further pip indexes (PIP_EXTRA_INDEX_URL).")] = field(default_factory=list)
    pip_trusted_hosts: Annotated[list[Annotated[str, matches(CHANNEL_RE, "host name")]], Doc(
        "Hosts pip may reach over plain HTTP or unverified TLS (PIP_TRUSTED_HOST).")] = field(default_factory=list)
    conda_channel_alias: Annotated[Url | None, Doc(
        "Base URL that bare conda channel names resolve against (channel_alias).")] = None
    conda_channels: Annotated[dict[Channel, Url], Doc(
        "Per-channel mirror URLs: {conda-forge: https://mirror/conda-forge}.")] = field(default_factory=dict)
    apt_mirror: Annotated[Url | None, Doc(
        "Replaces the base's Debian or Ubuntu archive (deb.debian.org/debian, archive.ubuntu.com/ubuntu, "
        "security.ubuntu.com/ubuntu; Debian's debian-security becomes MIRROR-security) during the build.")] = None
    micromamba_url: Annotated[Url | None, Doc(
        "Where conda profiles fetch the micromamba binary instead of github.com (build arg MICROMAMBA_URL); "
        "the file must have the pinned sha256.")] = None
    pytorch_wheels: Annotated[Url | None, Doc(
        "Replaces https://download.pytorch.org/whl in torch's wheel indexes and find-links pages (build arg "
        "PYTORCH_WHEELS): MIRROR/cu121, MIRROR/torch_stable.html.")] = None
    http_proxy: Annotated[Url | None, Doc("HTTP proxy for the build (HTTP_PROXY).")] = None
    https_proxy: Annotated[Url | None, Doc("HTTPS proxy for the build (HTTPS_PROXY).")] = None
    no_proxy: Annotated[EnvValue | None, Doc("Hosts the build reaches without the proxy (NO_PROXY).")] = None
    registries: Annotated[dict[RegistryHost, RegistryMirror], Doc(
        "Image registry mirrors: {docker.io: mirror.example.org, nvcr.io: mirror.example.org/nvcr}. docker.io"
        " also covers unqualified names (ubuntu:22.04) and library/ names. The base image and `envgen pull` "
        "take these routes; a digest-pinned base stays pinned.")] = field(default_factory=dict)
    # A local directory of wheels (pip --find-links) copied into the build context.
    wheelhouse: Annotated[LocalPath | None, Doc(
        "Local directory of wheels (pip --find-links) bind-mounted into the build.")] = None


class User(Strict):
    """The unprivileged user the image runs as."""

    name: Annotated[str, matches(NAME_RE, "user name"), Doc("User name.")] = "envgen"
    uid: Annotated[int, Between(1, 65000), Doc("User ID (envgen run maps your own UID onto it).")] = 1000


class ImageMetadata(Strict):
    """Your image's own OCI labels (org.opencontainers.image.*): none is set unless given here; envgen's own
    facts go under io.envgen.* (its version, the profile, the hashes)."""

    licenses: Annotated[LabelText | None, Doc("SPDX licence expression of what the image holds (licenses).")] = None
    source: Annotated[LabelText | None, Doc("URL of the source the image is built from (source).")] = None
    version: Annotated[LabelText | None, Doc("Version of your image or project (version).")] = None
    authors: Annotated[LabelText | None, Doc("Who maintains the image (authors).")] = None
    url: Annotated[LabelText | None, Doc("URL to find more about the image (url).")] = None
    documentation: Annotated[LabelText | None, Doc("URL of the image's documentation (documentation).")] = None
    vendor: Annotated[LabelText | None, Doc("Who distributes the image (vendor).")] = None
