"""What the image needs for GPU extension packages beyond the install plan's source builds
(``plan.extensions.source_builds``, their stages written by render/dockerfile.py): the runtime packages of a package
that compiles native code when it runs (Triton's launcher)."""

from __future__ import annotations

from envgen.kb.families import PythonSetup
from envgen.plan.image import ImagePlan


def runtime_compiler_apt(plan: ImagePlan, setup: PythonSetup) -> tuple[str, ...]:
    """apt packages the image needs because a ``packages.pip`` entry compiles C at run time (GPU profiles): the
    base family's C compiler with the C library headers, and the headers of the Python the environment runs where
    its setup names them (the system Python of Debian and Ubuntu bases; python images and conda environments carry
    their own). A package the base holds (base_provides.packages) gets none: the base brings what it runs with."""
    if not plan.profile.gpu.required or not any(e.row.runtime_cc for e in plan.installed_extensions):
        return ()
    return tuple(plan.stack.family.compiler_apt) + tuple(setup.headers_apt)
