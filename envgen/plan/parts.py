"""The plan's base part and installer part (``ImagePlan.base_part``, ``ImagePlan.installer_part``): what the render
used to work out again from the knowledge base after it was given the plan — the FROM reference, its digest and the
user the base leaves; the Python setup, the runtime apt and compiler sets, the context files, micromamba's pin, the
refusals, the lock's target. Made here from the stack's rows; the render reads them and asks the KB nothing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from envgen.imageref import parse_ref
from envgen.kb.families import PythonSetup as SetupRow
from envgen.kb.knowledge import KnowledgeBase
from envgen.plan.base import base_refusals, lock_target_check, python_setup_row
from envgen.plan.condalock import conda_python_spec
from envgen.plan.installers import UV, ContextFile, Installer, installer_of
from envgen.plan.installers.conda import tools
from envgen.plan.installers.uv import CUDA_FILE
from envgen.plan.lock_platforms import main_arch
from envgen.plan.lockfile import Lock, find_lock, lock_target
from envgen.plan.refusals import Refused, refuse
from envgen.plan.requirements import provided_conflicts
from envgen.profile.model import Profile

if TYPE_CHECKING:
    from envgen.plan.extensions import Extension
    from envgen.plan.requirements import PlannedRequirement
    from envgen.plan.stack import Stack


# The build script that installs OS packages, by the base family's package_manager (base_families.yaml). A family
# whose manager the KB does not know (a base_provides image, any other image) is tried with apt, the manager of the
# Debian and Ubuntu images most bases derive from; a new manager is a row here, its script in templates/sh/ and its
# value in kb/families.py's BaseFamily.package_manager.
PACKAGE_SCRIPTS = {"apt": "apt-install.sh", "unknown": "apt-install.sh"}


@dataclass(frozen=True)
class BasePin:
    image: str  # as the profile names it
    from_ref: str  # what FROM gets: "image@sha256:..." when a digest is known
    digest: str | None
    local: bool
    user: str = "root"  # the user the base image leaves (its family's row): "non-root" makes each stage USER root
    packages_with: str = "apt-install.sh"  # the build script that installs packages on it (``PACKAGE_SCRIPTS``)


@dataclass(frozen=True)
class BasePart:
    """The base image as the plan settled it: its reference and digest (the lock's may replace the KB's:
    ``pin``), the family it belongs to, that family's package manager, the paths it occupies, the user it leaves,
    and the target a lock must have been made for."""

    reference: str  # profile.base, as written
    image: str  # its name:tag
    named_digest: str | None  # the digest the reference itself carries
    known_digest: str | None  # the KB row's digest (None for a locally made base)
    local: bool
    family: str
    package_manager: str
    occupies: tuple[str, ...]
    user: str
    glibc: str | None  # the C library the base carries (the KB's row; None: not known)
    lock_target: str  # lock_target(python, glibc): what a lock beside the profile must have been made for

    def pin(self, lock: Lock | None = None) -> BasePin:
        """The FROM reference: ``name:tag@sha256:...`` from the reference, the lock (registry digest) or the KB; a
        locally made base keeps its tag (the lock's image ID is checked by the build instead)."""
        digest = self.known_digest
        if lock is not None and lock.base_digest and self.named_digest is None:
            digest = lock.base_digest
        if self.named_digest:
            from_ref, digest = self.reference, self.named_digest
        elif digest:
            from_ref = f"{self.reference}@{digest}"
        else:
            from_ref = self.reference
        return BasePin(image=self.image, from_ref=from_ref, digest=digest, local=self.local, user=self.user,
                       packages_with=PACKAGE_SCRIPTS[self.package_manager])


@dataclass(frozen=True)
class PythonSetup:
    key: str
    build_apt: tuple[str, ...]
    runtime_apt: tuple[str, ...]
    venv_args: tuple[str, ...]
    interpreter: str = "python3"  # what makes the venv: the base's python3, or base_provides.python
    # base_provides: the interpreter's own site directories go on /opt/env's path (a .pth), since a venv
    # made from another venv does not see that venv's packages
    base_site: bool = False
    # False: no venv is made; the base's own /opt/env (an image envgen built) is the environment, and the image's
    # packages go on top of it
    venv: bool = True


@dataclass(frozen=True)
class InstallerPart:
    """The installer as the plan settled it (``plan.installers``): its Python setup, the runtime apt set (the
    setup's, packages.apt, the compilers a runtime-compiling extension needs), the context files it adds, the tools
    it pins (micromamba, conda's pip), and what the render refuses (the base's content where the environment goes,
    packages.pip lines the base's versions contradict)."""

    installer: Installer
    python_setup: PythonSetup
    runtime_apt: tuple[str, ...]
    context_files: tuple[ContextFile, ...]
    micromamba: Mapping[str, str]
    fetched: Mapping[str, str]  # the tools.yaml row of the tool the build downloads for it ({}: none)
    conda_pip: str
    conda_python: str  # the conda environment's python spec (``plan.condalock.conda_python_spec``)
    refusals: tuple[Refused, ...]

    @property
    def name(self) -> str:
        return self.installer.name

    def uv_install(self, lock: Lock | None, source_builds: bool) -> bool:
        """A locked pip profile whose lock names uv installs with uv under BuildKit (``plan.installers.uv``)."""
        locked_uv = lock is not None and lock.uv is not None and lock.uv_wheel is not None
        return UV.applies(self.installer, locked_uv, self.python_setup.key, source_builds)

    def files(self, uv: bool, cuda_layer: bool = False) -> tuple[ContextFile, ...]:
        """The context files this installer adds (uv's when it installs with uv; the CUDA layer's requirements when
        uv installs one: ``installers.uv.cuda_layer``)."""
        return self.context_files + (UV.context_files if uv else ()) + ((CUDA_FILE,) if uv and cuda_layer else ())


def python_setup(profile: Profile, kb: KnowledgeBase) -> PythonSetup:
    """How the environment gets its Python (the KB's python_setups row for the profile)."""
    return setup_of(profile, python_setup_row(profile, kb))


def setup_of(profile: Profile, row: SetupRow) -> PythonSetup:
    return PythonSetup(row.name, tuple(row.build_apt), tuple(row.runtime_apt), tuple(row.venv_args),
                       profile.base_provides.python if profile.base_provides else "python3", row.base_site,
                       row.venv)


def base_part(stack: Stack) -> BasePart:
    profile, kb, family = stack.profile, stack.kb, stack.family
    named, glibc = parse_ref(profile.base), kb.glibc(profile.base)
    return BasePart(reference=profile.base, image=named.tagged, named_digest=named.digest,
                    known_digest=None if profile.local_base else (stack.base.digest if stack.base else None),
                    local=profile.local_base, family=family.name, package_manager=family.package_manager,
                    occupies=tuple(family.occupies), user=family.user, glibc=glibc,
                    lock_target=lock_target(profile.python_minor, glibc, main_arch(profile.platforms)))


def runtime_compiler_apt(stack: Stack, installed: Sequence[Extension], setup: Sequence[str]) -> tuple[str, ...]:
    """apt packages the image needs because a ``packages.pip`` entry compiles C at run time (GPU profiles): the
    base family's C compiler with the C library headers, and the headers of the Python the environment runs where
    its setup names them (``setup``: the system Python of Debian and Ubuntu bases; python images and conda
    environments carry their own). A package the base holds (base_provides.packages) gets none: the base brings
    what it runs with."""
    if not stack.profile.gpu.required or not any(e.row.runtime_cc for e in installed):
        return ()
    return tuple(stack.family.compiler_apt) + tuple(setup)


def installer_part(stack: Stack, requirements: Sequence[PlannedRequirement],
                   installed: Sequence[Extension]) -> InstallerPart:
    """The installer part of the plan of ``stack`` (``requirements``: packages.pip as planned; ``installed``: the
    extension packages envgen installs)."""
    profile, kb = stack.profile, stack.kb
    row = python_setup_row(profile, kb)
    setup = setup_of(profile, row)
    compilers = runtime_compiler_apt(stack, installed, row.headers_apt)
    loaded, installer = tools(), installer_of(profile)
    return InstallerPart(
        installer=installer, python_setup=setup,
        runtime_apt=tuple(sorted(set(setup.runtime_apt) | set(profile.packages.apt) | set(compilers))),
        context_files=installer.context_files,
        micromamba={k: str(v) for k, v in loaded["micromamba"].items()},
        fetched={k: str(v) for k, v in loaded[installer.fetched_tool].items()} if installer.fetched_tool else {},
        conda_pip=str(loaded["conda_pip"]["version"]),  # what plan.condalock.conda_pip_version reads
        conda_python=conda_python_spec(profile.python_version),
        refusals=(*base_refusals(profile, kb), *provided_conflicts(requirements)))


def chosen_lock(profile: Profile, framework: Sequence[str], runtime_apt: Sequence[str], target: str) -> Lock | None:
    """The lock beside the profile, when there is one, checked against the profile's inputs; a lock made for another
    target than ``target`` is refused (plan.refusals: lock-target)."""
    lock = find_lock(profile, framework, runtime_apt)
    if lock is not None:
        refuse(lock_target_check(lock.field("target"), str(lock.path or "lock"), profile, target))
    return lock


