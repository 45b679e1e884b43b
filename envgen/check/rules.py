"""The ordered list of rules. A rule is a function ``(CheckContext) -> list[Finding]``."""

from __future__ import annotations

from collections.abc import Callable

from envgen.check import (
    require,
    rules_base_frameworks,
    rules_base_image,
    rules_combined,
    rules_cpu,
    rules_cuda_twice,
    rules_cudnn,
    rules_driver,
    rules_engine_arch,
    rules_engine_kernels,
    rules_engines,
    rules_ext_build,
    rules_extensions,
    rules_gpu,
    rules_libraries,
    rules_lock,
    rules_names,
    rules_ngc,
    rules_packages,
    rules_platform,
    rules_platforms,
    rules_python,
    rules_pytorch,
    rules_refusals,
    rules_secrets,
    rules_tensorflow,
    rules_user,
    rules_wheel_libraries,
)
from envgen.check.context import CheckContext
from envgen.check.findings import Finding

Rule = Callable[[CheckContext], list[Finding]]

RULES: tuple[Rule, ...] = (
    *rules_base_image.RULES,
    *rules_base_frameworks.RULES,
    *rules_python.RULES,
    *rules_tensorflow.RULES,
    *rules_pytorch.RULES,
    *rules_cudnn.RULES,
    *rules_libraries.RULES,
    *rules_wheel_libraries.RULES,
    *rules_cuda_twice.RULES,
    *rules_packages.RULES,
    *rules_combined.RULES,
    *rules_gpu.RULES,
    *rules_driver.RULES,
    *rules_platform.RULES,
    *rules_platforms.RULES,
    *require.RULES,
    *rules_ngc.RULES,
    *rules_cpu.RULES,
    *rules_extensions.RULES,
    *rules_ext_build.RULES,
    *rules_engines.RULES,
    *rules_engine_kernels.RULES,
    *rules_engine_arch.RULES,
    *rules_lock.RULES,
    *rules_names.RULES,
    *rules_refusals.RULES,
    *rules_secrets.RULES,
    *rules_user.RULES,
)
