"""The image plan: what the image installs, in which stage, from where, with which environment, and what the
smoke probe then expects. ``plan_image`` makes it once per command from the profile and the knowledge base (the
rows the profile points at: ``plan.stack.Stack``, read while planning); everything the readers take from it is worked
out there and held as plain fields, and the plan holds no knowledge base: ``check`` judges it (with the KB its
caller gives), ``render`` writes it, ``suggest`` judges one per candidate, and none of them works it out again."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from envgen.kb import BaseImageInfo, KnowledgeBase, NgcRelease, TensorflowBuild, TorchRelease, TorchVariant
from envgen.kb.families import BaseFamily
from envgen.layout import ENV
from envgen.plan.cuda_once import cuda_once_notes
from envgen.plan.environment import environment, own_environment
from envgen.plan.expected import (
    Expected,
    ExpectedBase,
    ExpectedDistribution,
    ExpectedExtension,
    ExpectedTarget,
    expected_distributions,
    expected_libraries,
)
from envgen.plan.extensions import Extension, SourceBuild, source_build
from envgen.plan.installers import installer_of
from envgen.plan.libraries import STAGES, Libraries
from envgen.plan.lockfile import Lock, LockEntry, Pins, exact_conda
from envgen.plan.packages import cuda_wheel_names
from envgen.plan.parts import BasePart, InstallerPart, base_part, chosen_lock, installer_part
from envgen.plan.preflight import preflight_document
from envgen.plan.require import requirement
from envgen.plan.requirements import PlannedRequirement, plan_requirements, split_pin
from envgen.plan.selection import Selection, selection
from envgen.plan.slim import LeaveOutPlan, StripPlan, leave_out_plan, strip_plan
from envgen.plan.stack import Stack, Target, resolve_rows
from envgen.plan.wheel_needs import WheelSurvey
from envgen.profile import Profile
from envgen.profile.requirements import PipLine


@dataclass(frozen=True)
class CudaChoices:
    """Every CUDA the image's plan decided, in one place: the check, the render and the probe's ``expected`` read
    them here."""

    profile: str | None  # the profile's ``cuda`` as planned ("12.1"; for torch +cuXXX without one, that build's)
    torch: str | None  # the CUDA of the torch build chosen (torch.version.cuda); None: a CPU build, or no torch
    tensorflow: str | None  # the CUDA TensorFlow calls: the NGC release's, or the tested one of a GPU build
    tensorflow_cudnn: str | None  # the cuDNN of that TensorFlow build (not for NGC: NVIDIA builds its own)
    in_use: tuple[tuple[str, str], ...]  # (CUDA minor, why) of every runtime the image's code calls
    require: str | None  # NVIDIA_REQUIRE_CUDA (plan.require); None: no CUDA used, or an NGC base's own stays


def cuda_choices(stack: Stack) -> CudaChoices:
    ngc, tf_build = stack.ngc, stack.tf_build
    tf_cuda = None
    if ngc is not None and ngc.framework == "tensorflow":
        tf_cuda = ngc.cuda
    elif tf_build is not None and stack.gpu and stack.tf_package != "tensorflow-cpu":
        tf_cuda = tf_build.cuda
    variant = stack.torch_variant
    return CudaChoices(
        profile=stack.profile.cuda, torch=variant.cuda if variant is not None else None, tensorflow=tf_cuda,
        tensorflow_cudnn=tf_build.cudnn if tf_build is not None and tf_cuda and ngc is None else None,
        in_use=tuple(stack.cuda_in_use), require=requirement(stack))


@dataclass(frozen=True)
class ImagePlan:
    profile: Profile  # as planned: the values it left to the KB filled in (``defaults``); every reader reads this one
    framework_pip: list[str]  # the frameworks' pins "name==version", the environment stage
    user_pip: list[str]  # the profile's packages.pip, as written (``requirements`` says which stage takes each)
    pip_index_urls: list[str]  # --extra-index-url for framework wheels (new-style torch indexes)
    pip_find_links: list[str]  # --find-links pages (old torch_stable.html wheels)
    user_conda: list[str]  # the profile's conda pins (installer conda only)
    # what the base image already carries, not installed again: frameworks (NGC, base_provides), and the
    # distributions base_provides.packages names
    preinstalled: list[str]
    frameworks: list[str]  # every framework's pin, installed or the base's own, in install order (TF, then torch's)
    tensorflow_package: str | None
    torch_variant: TorchVariant | None
    cuda: CudaChoices
    # the knowledge-base rows the profile points at (``plan.stack``), as looked up once
    family: BaseFamily  # the base image's family (base_families.yaml)
    base: BaseImageInfo | None  # the base image's row (None: not in the knowledge base)
    ngc: NgcRelease | None  # the NGC release of the base (families with a release table)
    tf_build: TensorflowBuild | None
    torch_release: TorchRelease | None
    targets: tuple[Target, ...]  # the GPUs the profile names
    # the values the profile left to the knowledge base, as planning filled them into ``profile``, each with where
    # it came from (``plan.defaults``; ``envgen show`` prints them)
    defaults: tuple[str, ...]
    # what was worked out from them, once (each reader reads it here; none asks the knowledge base again)
    libraries: Libraries = field(repr=False)  # the sonames the frameworks load and their providers (plan.libraries)
    wheel_libraries: WheelSurvey = field(repr=False)  # the CUDA libraries packages.pip's wheels load (plan.wheel_needs)
    slim: LeaveOutPlan | None = field(repr=False)  # what the runtime image leaves out (plan.slim); None: keeps all
    strip: StripPlan | None = field(repr=False)  # the symbol tables it strips (plan.slim); None: strips nothing
    base_part: BasePart = field(repr=False)  # FROM reference and digest, family, package manager, paths, user
    installer_part: InstallerPart = field(repr=False)  # Python setup, runtime apt set, context files, refusals
    expected: Expected = field(repr=False)  # what the smoke probe compares the image against (plan.expected)
    preflight: Mapping[str, Any] = field(repr=False)  # what the image's preflight checks (plan.preflight)
    node_selection: Selection | None = field(repr=False)  # the cluster nodes it runs on (plan.selection); None: no GPU
    own_env: Mapping[str, str] = field(repr=False)  # the variables envgen sets itself, before the profile's ``env``
    # the distribution names of NVIDIA's CUDA library wheels as the KB knows them (plan.packages.cuda_wheel_names)
    cuda_wheel_names: frozenset[str] = field(repr=False)
    notes: list[str] = field(default_factory=list)  # choices envgen made that the profile did not give
    # packages.pip entries PyPI has as an sdist only, each built in a stage of its own (plan.extensions)
    source_builds: list[SourceBuild] = field(default_factory=list)
    # packages.pip, each line read once, with its stage, extension row and source build (plan.requirements)
    requirements: tuple[PlannedRequirement, ...] = ()

    def cuda_layer(self, lock: Lock | None) -> tuple[LockEntry, ...]:
        """The NVIDIA CUDA wheels of ``lock`` that uv installs in a layer of their own, before the environment and
        the extras (``plan.installers.uv.cuda_layer``, by the names the KB gives: ``cuda_wheel_names``); () without
        a lock."""
        from envgen.plan.installers.uv import cuda_layer

        return cuda_layer(self.cuda_wheel_names, lock) if lock is not None else ()

    @property
    def nvidia_require_cuda(self) -> str | None:
        """The image's NVIDIA_REQUIRE_CUDA value (plan.require); None: no CUDA used."""
        return self.cuda.require

    @property
    def pip(self) -> list[str]:
        """Every pip pin in install order: the frameworks', then the profile's own."""
        return [*self.framework_pip, *self.user_pip]

    @property
    def environment_pip(self) -> list[str]:
        """The environment stage's set: the frameworks' pins, then the profile's lines the frameworks require
        (resolved together: ``plan.requirements``)."""
        return [*self.framework_pip, *(r.spec for r in self.requirements if r.stage == "environment")]

    @property
    def extras_pip(self) -> list[str]:
        """The extras stage's set: the profile's lines the frameworks do not need (source builds apart)."""
        return [r.spec for r in self.requirements if r.stage == "extras"]

    @property
    def pins(self) -> Pins:
        """What each installer is given: conda specs made exact, the environment stage's pip set, the extras
        stage's (source builds apart), the apt packages."""
        return Pins(conda=tuple(exact_conda(p) for p in self.user_conda), pip=tuple(self.environment_pip),
                    pip_extra=tuple(self.extras_pip), apt=tuple(self.profile.packages.apt),
                    base=tuple(self.base_constraints))

    @property
    def base_held(self) -> dict[str, str]:
        """What a ``base_provides`` base holds, PEP 503 name -> public version (a local label dropped: ``==2.6.0``
        admits the base's ``2.6.0+cu124``): its frameworks and base_provides.packages, read from ``preinstalled``;
        {} without base_provides."""
        if self.profile.base_provides is None:
            return {}
        return dict(sorted((name, version.partition("+")[0])
                           for name, _, version in map(split_pin, self.preinstalled)))

    @property
    def base_constraints(self) -> list[str]:
        """``base_held`` as pip constraints (``NAME==VERSION``): constraints.base.txt, ``-c`` of every pip
        resolution on the base and of the lock's, so that a packages.pip line whose dependencies need another
        version of one of them fails there instead of installing a second copy over the base's."""
        return [f"{name}=={version}" for name, version in self.base_held.items()]

    @property
    def extensions(self) -> list[Extension]:
        """The GPU extension packages of packages.pip (kb/data/extensions.yaml rows), in profile order."""
        return [r.extension for r in self.requirements if r.extension is not None]

    @property
    def installed_extensions(self) -> list[Extension]:
        """The extension packages envgen installs: those of ``extensions`` whose line the base does not satisfy
        (base_provides.packages); what one of the base needs at run time is the base's."""
        return installed_extensions(self.requirements)

    @property
    def conda(self) -> list[str]:
        """The conda environment's specs: python=X, then the profile's (installer conda only)."""
        if not installer_of(self.profile).conda_env:
            return []
        return [f"python={self.profile.python_version}", *self.user_conda]

    @property
    def stages(self) -> list[str]:
        """The install stages the image runs, in order (``plan.libraries.STAGES``)."""
        present = {"base": True, "conda": bool(self.conda), "environment": bool(self.environment_pip),
                   "extras": bool(self.extras_pip)}
        return [name for name in STAGES if present[name]]

    @property
    def user_lines(self) -> list[PipLine]:
        """``packages.pip`` read, the lines whose marker holds in the image (read once, by ``plan_image``)."""
        return [r.line for r in self.requirements if r.applies]

    def chosen_lock(self) -> Lock | None:
        """The lock beside the profile, checked against this plan (a lock for another target refused)."""
        return chosen_lock(self.profile, self.framework_pip, self.installer_part.runtime_apt,
                           self.base_part.lock_target)

    def chosen_platform_locks(self, lock: Lock | None) -> tuple[tuple[str, Lock], ...]:
        """Each platform's lock, by TARGETARCH, where the profile has several and ``lock`` holds them all: the files
        the render writes per platform (``plan.lock_platforms.platform_locks``); () otherwise."""
        from envgen.plan.lock_platforms import platform_locks

        return platform_locks(lock, self.profile.platforms)

    def chosen_conda_lock(self) -> str | None:
        """The explicit list beside a conda profile, checked against this plan's pins; None: none."""
        from envgen.plan.condalock import conda_lock_of

        return conda_lock_of(self.profile, self.pins.conda, self.installer_part.conda_pip)

    @property
    def env(self) -> tuple[tuple[str, str], ...]:
        """The image's environment variables (``plan.environment``): ``own_env``, then the profile's ``env``; a
        profile variable that would replace one of envgen's is refused (an InputError), raised when the render asks;
        check reports it from ``own_env``."""
        return environment(self.own_env, self.profile.env)


def installed_extensions(requirements: Sequence[PlannedRequirement]) -> list[Extension]:
    """The extension packages of ``requirements`` envgen installs (those whose line the base does not satisfy)."""
    return [r.extension for r in requirements if r.extension is not None and r.stage != "base"]


def _local(version: str, variant: TorchVariant | None) -> str:
    if variant is None or "+" in version:
        return version
    return f"{version}+{variant.tag}"


def from_pypi(stack: Stack) -> bool:
    """True when the torch build envgen chose is PyPI's plain wheel of the release (the KB row's ``pypi``) and the
    profile named no build: the pins carry no local label and no index of PyTorch's is added."""
    variant = stack.torch_variant
    return variant is not None and variant.pypi and stack.profile.torch_variant is None


def _torch_pins(stack: Stack) -> list[str]:
    profile, release = stack.profile, stack.torch_release
    variant = None if from_pypi(stack) else stack.torch_variant
    version = profile.torch_version
    if version is None:
        return []
    pins = [f"torch=={_local(version, variant)}"]
    tv = profile.frameworks.torchvision
    if tv:
        pins.append(f"torchvision=={_local(tv, variant)}")
    ta = profile.frameworks.torchaudio
    if ta:
        tagged = release.torchaudio_variant if release else True
        pins.append(f"torchaudio=={_local(ta, variant) if tagged else ta}")
    return pins


def _framework_of(pin: str) -> str:
    """The frameworks: key of a framework pin: torch==2.1.2+cu118 -> pytorch."""
    name = pin.split("==", 1)[0]
    return "pytorch" if name == "torch" else name


def _tensorflow(stack: Stack, notes: list[str]) -> tuple[list[str], list[str]]:
    """(pip pins, preinstalled) for TensorFlow."""
    profile, version = stack.profile, stack.profile.frameworks.tensorflow
    if not version:
        return [], []
    if stack.ngc is not None and stack.ngc.framework == "tensorflow":
        return [], [f"tensorflow=={stack.ngc.framework_version or version}"]
    if "tensorflow" in profile.base_frameworks:
        return [], [f"tensorflow=={version}"]
    if profile.frameworks.tensorflow_package is None:
        notes.append(f"TensorFlow {version} is installed as `{stack.tf_package}` (the distribution that "
                     f"carries {'GPU' if stack.gpu else 'CPU'} support for this release)")
    return [f"{stack.tf_package}=={version}"], []


def _slim(profile: Profile, kb: KnowledgeBase, part: InstallerPart) -> LeaveOutPlan | None:
    """What the runtime image leaves out (plan.slim): apt beyond the Python setup's own (packages.apt, compilers)
    may bring a compiler, which keeps the headers a compiler reads."""
    return leave_out_plan(profile, kb, apt_compiler=bool(set(part.runtime_apt) - set(part.python_setup.runtime_apt)))


def _strip(profile: Profile, kb: KnowledgeBase) -> StripPlan | None:
    """What the image strips (plan.strip); nothing on a base that provides the environment (base_provides: an adopted
    venv, the H200 host's userland): its files are the base's, what envgen tops up is small, and an offline server's
    imported userland cannot apt-install binutils for the strip stage (the H200 adopt run stopped there: "List
    directory /var/lib/apt/lists/partial is missing", exit 100). Decided by the profile's kind, not by whether this
    build installs anything: a profile's first packages.pip line must not move the environment layer's cache key
    (tests/pipeline/test_pipeline_layer_cache.py)."""
    return None if profile.base_provides is not None else strip_plan(profile, kb)


def expected_of(stack: Stack, cuda: CudaChoices, exts: list[Extension],
                distributions: list[ExpectedDistribution]) -> Expected:
    profile, ngc, variant = stack.profile, stack.ngc, stack.torch_variant
    provided = profile.base_frameworks
    ngc_tf = ngc is not None and ngc.framework == "tensorflow"
    return Expected(
        python=profile.python_version,
        tensorflow=(ngc.framework_version or profile.frameworks.tensorflow) if ngc is not None and ngc_tf
        else profile.frameworks.tensorflow,
        tensorflow_cuda=cuda.tensorflow,
        tensorflow_cudnn=cuda.tensorflow_cudnn,
        torch=_local(profile.frameworks.pytorch, variant) if profile.frameworks.pytorch else None,
        torch_cuda=cuda.torch,
        torchvision=profile.frameworks.torchvision,
        torchaudio=profile.frameworks.torchaudio,
        cuda=cuda.profile,
        cudnn=profile.cudnn,
        gpu_required=stack.gpu,
        arch_list=list(variant.arch_list) if variant is not None else [],
        ptx=list(variant.ptx) if variant is not None else [],
        # frameworks of the base find their own libraries: the probe derives them from what they report
        libraries=(expected_libraries(stack)
                   if not provided or stack.libraries.needs or stack.wheel_libraries.needs else None),
        gpu_targets=[ExpectedTarget(name=t.label, compute_capability=t.model.compute_capability if t.model else None)
                     for t in stack.targets],
        distributions=distributions,
        base_provides=None if profile.base_provides is None else ExpectedBase(
            python=profile.base_provides.python,
            frameworks={name: str(getattr(profile.frameworks, name)) for name in provided},
            envgen_env=None if profile.base_provides.python.startswith(f"{ENV}/") else ENV,
            packages=dict(sorted(profile.base_packages.items())) or None),
        extensions=[ExpectedExtension(package=e.row.package, module=e.row.module, version=e.version)
                    for e in exts] or None,
    )


def image_plan(stack: Stack) -> ImagePlan:
    """The plan of the profile the stack was looked up for (``plan_image`` looks it up and calls this): everything
    its readers take from the stack's rows and the knowledge base is worked out here, once."""
    profile, notes, kb = stack.profile, list[str](), stack.kb
    provided = profile.base_frameworks  # what the base image holds is not installed again
    tf_pins, preinstalled = _tensorflow(stack, notes)
    torch_pins = _torch_pins(stack)
    frameworks = [*tf_pins, *preinstalled, *torch_pins]
    preinstalled += [pin for pin in torch_pins if _framework_of(pin) in provided]
    preinstalled += [f"{name}=={version}" for name, version in profile.base_packages.items()]
    if stack.torch_variant_note and "pytorch" not in provided:
        notes.append(stack.torch_variant_note)
    notes += cuda_once_notes(stack.libraries)
    variant = stack.torch_variant if "pytorch" not in provided and not from_pypi(stack) else None
    framework_pip = [*tf_pins, *(pin for pin in torch_pins if _framework_of(pin) not in provided)]
    requirements = plan_requirements(profile, stack.pip_lines, kb, framework_pip, lambda ext: source_build(stack, ext))
    user_conda = list(profile.packages.conda) if installer_of(profile).conda_env else []
    cuda = cuda_choices(stack)
    extensions = [r.extension for r in requirements if r.extension is not None]
    preflight = preflight_document(stack, kb, cuda.tensorflow)
    part = installer_part(stack, requirements, installed_extensions(requirements))
    return ImagePlan(
        profile=profile, framework_pip=framework_pip, user_pip=list(profile.packages.pip),
        pip_index_urls=[variant.index_url] if variant is not None and not variant.find_links else [],
        pip_find_links=[variant.index_url] if variant is not None and variant.find_links else [],
        user_conda=user_conda, preinstalled=preinstalled, frameworks=frameworks, tensorflow_package=stack.tf_package,
        torch_variant=stack.torch_variant, cuda=cuda, family=stack.family, base=stack.base, ngc=stack.ngc,
        tf_build=stack.tf_build, torch_release=stack.torch_release, targets=tuple(stack.targets),
        defaults=stack.defaults, libraries=stack.libraries, wheel_libraries=stack.wheel_libraries,
        slim=_slim(profile, kb, part), base_part=base_part(stack), installer_part=part,
        strip=_strip(profile, kb),
        expected=expected_of(stack, cuda, extensions, expected_distributions(frameworks, requirements, user_conda)),
        preflight=preflight, node_selection=selection(preflight, kb),
        own_env=own_environment(profile, kb, [*framework_pip, *profile.packages.pip], cuda.require),
        cuda_wheel_names=cuda_wheel_names(kb), notes=notes,
        source_builds=[r.source_build for r in requirements if r.source_build is not None],
        requirements=requirements,
    )


def plan_image(profile: Profile, kb: KnowledgeBase) -> ImagePlan:
    """The one plan of one profile: ``check`` judges it (``CheckContext.plan``), ``render`` writes it."""
    return image_plan(resolve_rows(profile, kb))
