"""The Dockerfile's words worked out in Python, so the templates (``templates/docker``) keep only the file's
shape: the installers' commands with their arguments, the base's comment, the source-build stages, the ENV and
LABEL instructions, and the emitter (``steps.Emitter``) that writes each RUN's mounts for one builder."""

from __future__ import annotations

from typing import Any

from envgen import layout
from envgen.mirrors import pytorch_shell
from envgen.paths import build_scripts_dir
from envgen.render.jinja import ARG_LINE, shell_dq
from envgen.render.steps import NEXT_LINE, Emitter, script_closures

# render.plan.RenderPlan, which calls dockerfile_context from its template context (so not imported here)
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


def extras_install(plan: Plan) -> str:
    """extras.sh's arguments before ``-r requirements.extra.txt``: locked, hashed and without dependencies;
    unlocked, constrained by the environment's own versions."""
    if plan.lock is not None:
        return f"--no-warn-script-location{ARG_LINE}--require-hashes --no-deps --prefix {layout.EXTRAS}"
    return f"--constrain --no-warn-script-location{ARG_LINE}--prefix {layout.EXTRAS}"


def source_build_stages(plan: Plan) -> list[dict[str, Any]]:
    """One stage per sdist-only package, each FROM the devel twin (``fresh``) or the stage before it."""
    stages, prev = [], "extras"
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


def uv_steps(plan: Plan, sources: str) -> dict[str, Any]:
    """The uv installer's two layers (uv.sh): what each binds, and the extras layer's command."""
    uv_bind = f"from=uv,source={layout.UV_DIR},target={layout.UV_DIR}"
    install = (f"sh {layout.SCRIPTS}/uv.sh pip install --python {layout.ENV}/bin/python --require-hashes --no-deps "
               f"--only-binary :all:{ARG_LINE}--compile-bytecode -r {layout.WORK}")
    extras = plan.lock is not None and bool(plan.lock.extras)
    return {
        "install": install,
        "environment_binds": [uv_bind, f"source=requirements.lock,target={layout.WORK}/requirements.lock"],
        "extras_binds": [uv_bind, f"source=requirements.extra.txt,target={layout.WORK}/requirements.extra.txt"],
        "extras_scripts": ["uv.sh"] if extras else [],
        "extras_command": (f"{sources}{install}/requirements.extra.txt" if extras
                           else 'echo "no extra packages (packages.pip is empty)"'),
    }


def dockerfile_context(plan: Plan, buildkit: bool) -> dict[str, Any]:
    """What templates/docker reads beside the plan's own values: the Dockerfile's words, and the emitter (the
    one switch between the BuildKit and classic variants) with the build scripts' closures."""
    sources = pip_sources(plan)
    pip_install = f"{sources}sh {layout.SCRIPTS}/pip.sh install --no-warn-script-location"

    def environment_install(lock: Any, pins: Any) -> dict[str, str]:
        """The pip installer's environment set (the script it runs, the command): the lock's hashed set, the
        framework's pins, or none."""
        if lock and lock.environment:
            return {"script": "pip.sh",
                    "command": f"{pip_install}{ARG_LINE}--require-hashes --no-deps -r requirements.lock"}
        if pins.pip and not lock:
            return {"script": "pip.sh", "command": f"{pip_install} -r requirements.lock"}
        return {"script": "", "command": 'echo "requirements.lock pins nothing (no framework, or the base image '
                'carries it)"'}

    stages = source_build_stages(plan)
    setup = plan.python_setup
    conda_lock = plan.conda_lock is not None
    conda_pip = conda_lock and bool(plan.pins.pip)
    return {
        "emit": Emitter(buildkit, script_closures(build_scripts_dir())), "layout": layout,
        "base_comment": base_comment(plan), "pip_sources": sources, "pip_install": pip_install,
        "environment_install": environment_install, "extras_install": extras_install(plan),
        "base_site": "base-site.sh" if setup.base_site else "",
        "base_site_command": (f"sh {layout.SCRIPTS}/base-site.sh {setup.interpreter} envgen-base.pth; \\\n    "
                              if setup.base_site else ""),
        "source_build_stages": stages,
        "source_builds_comment": f" -> srcbuild1..{len(stages)} (sdist-only packages)" if stages else "",
        "last_extras_stage": stages[-1]["stage"] if stages else "extras",
        "conda_files": "environment.yml environment.lock.txt requirements.lock" if conda_lock else "environment.yml",
        "conda_command": ("environment.lock.txt" if conda_lock else "environment.yml")
        + (f"; \\\n    {pip_install} -r requirements.lock" if conda_pip else ""),
        "conda_pip_scripts": ["pip.sh"] if conda_pip else [],
        "uv": uv_steps(plan, sources),
    }
