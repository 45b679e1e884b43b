"""The Dockerfile's stages, worked out in Python: one installer class per way of making the environment (venv + pip,
micromamba, uv; the first two share the staged runtime: the extras stage, a stage per source build, the runtime
stage that copies both results in), each returning the ordered stages (``render.stages``) for one profile. The
template (``templates/docker/Dockerfile.j2``) writes them in that order through the emitter (``steps.Emitter``, the
one BuildKit/classic switch); it decides neither the order nor which stage exists. Adding an installer is a class
here; the blocks every installer's stages are made of are in ``render.blocks``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import replace
from typing import Any, ClassVar

from envgen import layout
from envgen.paths import build_scripts_dir
from envgen.plan.installers.uv import CUDA_FILE
from envgen.render.blocks import (
    apt_install,
    arch_args,
    args,
    base_stage,
    copy_requirements,
    create_user,
    locked_file,
    pip_sources,
    strip_stage,
)
from envgen.render.jinja import ARG_LINE, shell_dq, words
from envgen.render.plan import TemplateInput as Plan
from envgen.render.slim import slim_tail, slimmed
from envgen.render.stages import SHELL_FORM, Bind, CopyFrom, Instruction, Run, Stage, Step, Wheelhouse
from envgen.render.steps import NEXT_LINE, Emitter, script_closures
from envgen.vocabulary import ARGS_CONDA, ARGS_PIP, ARGS_PROXY, SOURCE_DATE_EPOCH_DEFAULT

SRCBUILD_APT = ("build-essential", "python3-dev")  # what a source build stage on a devel twin adds
PIP_CACHE = "/root/.cache/pip"
WORKDIR = Instruction("WORKDIR", layout.WORK)
# the comments the Dockerfiles carry above a step, one string a line
PIP_LAYER = ("The environment layer: the framework and its pinned dependencies.",)
CONDA_LAYER = ("The environment layer: conda packages, then the framework's pip pins (environment.yml's pip",
               "section). Mirrors and the proxy CA go into a build-time rc file that is not left behind.")
CONDA_MIRRORS = ("CONDA_CHANNEL_MIRRORS: space-separated NAME=URL pairs: channel NAME is fetched from URL (a mirror of "
                 "it).",)
UV_LAYER = "The environment layer: the framework and every package it needs, exactly as locked."
UV_EXTRAS_LAYER = "The extras layer: what packages.pip adds (changing it keeps the environment layer)."
UV_CUDA_LAYER = ("The CUDA layer: the lock's NVIDIA CUDA wheels, first (a new framework or package keeps this "
                 "layer).")


class Installer(ABC):
    """What every installer reads: the pip sources, pip.sh's install command; it gives the stages in order and the
    comment that names them at the top of the file."""

    name: ClassVar[str] = ""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.sources = pip_sources(plan)
        self.pip_install = f"{self.sources}sh {layout.SCRIPTS}/pip.sh install --no-warn-script-location"
        # a base_provides base, unlocked: every resolving pip install is constrained to the versions the base holds
        # (constraints.base.txt; pip.sh names a conflict); a lock resolved with them already (installs --no-deps)
        self.constrain = f" -c {layout.BASE_CONSTRAINTS}" if plan.pins.base and plan.lock is None else ""

    @abstractmethod
    def overview(self) -> tuple[str, ...]:
        """The comment lines at the top of the file that name the stages."""

    @property
    def constraints_file(self) -> str:
        """`` constraints.base.txt`` where the installs are constrained (a COPY's source), else ""."""
        return f" {layout.BASE_CONSTRAINTS}" if self.constrain else ""

    def constraints_copy(self) -> tuple[Instruction, ...]:
        """constraints.base.txt into a fresh stage's working directory, where its installs are constrained."""
        return (Instruction("COPY", f"{layout.BASE_CONSTRAINTS} {layout.WORK}/"),) if self.constrain else ()

    @abstractmethod
    def stages(self) -> tuple[Stage, ...]:
        """The stages in order, the runtime stage (what the image ships) last."""


class StagedRuntime(Installer):
    """The environment made in a build stage (``build_stage``); then the extras stage (extras.sh), a stage per
    source build (srcbuild.sh), and the runtime stage that copies both results in."""

    extras_gap: ClassVar[int] = 1  # blank lines before the extras stage

    @abstractmethod
    def build_stage(self) -> Stage:
        """The stage that makes the environment (at layout.ENV)."""

    def overview(self) -> tuple[str, ...]:
        count = len(self.plan.source_builds)
        builds = f" -> srcbuild1..{count} (sdist-only packages)" if count else ""
        return (f"Stages: build (environment) -> extras (profile.packages.pip){builds} -> runtime (what the image "
                "ships).",)

    def stages(self) -> tuple[Stage, ...]:
        builds = self.source_build_stages()
        extras = [self.extras_stage(), *builds]
        if (self.plan.lock.extras if self.plan.lock else self.plan.pins.pip_extra) or builds:  # what extras installs
            extras[-1] = slimmed(extras[-1], self.plan, layout.EXTRAS)
        return (*strip_stage(self.plan), slimmed(self.build_stage(), self.plan, layout.ENV), *extras,
                self.runtime_stage(builds[-1].name if builds else "extras"))

    def extras_stage(self) -> Stage:
        """Extra pip packages (profile.packages.pip) installed with --prefix into the extras directory, beside the
        environment, merged into it in the runtime stage: changing one leaves the heavy environment layer (and its
        layer ID) untouched. Build args are scoped to the stage that declares them, so the pip routes are declared
        again. Unlocked, the extras are constrained by the environment's own set (--constrain); locked, `envgen lock`
        has refused an extra that is in the environment already (split_sets)."""
        plan = self.plan
        if plan.lock is not None:
            options = f"--no-warn-script-location{ARG_LINE}--require-hashes --no-deps --prefix {layout.EXTRAS}"
        else:
            options = f"--constrain --no-warn-script-location{ARG_LINE}--prefix {layout.EXTRAS}"
        install = (Run(f"{self.sources}sh {layout.SCRIPTS}/extras.sh {options} -r requirements.extra.txt"
                       f"{self.constrain}",
                       ("extras.sh",), (PIP_CACHE,), secrets=True, wheels=True)
                   if (plan.lock.extras if plan.lock else plan.pins.pip_extra) else Run(f"mkdir -p {layout.EXTRAS}"))
        return Stage("extras", "build", (*args(ARGS_PIP), *arch_args(plan), WORKDIR,
                                         copy_requirements(plan, "requirements.extra.txt"), install),
                     gap=self.extras_gap)

    def source_build_stages(self) -> list[Stage]:
        """Source builds (plan.extensions): packages.pip entries PyPI has as an sdist only, each built in a stage of
        its own into the extras directory (srcbuild.sh): in the base's devel twin when the base has no nvcc (the
        environment and the extras copied in), else on the stage before it; with --no-build-isolation (setup.py
        imports torch) and its build requirements in a directory that stays out of the image."""
        plan, stages, prev = self.plan, [], "extras"
        for index, sb in enumerate(plan.source_builds, start=1):
            where = f"in {sb.stage_base} (nvcc) " if sb.stage_base else ""
            variables = " ".join(f"{key}={value}" for key, value in sb.env)
            fresh: tuple[Step, ...] = ()
            if sb.stage_base:
                fresh = (Instruction("SHELL", SHELL_FORM),
                         *apt_install(plan, SRCBUILD_APT + plan.apt_pins(plan.python_setup.build_apt)),
                         CopyFrom("build", layout.ENV, layout.ENV), CopyFrom(prev, layout.EXTRAS, layout.EXTRAS),
                         *self.constraints_copy())
            env = " ".join(f'{key}="{value}"' for key, value in sb.env) + NEXT_LINE if sb.env else ""
            build = Run(f"{self.sources}{env}sh {layout.SCRIPTS}/srcbuild.sh {shell_dq(' '.join(sb.build_requires))}"
                        f"{ARG_LINE}--no-build-isolation --prefix {layout.EXTRAS} {shell_dq(sb.spec)}{self.constrain}",
                        ("srcbuild.sh",), (PIP_CACHE,), secrets=True, wheels=True)
            stages.append(Stage(f"srcbuild{index}", sb.stage_base or prev, (*fresh, *args(ARGS_PIP), WORKDIR, build),
                                (f"{sb.spec}: PyPI has an sdist only; built {where}with {variables}",)))
            prev = f"srcbuild{index}"
        return stages

    def runtime_stage(self, extras_from: str) -> Stage:
        """The same base, runtime packages only, the environment and the extras copied in. The environment is
        copied unless the build stage made none (on top of an envgen image with nothing for the environment layer:
        the base's is already there)."""
        plan = self.plan
        copy_env = plan.python_setup.venv or bool(plan.pins.pip) or bool(plan.lock and plan.lock.environment)
        return base_stage(plan, "runtime",
                          *apt_install(plan, plan.apt_pins(plan.runtime_apt) if plan.runtime_apt else ()),
                          create_user(plan), *((CopyFrom("build", layout.ENV, layout.ENV),) if copy_env else ()),
                          CopyFrom(extras_from, layout.EXTRAS + "/", layout.ENV + "/"))


class VenvPip(StagedRuntime):
    """A venv made by the base's Python (or base_provides' interpreter, its site directories on the venv's path:
    base-site.sh), the lock's or the framework's pins installed by pip.sh."""

    name = "pip"

    def environment_install(self) -> tuple[tuple[str, ...], str]:
        """The environment set (the scripts it runs, the command): the lock's hashed set, the framework's pins, or
        none."""
        lock, pins = self.plan.lock, self.plan.pins
        if lock and lock.environment:
            return ("pip.sh",), f"{self.pip_install}{ARG_LINE}--require-hashes --no-deps -r requirements.lock"
        if pins.pip and not lock:
            return ("pip.sh",), f"{self.pip_install} -r requirements.lock{self.constrain}"
        return (), 'echo "requirements.lock pins nothing (no framework, or the base image carries it)"'

    def build_stage(self) -> Stage:
        """The environment layer: the venv; with base_provides, the base interpreter's site directories on its path
        (base-site.sh); then the lock's hashed set, the framework's pins, or nothing. On top of an envgen image (a
        setup that makes no venv) the base's environment takes the packages."""
        setup = self.plan.python_setup
        venv = (f"{setup.interpreter} -m venv{''.join(' ' + a for a in setup.venv_args)} {layout.ENV};"
                if setup.venv else f'echo "the environment is the base\'s own {layout.ENV} (an image envgen built): '
                'packages go on top of it";')
        site = f"sh {layout.SCRIPTS}/base-site.sh {setup.interpreter} envgen-base.pth;" if setup.base_site else ""
        scripts, command = self.environment_install()
        install = Run("".join(part + NEXT_LINE for part in (venv, site) if part) + command,
                      (*scripts, *(("base-site.sh",) if setup.base_site else ())), (PIP_CACHE,), secrets=True,
                      wheels=True, comment=PIP_LAYER)
        return base_stage(self.plan, "build", *apt_install(self.plan, self.plan.apt_pins(setup.build_apt)),
                          *args(ARGS_PIP), *arch_args(self.plan),
                          Wheelhouse(), WORKDIR,
                          copy_requirements(self.plan, "requirements.lock", self.constraints_file), install)


class Micromamba(StagedRuntime):
    """micromamba (micromamba.sh, pinned and checksummed) creates the environment from environment.yml or the lock's
    explicit list (conda-env.sh), the lock's pip set on top (pip.sh)."""

    name = "conda"
    extras_gap = 2

    def build_stage(self) -> Stage:
        plan, tool = self.plan, self.plan.micromamba
        locked = plan.conda_lock is not None
        pip = locked and bool(plan.pins.pip)
        files = "environment.yml environment.lock.txt requirements.lock" if locked else "environment.yml"
        command = (f"{self.sources}sh {layout.SCRIPTS}/conda-env.sh "
                   + ("environment.lock.txt" if locked else "environment.yml")
                   + (f";{NEXT_LINE}{self.pip_install} -r requirements.lock" if pip else ""))
        environment = Run(command, ("conda-env.sh", *(("pip.sh",) if pip else ())),
                          (f"{layout.MICROMAMBA_ROOT}/pkgs", PIP_CACHE), secrets=True, wheels=True, comment=CONDA_LAYER)
        return base_stage(
            plan, "build", *apt_install(plan, plan.python_setup.build_apt),
            *args((f"MICROMAMBA_URL={tool['url']}", f"MICROMAMBA_SHA256={tool['sha256']}"), (
                f"micromamba {tool['version']}, checked against its sha256 (source: {tool['source']}).",
                "Override both build args together to use another release.")),
            Run(f'sh {layout.SCRIPTS}/micromamba.sh "$MICROMAMBA_URL" "$MICROMAMBA_SHA256"', ("micromamba.sh",),
                secrets=True),
            *args(ARGS_PIP), *args(ARGS_CONDA, CONDA_MIRRORS),
            Instruction("ENV", f"MAMBA_ROOT_PREFIX={layout.MICROMAMBA_ROOT}"), Wheelhouse(), WORKDIR,
            Instruction("COPY", f"{files} {layout.WORK}/"), environment)


class Uv(Installer):
    """Locked pip profiles under BuildKit: uv installs the lock's sets straight into the image's environment, no
    build stage to copy from. The system stage (base, runtime apt packages, user), the uv stage (uv's pinned wheel
    unpacked, sha256-checked), then the runtime stage FROM system with two install layers (uv.sh) with
    `--require-hashes --no-deps` (nothing is resolved), each byte-compiled after the leave-out (compile.sh, as uv's
    `--compile-bytecode` does, with the lock's SOURCE_DATE_EPOCH: hash-based .pyc files, the same bytes every build);
    uv is bind-mounted from its stage."""

    name = "uv"

    def __init__(self, plan: Plan) -> None:
        super().__init__(plan)
        lock = plan.lock
        assert lock is not None and lock.uv is not None and lock.uv_wheel is not None, "plan.uv_install says so"
        self.lock, self.uv, self.wheel = lock, lock.uv, lock.uv_wheel

    def overview(self) -> tuple[str, ...]:
        rest = ("unpacked) -> runtime, where uv installs the lock's NVIDIA CUDA wheels, its environment set and its",
                f"extras set into {layout.ENV}, each in a layer of its own. No build stage to copy from: caches stay",
                "in cache mounts, uv is bind-mounted from its stage and never lands in the image.") \
            if self.plan.cuda_wheels else (
                "unpacked) -> runtime, where uv installs the lock's environment set and then its extras set into",
                f"{layout.ENV} in two layers of their own. No build stage to copy from: caches stay in cache mounts,",
                "uv is bind-mounted from its stage and never lands in the image.")
        return ("Locked profile, installed with uv: system (base + runtime apt packages) -> uv (uv's pinned wheel,",
                *rest)

    def stages(self) -> tuple[Stage, ...]:
        plan = self.plan
        fetch = Run(self.fetch_command(), ("with-secrets.sh",), secrets=True, wheels=True,
                    binds=(Bind("envgen/fetch-uv.py", "/tmp/fetch-uv.py"),))
        epoch = self.lock.source_date_epoch or SOURCE_DATE_EPOCH_DEFAULT
        return (
            base_stage(plan, "system", *apt_install(plan, plan.apt_pins(plan.runtime_apt), cache=False),
                       create_user(plan)),
            Stage("uv", "system", (*args(ARGS_PROXY), *arch_args(plan), fetch), (
                f"uv {self.uv.version} from its wheel (the lock's [tools] entry, sha256-checked): bind-mounted "
                "below.",)),
            *strip_stage(plan),
            Stage("runtime", "system",
                  (*args((*ARGS_PIP, "ENVGEN_CACHE_ID", f"SOURCE_DATE_EPOCH={epoch}")), *arch_args(plan),
                   *self.install_layers())),
        )

    def fetch_command(self) -> str:
        """fetch-uv.py with uv's wheel and sha256; where the plan gives one lock per platform, the TARGETARCH's
        (each platform's lock names uv's wheel for its machine)."""
        fetch = f"sh {layout.SCRIPTS}/with-secrets.sh python3 /tmp/fetch-uv.py"
        where = f"{layout.WHEELS} {layout.UV_DIR}"
        if not self.plan.platform_locks:
            return f'{fetch} "{self.wheel}"{ARG_LINE}{self.uv.sha256[0]} {where}'
        cases = "".join(f'    {arch}) wheel="{lock.uv_wheel}"{ARG_LINE}sha256={lock.uv.sha256[0]} ;;{NEXT_LINE}'
                        for arch, lock in self.plan.platform_locks if lock.uv is not None)
        return (f'case "$TARGETARCH" in{NEXT_LINE}{cases}    *) echo "envgen: the lock holds no uv wheel for '
                f'$TARGETARCH" >&2; exit 1 ;;{NEXT_LINE}esac;{NEXT_LINE}{fetch} "$wheel" "$sha256" {where}')

    def install_layers(self) -> tuple[Run, ...]:
        """The CUDA layer where the plan makes one (``plan.cuda_wheels``: the venv and the lock's NVIDIA wheels),
        the environment layer and the extras layer (what packages.pip adds; it runs nothing when that is
        nothing)."""
        install = (f"sh {layout.SCRIPTS}/uv.sh pip install --python {layout.ENV}/bin/python --require-hashes "
                   f"--no-deps --only-binary :all:{ARG_LINE}-r {layout.WORK}")
        venv = (f'sh {layout.SCRIPTS}/uv.sh venv --quiet --python "$(command -v python3)"'
                f'{words(self.plan.python_setup.venv_args, " ")} {layout.ENV};{NEXT_LINE}')
        cuda = (self.compiled(self.layer(f"{venv}{self.sources}{install}/{CUDA_FILE.path}", ("uv.sh",),
                                         CUDA_FILE.path, UV_CUDA_LAYER)),) if self.plan.cuda_wheels else ()
        environment = self.compiled(self.layer(f"{'' if cuda else venv}{self.sources}{install}/requirements.lock",
                                               ("uv.sh",), "requirements.lock", UV_LAYER))
        extras = any(lock.extras for lock in (self.lock, *(found for _, found in self.plan.platform_locks)))
        added = self.layer(f"{self.sources}{install}/requirements.extra.txt" if extras
                           else 'echo "no extra packages (packages.pip is empty)"', ("uv.sh",) if extras else (),
                           "requirements.extra.txt", UV_EXTRAS_LAYER)
        return *cuda, environment, self.compiled(added) if extras else added

    def compiled(self, run: Run) -> Run:
        """An install layer followed, in the same RUN, by the leave-out (``slim_tail``) and then the byte-compiling
        of what is left (compile.sh): nothing the leave-out removes is compiled first."""
        run = slim_tail(self.plan, run, layout.ENV)
        return replace(run, command=f"{run.command};{NEXT_LINE}sh {layout.SCRIPTS}/compile.sh {layout.ENV}/bin/python",
                       scripts=(*run.scripts, "compile.sh"))

    def layer(self, command: str, scripts: tuple[str, ...], requirements: str, comment: str) -> Run:
        """One install layer: uv's cache, the secrets, the wheelhouse, uv bound from its stage and the one
        requirements file it installs bound from the context (the TARGETARCH's, where each platform has one)."""
        return Run(command, scripts, ("/root/.cache/uv",), secrets=True, wheels=True, comment=(comment,),
                   binds=(Bind(layout.UV_DIR, layout.UV_DIR, stage="uv"),
                          Bind(locked_file(self.plan, requirements), f"{layout.WORK}/{requirements}")))


def installer_for(plan: Plan, buildkit: bool) -> Installer:
    """The installer that writes ``plan``'s stages for one builder: uv for a locked pip profile under BuildKit
    (``plan.uv_install``), else the profile's own."""
    if buildkit and plan.uv_install:
        return Uv(plan)
    if not buildkit and plan.platform_locks:  # the classic builder has no TARGETARCH: the lock's main sets
        plan = replace(plan, platform_locks=())
    return {cls.name: cls for cls in (VenvPip, Micromamba)}[plan.installer](plan)


def dockerfile_context(plan: Plan, buildkit: bool) -> dict[str, Any]:
    """What templates/docker reads beside the plan's own context (``TemplateInput.context``): the stages in order
    with the comment that names them, and the emitter (the one switch between the BuildKit and classic variants)
    with the build scripts' closures."""
    installer = installer_for(plan, buildkit)
    return {"stages": installer.stages(), "overview": installer.overview(),
            "emit": Emitter(buildkit, script_closures(build_scripts_dir()))}
