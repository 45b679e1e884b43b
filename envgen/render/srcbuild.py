"""Source builds of GPU extension packages that PyPI has as an sdist only (flash-attn, deepspeed): which
``packages.pip`` entries are built from source, in which stage (the devel twin of a runtime base, for nvcc), with
the architecture list of the profile's GPUs and the package's build variables. The facts are the check's
(``envgen.check.extensions.source_build``); this module only picks them for the render."""

from __future__ import annotations

from envgen.check.context import build_context
from envgen.check.extensions import SourceBuildPlan, extensions, source_build
from envgen.kb import KnowledgeBase
from envgen.profile import Profile


def source_builds(profile: Profile, kb: KnowledgeBase) -> tuple[SourceBuildPlan, ...]:
    """One plan per ``packages.pip`` entry built from its sdist, in profile order (GPU profiles only: a
    CPU-only image installs what pip finds)."""
    if not profile.gpu.required:
        return ()
    ctx = build_context(profile, kb, None)
    plans = (source_build(ctx, ext) for ext in extensions(profile, kb))
    return tuple(plan for plan in plans if plan is not None)


# What a package that compiles native code at run time (Triton's launcher) needs in the image: a C compiler with
# the C library headers, and the system Python's headers where the environment uses the system Python (Debian and
# Ubuntu bases; python images and conda environments carry their own).
RUNTIME_CC_APT = ("gcc", "libc6-dev")
SYSTEM_PYTHON_HEADERS = ("python3-dev",)


def runtime_compiler_apt(profile: Profile, kb: KnowledgeBase, setup_key: str) -> tuple[str, ...]:
    """apt packages the image needs because a ``packages.pip`` entry compiles C at run time (GPU profiles)."""
    if not profile.gpu.required or not any(e.row.runtime_cc for e in extensions(profile, kb)):
        return ()
    return RUNTIME_CC_APT + (SYSTEM_PYTHON_HEADERS if setup_key == "debian" else ())
