"""What the image needs for GPU extension packages beyond the install plan's source builds
(``plan.extensions.source_builds``, written by templates/docker/_staged.j2): the runtime packages of a package
that compiles native code when it runs (Triton's launcher)."""

from __future__ import annotations

from envgen.plan.image import ImagePlan

# What a package that compiles native code at run time (Triton's launcher) needs in the image: a C compiler with
# the C library headers, and the system Python's headers where the environment uses the system Python (Debian and
# Ubuntu bases; python images and conda environments carry their own).
RUNTIME_CC_APT = ("gcc", "libc6-dev")
SYSTEM_PYTHON_HEADERS = ("python3-dev",)


def runtime_compiler_apt(plan: ImagePlan, setup_key: str) -> tuple[str, ...]:
    """apt packages the image needs because a ``packages.pip`` entry compiles C at run time (GPU profiles)."""
    if not plan.profile.gpu.required or not any(e.row.runtime_cc for e in plan.extensions):
        return ()
    return RUNTIME_CC_APT + (SYSTEM_PYTHON_HEADERS if setup_key == "debian" else ())
