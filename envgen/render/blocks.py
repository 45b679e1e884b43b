"""The building blocks every installer's stages are made of (``render.dockerfile``): a stage FROM the base, the
base's packages installed by its family's package manager, the strip tool's stage, the image's user, the ARG lines,
the requirements files each platform installs, the framework's wheel sources. Each returns typed steps
(``render.stages``); none decides which stage exists or in what order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from envgen import layout
from envgen.mirrors import pytorch_shell
from envgen.plan.slim import STRIP_DIR, STRIP_STAGE, STRIP_TOOL_SCRIPT
from envgen.render.jinja import words
from envgen.render.plan import TemplateInput as Plan
from envgen.render.stages import BASE_IMAGE, SHELL_FORM, Instruction, Run, Stage, Step
from envgen.render.steps import NEXT_LINE
from envgen.vocabulary import ARG_APT_MIRROR

# the comment above the USER root line of a stage on a base that leaves a non-root user
NON_ROOT = ("the base leaves a non-root user (base_families.yaml): the stage installs as root; the image's user comes "
            "last",)


def pip_sources(plan: Plan) -> str:
    """The framework's wheel sources for pip.sh/uv.sh (lib-pip.sh), each through the build arg PYTORCH_WHEELS where
    it is download.pytorch.org: assignments in front of the command, on a continued line of their own."""
    out = []
    if plan.pip.find_links:
        out.append('ENVGEN_FIND_LINKS="' + " ".join(pytorch_shell(u) for u in plan.pip.find_links) + '"')
    if plan.pip.index_urls:
        out.append('ENVGEN_INDEX_URLS="' + " ".join(pytorch_shell(u) for u in plan.pip.index_urls) + '"')
    return "".join(word + NEXT_LINE for word in out)


def locked_file(plan: Plan, name: str) -> str:
    """A requirements file of the context as the installing step names it: each platform's own
    (``requirements.${TARGETARCH}.lock``, BuildKit's target machine) where the plan gives one lock per platform."""
    if not plan.platform_locks:
        return name
    stem, _, suffix = name.rpartition(".")
    return f"{stem}.${{TARGETARCH}}.{suffix}"


def arch_args(plan: Plan) -> tuple[Instruction, ...]:
    """``ARG TARGETARCH`` (BuildKit sets it) where a stage picks its platform's locked set."""
    return args(("TARGETARCH",), ("BuildKit's target machine (amd64, arm64): picks that platform's locked set.",)
                ) if plan.platform_locks else ()


def base_comment(plan: Plan) -> str:
    if plan.base.digest:
        return f"base {plan.base.image}, pinned by digest"
    if plan.base.local:
        return "local base image: no registry digest (local_base: true)"
    return f"base {plan.base.image} is not digest-pinned (no digest known); `envgen check` reports it"


def args(names: Sequence[str], comment: tuple[str, ...] = ()) -> tuple[Instruction, ...]:
    """An ARG line per name, ``comment`` above the first."""
    return tuple(Instruction("ARG", name, comment if i == 0 else ()) for i, name in enumerate(names))


def base_stage(plan: Plan, name: str, *steps: Step) -> Stage:
    """A stage FROM the base (by digest when one is known, else the tag with a visible reason): bash as the shell;
    as root where the base leaves a non-root user (base_families.yaml), the image's user coming last."""
    root = () if plan.base.user == "root" else (Instruction("USER", "root", NON_ROOT),)
    return Stage(name, BASE_IMAGE, (Instruction("SHELL", SHELL_FORM), *root, *steps), (base_comment(plan),))


def apt_install(plan: Plan, packages: Sequence[str], cache: bool = True) -> tuple[Step, ...]:
    """The base's packages installed in one RUN by the script its family's package manager names
    (``plan.parts.PACKAGE_SCRIPTS``; apt-install.sh: APT_MIRROR for this RUN only, the CA secret, the caches); nothing
    when there are no packages."""
    if not packages:
        return ()
    script = plan.base.packages_with
    return (*args(("DEBIAN_FRONTEND=noninteractive", ARG_APT_MIRROR)),
            Run(f"sh {layout.SCRIPTS}/{script}{words(packages)}", (script,), apt=cache, secrets=True))


def strip_stage(plan: Plan, base: str | None = None) -> tuple[Stage, ...]:
    """GNU strip (the plan's package, apt-pinned as the plan pins) gathered at STRIP_DIR (strip-tool.sh) in a stage
    on ``base`` (None: the base) that install steps bind or copy from, never shipped; none where nothing is stripped."""
    if plan.image.strip is None:
        return ()
    steps = (*apt_install(plan, plan.apt_pins((plan.image.strip.package,))),
             Run(f"sh {layout.SCRIPTS}/{STRIP_TOOL_SCRIPT} {STRIP_DIR}", (STRIP_TOOL_SCRIPT,)))
    comment = ("GNU strip for the symbol tables the install steps strip: bound or copied from here, never shipped.",)
    return (Stage(STRIP_STAGE, base, steps, comment) if base else replace(base_stage(plan, STRIP_STAGE, *steps),
                                                                          comment=comment),)


def create_user(plan: Plan) -> Run:
    """The image's user (profile ``user:``) and /workspace: reuses a uid the base already has (create-user.sh)."""
    user = plan.profile.user
    return Run(f"sh {layout.SCRIPTS}/create-user.sh {user.uid} {user.name}", ("create-user.sh",))


def copy_requirements(plan: Plan, name: str, more: str = "") -> Instruction:
    """``COPY`` of a requirements file (``more``: other files beside it, none when locked) into the working
    directory: the platform's own under the same name where the plan gives one lock per platform."""
    if not plan.platform_locks:
        return Instruction("COPY", f"{name}{more} {layout.WORK}/")
    return Instruction("COPY", f"{locked_file(plan, name)} {layout.WORK}/{name}")
