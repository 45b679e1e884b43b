"""The Dockerfile's words worked out in Python, so the templates (``templates/docker``) keep only the file's
shape: one installer class per installer block (venv + pip, micromamba, uv; the first two share the staged runtime:
extras, source builds, the runtime stage), each giving its block the commands with their arguments and the scripts
each step runs; the base's comment and the pip sources every block reads; and the emitter (``steps.Emitter``) that
writes what each RUN reaches for one builder. Adding an installer is a class here and a block in
``templates/docker/installers/``."""

from __future__ import annotations

from typing import Any, ClassVar

from envgen import layout
from envgen.mirrors import pytorch_shell
from envgen.paths import build_scripts_dir
from envgen.render.jinja import ARG_LINE, shell_dq
from envgen.render.steps import NEXT_LINE, Emitter, script_closures

# render.plan.TemplateInput, which calls dockerfile_context from its template context (so not imported here)
Plan = Any
SRCBUILD_APT = ("build-essential", "python3-dev")  # what a source build stage on a devel twin adds


def pip_sources(plan: Plan) -> str:
    """The framework's wheel sources for pip.sh/uv.sh (lib-pip.sh), each through the build arg PYTORCH_WHEELS where
    it is download.pytorch.org: assignments in front of the command, on a continued line of their own."""
    out = []
    if plan.pip.find_links:
        out.append('ENVGEN_FIND_LINKS="' + " ".join(pytorch_shell(u) for u in plan.pip.find_links) + '"')
    if plan.pip.index_urls:
        out.append('ENVGEN_INDEX_URLS="' + " ".join(pytorch_shell(u) for u in plan.pip.index_urls) + '"')
    return "".join(word + NEXT_LINE for word in out)


def base_comment(plan: Plan) -> str:
    if plan.base.digest:
        return f"base {plan.base.image}, pinned by digest"
    if plan.base.local:
        return "local base image: no registry digest (local_base: true)"
    return f"base {plan.base.image} is not digest-pinned (no digest known); `envgen check` reports it"


class Installer:
    """What every installer block reads: the pip sources, pip.sh's install command."""

    block: ClassVar[str] = ""  # templates/docker/installers/<block>.j2

    def __init__(self, plan: Plan) -> None:
        self.plan = plan
        self.sources = pip_sources(plan)
        self.pip_install = f"{self.sources}sh {layout.SCRIPTS}/pip.sh install --no-warn-script-location"

    def words(self) -> dict[str, Any]:
        return {"pip_sources": self.sources, "pip_install": self.pip_install}


class StagedRuntime(Installer):
    """The environment made in a build stage: the extras stage (extras.sh), a stage per source build (srcbuild.sh),
    and the runtime stage that copies both results in."""

    def extras_install(self) -> str:
        """extras.sh's arguments before ``-r requirements.extra.txt``: locked, hashed and without dependencies;
        unlocked, constrained by the environment's own versions."""
        if self.plan.lock is not None:
            return f"--no-warn-script-location{ARG_LINE}--require-hashes --no-deps --prefix {layout.EXTRAS}"
        return f"--constrain --no-warn-script-location{ARG_LINE}--prefix {layout.EXTRAS}"

    def source_build_stages(self) -> list[dict[str, Any]]:
        """One stage per sdist-only package, each FROM the devel twin (``fresh``) or the stage before it."""
        plan, stages, prev = self.plan, [], "extras"
        for index, sb in enumerate(plan.source_builds, start=1):
            variables = " ".join(f"{key}={value}" for key, value in sb.env)
            where = f"in {sb.stage_base} (nvcc) " if sb.stage_base else ""
            stages.append({
                "stage": f"srcbuild{index}", "prev": prev, "base": sb.stage_base or prev,
                "fresh": sb.stage_base is not None,
                "comment": f"{sb.spec}: PyPI has an sdist only; built {where}with {variables}",
                "apt": SRCBUILD_APT + plan.apt_pins(plan.python_setup.build_apt),
                "env": " ".join(f'{key}="{value}"' for key, value in sb.env) + NEXT_LINE if sb.env else "",
                "build_requires": shell_dq(" ".join(sb.build_requires)), "spec": shell_dq(sb.spec),
            })
            prev = f"srcbuild{index}"
        return stages

    def words(self) -> dict[str, Any]:
        stages = self.source_build_stages()
        plan = self.plan
        # the runtime stage copies the environment the build stage made, unless it made none (on top of an envgen
        # image with nothing for the environment layer: the base's is already there)
        copy_env = plan.python_setup.venv or bool(plan.pins.pip) or bool(plan.lock and plan.lock.environment)
        return {**super().words(), "extras_install": self.extras_install(), "source_build_stages": stages,
                "copy_env": copy_env,
                "source_builds_comment": f" -> srcbuild1..{len(stages)} (sdist-only packages)" if stages else "",
                "last_extras_stage": stages[-1]["stage"] if stages else "extras"}


class VenvPip(StagedRuntime):
    """A venv made by the base's Python (or base_provides' interpreter, its site directories on the venv's path:
    base-site.sh), the lock's or the framework's pins installed by pip.sh."""

    block = "pip"

    def environment_install(self, lock: Any, pins: Any) -> dict[str, str]:
        """The environment set (the script it runs, the command): the lock's hashed set, the framework's pins, or
        none. Called by the template with its ``lock`` and ``pins``."""
        if lock and lock.environment:
            return {"script": "pip.sh",
                    "command": f"{self.pip_install}{ARG_LINE}--require-hashes --no-deps -r requirements.lock"}
        if pins.pip and not lock:
            return {"script": "pip.sh", "command": f"{self.pip_install} -r requirements.lock"}
        return {"script": "", "command": 'echo "requirements.lock pins nothing (no framework, or the base image '
                'carries it)"'}

    def words(self) -> dict[str, Any]:
        setup = self.plan.python_setup
        site = (f"sh {layout.SCRIPTS}/base-site.sh {setup.interpreter} envgen-base.pth; \\\n    "
                if setup.base_site else "")
        # on top of an envgen image (a setup that makes no venv) the base's environment takes the packages
        venv = (f"{setup.interpreter} -m venv{''.join(' ' + a for a in setup.venv_args)} {layout.ENV}; \\\n    "
                if setup.venv else f'echo "the environment is the base\'s own {layout.ENV} (an image envgen built): '
                'packages go on top of it"; \\\n    ')
        return {**super().words(), "environment_install": self.environment_install, "venv_command": venv,
                "base_site": "base-site.sh" if setup.base_site else "", "base_site_command": site}


class Micromamba(StagedRuntime):
    """micromamba (micromamba.sh) creates the environment from environment.yml or the lock's explicit list
    (conda-env.sh), the lock's pip set on top (pip.sh)."""

    block = "conda"

    def words(self) -> dict[str, Any]:
        locked = self.plan.conda_lock is not None
        pip = locked and bool(self.plan.pins.pip)
        files = "environment.yml environment.lock.txt requirements.lock" if locked else "environment.yml"
        return {**super().words(), "conda_files": files,
                "conda_command": ("environment.lock.txt" if locked else "environment.yml")
                + (f"; \\\n    {self.pip_install} -r requirements.lock" if pip else ""),
                "conda_pip_scripts": ["pip.sh"] if pip else []}


class Uv(Installer):
    """Locked pip profiles under BuildKit: uv (uv.sh, bind-mounted from its stage) installs the lock's two sets into
    the image's environment in two layers of their own."""

    block = "uv"

    def words(self) -> dict[str, Any]:
        lock = self.plan.lock
        uv_bind = f"from=uv,source={layout.UV_DIR},target={layout.UV_DIR}"
        install = (f"sh {layout.SCRIPTS}/uv.sh pip install --python {layout.ENV}/bin/python --require-hashes "
                   f"--no-deps --only-binary :all:{ARG_LINE}--compile-bytecode -r {layout.WORK}")
        extras = lock is not None and bool(lock.extras)
        return {**super().words(), "uv": {
            "install": install,
            "environment_binds": [uv_bind, f"source=requirements.lock,target={layout.WORK}/requirements.lock"],
            "extras_binds": [uv_bind, f"source=requirements.extra.txt,target={layout.WORK}/requirements.extra.txt"],
            "extras_scripts": ["uv.sh"] if extras else [],
            "extras_command": (f"{self.sources}{install}/requirements.extra.txt" if extras
                               else 'echo "no extra packages (packages.pip is empty)"'),
        }}


INSTALLERS: dict[str, type[Installer]] = {cls.block: cls for cls in (VenvPip, Micromamba, Uv)}


def dockerfile_context(plan: Plan, buildkit: bool, block: str) -> dict[str, Any]:
    """What templates/docker reads beside the plan's own values: the installer block's words, the base's comment,
    and the emitter (the one switch between the BuildKit and classic variants) with the build scripts' closures."""
    return {**INSTALLERS[block](plan).words(), "emit": Emitter(buildkit, script_closures(build_scripts_dir())),
            "layout": layout, "base_comment": base_comment(plan)}
