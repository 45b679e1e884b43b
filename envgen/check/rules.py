"""The ordered list of rules. A rule is a function ``(CheckContext) -> list[Finding]``."""

from __future__ import annotations

from collections.abc import Callable

from envgen.check.base import image, ngc, provided, user
from envgen.check.context import CheckContext
from envgen.check.engines import arch, kernels, pins
from envgen.check.findings import Finding
from envgen.check.frameworks import cudnn, ext_build, extensions, python, pytorch, tensorflow
from envgen.check.gpu import cpu, driver, gpus, images, platforms, require
from envgen.check.libraries import cuda_twice, sonames, wheels
from envgen.check.lock import lockfile
from envgen.check.packages import conflicts, names, requires
from envgen.check.settings import refusals, secrets

Rule = Callable[[CheckContext], list[Finding]]

RULES: tuple[Rule, ...] = (
    *image.RULES,
    *provided.RULES,
    *python.RULES,
    *tensorflow.RULES,
    *pytorch.RULES,
    *cudnn.RULES,
    *sonames.RULES,
    *wheels.RULES,
    *cuda_twice.RULES,
    *requires.RULES,
    *conflicts.RULES,
    *gpus.RULES,
    *driver.RULES,
    *platforms.RULES,
    *images.RULES,
    *require.RULES,
    *ngc.RULES,
    *cpu.RULES,
    *extensions.RULES,
    *ext_build.RULES,
    *pins.RULES,
    *kernels.RULES,
    *arch.RULES,
    *lockfile.RULES,
    *names.RULES,
    *refusals.RULES,
    *secrets.RULES,
    *user.RULES,
)
