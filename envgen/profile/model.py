"""The profile model: strict (unknown keys are errors), typed, and safe to put in a Dockerfile.

Every string that can reach a Dockerfile, a shell line or a YAML file is matched against a
pattern that admits no quoting, whitespace, ``$``, backtick, ``;``, ``&``, ``|`` or newline.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from typing import Annotated, Any, TypeVar

from envgen.errors import ProfileError
from envgen.profile.crossfield import CROSS_FIELD_RULES, SET
from envgen.profile.installers import DEFAULT_INSTALLER, InstallerName, base_provides_refused
from envgen.profile.normalise import normalise
from envgen.profile.requirements import PipLine, canonical, parse_line
from envgen.profile.sections import (
    BaseProvides,
    Frameworks,
    Gpu,
    ImageMetadata,
    Mirrors,
    Packages,
    Slim,
    Smoke,
    Strict,
    User,
)
from envgen.profile.values import (
    DEFAULT_PLATFORMS,
    ENV_KEY_RE,
    NAME_RE,
    Channel,
    EnvValue,
    ImageRef,
    Platform,
    Version,
    default_platforms,
    matches,
    one_line,
    platform_list,
)
from envgen.records import Check, Doc, Length

# model_validate(data, context={NORMALISED: True}): the data went through normalise already (load_profile)
NORMALISED = "envgen.normalised"
# model_validate(data, context={FRAMEWORK_NAMES: kb.framework_names}): the framework distributions' names to lift
# and refuse (without it, the validator reads kb/data/framework_distributions.yaml alone)
FRAMEWORK_NAMES = "envgen.framework_names"

# the sections are imported from here too, as before they had a module of their own
__all__ = ["FRAMEWORK_NAMES", "NORMALISED", "BaseProvides", "Frameworks", "Gpu", "ImageMetadata", "Mirrors",
           "Packages", "Profile", "Slim", "Smoke", "Strict", "User"]

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
        "packages or channels, else pip.")] = DEFAULT_INSTALLER
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
