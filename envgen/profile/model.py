"""The profile model: strict (unknown keys are errors), typed, and safe to put in a Dockerfile.

Every string that can reach a Dockerfile, a shell line or a YAML file is matched against a
pattern that admits no quoting, whitespace, ``$``, backtick, ``;``, ``&``, ``|`` or newline.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from envgen.errors import ProfileError
from envgen.profile.crossfield import CROSS_FIELD_RULES, SET
from envgen.profile.installers import InstallerName, base_provides_refused
from envgen.profile.normalise import normalise
from envgen.profile.requirements import PipLine, canonical, parse_line
from envgen.profile.values import (
    CHANNEL_RE,
    DEFAULT_PLATFORMS,
    ENV_KEY_RE,
    NAME_RE,
    AptPackage,
    Channel,
    CondaPin,
    Distribution,
    DistributionVersion,
    EnvValue,
    FrameworkVersion,
    GpuTarget,
    ImageRef,
    Interpreter,
    LabelText,
    LocalPath,
    PipRequirement,
    Platform,
    RegistryHost,
    RegistryMirror,
    Url,
    Version,
    default_platforms,
    matches,
    one_line,
    platform_list,
)
from envgen.records import Between, Check, Doc, Length, Record

# model_validate(data, context={NORMALISED: True}): the data went through normalise already (load_profile)
NORMALISED = "envgen.normalised"
# model_validate(data, context={FRAMEWORK_NAMES: kb.framework_names}): the framework distributions' names to lift
# and refuse (without it, the validator reads kb/data/framework_distributions.yaml alone)
FRAMEWORK_NAMES = "envgen.framework_names"

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


P = TypeVar("P", bound="Profile")


def _release_base(base: object) -> bool:
    """A base whose family has a release table (NGC): its CUDA, cuDNN and Python come from the release's row, in
    planning (``plan.defaults``), so the profile may leave them out. Asked only of a profile that leaves one out;
    reads base_families.yaml alone, never the knowledge base."""
    if not isinstance(base, str):
        return False
    from envgen.kb.families import family_for, read_base_families

    return family_for(read_base_families(), base).release_table


def _python_missing(cls: type[P], data: dict[str, Any], context: Mapping[str, Any]) -> P:
    """Validation of a profile without ``python`` whose base brings none: pydantic's own "missing" error for
    ``python``, beside any other error the data has (every problem at once, as for a required field)."""
    from pydantic_core import ValidationError

    errors: list[Any] = []
    try:
        super(Profile, cls).model_validate(data, context=context)
    except ValidationError as exc:
        errors = [{key: err[key] for key in ("type", "loc", "input", "ctx") if key in err} for err in exc.errors()]
    errors.append({"type": "missing", "loc": ("python",), "input": data})
    raise ValidationError.from_exception_data(cls.__name__, errors)


class Profile(Strict):
    """An envgen profile: one validated GPU deep-learning environment. Generated from envgen's typed
    model (`envgen schema`); the loader (`envgen check`) enforces the same rules."""

    __pydantic_config__ = {**Strict.__pydantic_config__, "title": "envgen profile"}

    name: Annotated[str, matches(NAME_RE, "profile name (lower-case letters, digits, . _ -)"), Doc(
        "Profile name; the image becomes envgen/<name>:<hash>. Must match the file name for profiles found by"
        " name.")]
    description: Annotated[str, Length(max=200), Check(one_line, pattern="^[^\\r\\n]*$"), Doc(
        "One line saying what the environment is for.")] = ""
    extends: Annotated[str | None, Doc(
        "Another profile (name, or path relative to this file) this one deep-merges over; keys set here win, "
        "lists replace.")] = None
    base: Annotated[ImageRef, Doc(
        "Base image: [registry/]repository[:tag][@sha256:digest], such as "
        "\"nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04\".")]
    # True for a base image built locally (debootstrap + docker import): it has no registry
    # digest, so digest pinning is skipped, visibly, in the Dockerfile and in `envgen check`.
    local_base: Annotated[bool, Doc(
        "True for a base image built locally (no registry digest): digest pinning is skipped, visibly, in the"
        " Dockerfile and in `envgen check`.")] = False
    platforms: Annotated[list[Platform], Length(min=1), Check(platform_list), Doc(
        "The platforms the image is planned, checked, locked and built for: linux/amd64 (x86-64) and linux/arm64 "
        "(64-bit Arm: GH200, GB200, DGX Spark). Left out: linux/amd64 alone.")] = field(
        default_factory=default_platforms)
    # How the Python environment is made: conda (micromamba) from channels, or pip on the
    # base image's own Python (NGC images, plain Debian/Ubuntu bases).
    installer: Annotated[InstallerName, Doc(
        "How the Python environment is made: conda (micromamba, from channels) or pip on the base image's own"
        " Python (NGC images, plain Debian/Ubuntu bases). Left out: conda when the profile lists conda "
        "packages or channels, else pip.")] = "pip"
    cuda: Annotated[Version | None, Doc(
        "CUDA version the stack targets (\"11.8\"); required when gpu.required is true.")] = None
    cudnn: Annotated[Version | None, Doc("cuDNN version (\"8.6.0\"); needs cuda.")] = None
    # required, but for a base whose release row gives it (NGC: planning reads it there, plan.defaults)
    python: Annotated[Version | None, Doc("Python version, in quotes: \"3.11\" (YAML reads 3.10 as 3.1).")] = None
    frameworks: Annotated[Frameworks, Doc(Frameworks.__doc__)] = field(default_factory=Frameworks)
    base_provides: Annotated[BaseProvides | None, Doc(BaseProvides.__doc__)] = None
    gpu: Annotated[Gpu, Doc(Gpu.__doc__)] = field(default_factory=Gpu)
    packages: Annotated[Packages, Doc(Packages.__doc__)] = field(default_factory=Packages)
    channels: Annotated[list[Channel], Doc(
        "conda channels in priority order; left out with installer: conda, conda-forge.")] = field(default_factory=list)
    env: Annotated[dict[Annotated[str, matches(ENV_KEY_RE, "environment variable name")], EnvValue], Doc(
        "Environment variables set in the image (NAME: value).")] = field(default_factory=dict)
    smoke: Annotated[Smoke, Doc(Smoke.__doc__)] = field(default_factory=Smoke)
    mirrors: Annotated[Mirrors, Doc(
        "Package and image mirrors: routes, not part of the environment's identity or hash.")] = field(
        default_factory=Mirrors)
    user: Annotated[User, Doc(User.__doc__)] = field(default_factory=User)
    slim: Annotated[bool | Slim, Doc(
        "Leave out of the runtime image what no package loads when it runs: tests inside site-packages, "
        "documentation, static libraries, headers (each with the paths a package does load kept; the list and its "
        "sources: envgen/kb/data/leave_out.yaml), and the ELF symbol tables the loader never reads "
        "(envgen/kb/data/strip_symbols.yaml). false keeps every file the installs wrote, as they wrote it (to build "
        "extensions against headers in the image, or run a package's own tests); {strip_symbols: false} leaves "
        "files out but keeps the symbol tables (named frames in gdb/perf backtraces).")] = True
    metadata: Annotated[ImageMetadata | None, Doc(ImageMetadata.__doc__)] = None

    @classmethod
    def model_validate(cls: type[P], data: Any, *, context: Mapping[str, Any] | None = None) -> P:
        """``data`` validated into a profile. Frameworks named in packages.pip move to frameworks and defaults are
        filled first (profiles made in code get the same treatment as loaded ones, which went through it with
        line numbers, once: ``context={NORMALISED: True}``)."""
        context = context or {}
        if isinstance(data, dict) and not context.get(NORMALISED):
            names = context.get(FRAMEWORK_NAMES)
            if names is None:  # no knowledge base at hand: its one small file of framework names, never the KB
                from envgen.kb.distributions import read_framework_names

                names = read_framework_names()
            data = normalise(data, {}, Path("<profile>"), names).data
        if not isinstance(data, dict) or data.get("python") is not None or _release_base(data.get("base")):
            return super().model_validate(data, context=context)
        return _python_missing(cls, data, context)

    def __post_init__(self) -> None:
        if self.base_provides is not None:
            if (refused := base_provides_refused(self.installer)) is not None:
                raise ValueError(refused)
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
            if triggered and not getattr(self, rule.then) and not (
                    rule.then == "cuda" and (self.cuda_from_wheels or _release_base(self.base))):
                raise ValueError(rule.message)

    # --- derived facts used by the knowledge base, templates and labels ----------------

    @property
    def python_version(self) -> str:
        """``python`` as planned: a profile that leaves it to its base's release row (NGC) has it once planning
        filled it in (``plan.defaults``; ``ImagePlan.profile``); asked of such a profile before, an error."""
        if self.python is None:
            raise ProfileError(f"profile {self.name!r}: python is not set and was not planned",
                               fix="set python: (such as \"3.11\"), or read the plan's profile")
        return self.python

    @property
    def python_minor(self) -> str:
        return ".".join(self.python_version.split(".")[:2])

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
    def cuda_from_wheels(self) -> bool:
        """The framework wheels decide the CUDA (a torch build tag ``+cu121``, ``tensorflow[and-cuda]``): a profile
        may leave ``cuda`` out, planning takes it from the knowledge base's row of that build (``plan.defaults``)."""
        fw = self.frameworks
        return ((fw.pytorch is not None and "+cu" in fw.pytorch)
                or (fw.tensorflow is not None and fw.tensorflow_package == "tensorflow[and-cuda]"))

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
    def base_packages(self) -> dict[str, str]:
        """The distributions base_provides.packages names, by PEP 503 name, with the versions the base holds;
        {} without base_provides."""
        if self.base_provides is None:
            return {}
        return {canonical(name): version for name, version in self.base_provides.packages.items()}

    @property
    def pip_lines(self) -> list[PipLine]:
        """``packages.pip`` read (name, extras, specifier, marker), in profile order."""
        return [parse_line(spec) for spec in self.packages.pip]

    @property
    def pip_installed(self) -> list[PipLine]:
        """The ``packages.pip`` lines whose marker holds in the image (its Python, CPython on Linux x86-64)."""
        return [line for line in self.pip_lines if line.applies(self.python_version)]

    @property
    def pip_pins(self) -> list[str]:
        """The exact ``packages.pip`` pins the image gets, without their markers: "nvidia-cudnn-cu12==9.1.0.70"."""
        return [line.requirement for line in self.pip_installed if not line.floats]

    @property
    def leaves_out(self) -> bool:
        """The runtime image leaves out what no package loads (``slim``)."""
        return self.slim if isinstance(self.slim, bool) else self.slim.leave_out

    @property
    def strips_symbols(self) -> bool:
        """The runtime image strips the symbol tables the loader never reads (``slim``)."""
        return self.slim if isinstance(self.slim, bool) else self.slim.strip_symbols

    def identity(self) -> dict[str, object]:
        """What defines the environment: everything but the route packages take (mirrors)
        and the `extends` link (already merged)."""
        # base_provides only when set: a profile without it keeps the identity (and hash) it had before the
        # field existed, so its images stay cache hits
        # (and its packages only when named: a base_provides profile of before keeps its hash too)
        # (and platforms only when not linux/amd64 alone, the one platform there was before the field)
        dump = self.model_dump(mode="json", exclude={"mirrors", "extends"} | (
            {"platforms"} if tuple(self.platforms) == DEFAULT_PLATFORMS else set()) | (
            {"base_provides"} if self.base_provides is None else set()) | (
            {"metadata"} if self.metadata is None else set()))
        if self.base_provides is not None and not self.base_provides.packages:
            del dump["base_provides"]["packages"]
        return dump
