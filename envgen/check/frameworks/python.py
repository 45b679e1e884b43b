"""Python: wheels of each framework exist for the profile's Python; a pip profile uses the base's Python."""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import finding
from envgen.kb.versions import in_range, minor


def python_wheels(ctx: CheckContext) -> list[Finding]:
    python = ctx.profile.python_version
    out = []
    tf = ctx.tf_build
    if tf is not None and ctx.ngc is None and not in_range(python, tf.python_min, tf.python_max):
        out.append(
            finding(
                "error",
                "python-no-wheels",
                f"TensorFlow {ctx.profile.frameworks.tensorflow} has no "
                f"wheels for Python {ctx.profile.python_minor} (it has {tf.python_min}-{tf.python_max})",
                f"use Python {tf.python_max}",
                tf.cite(),
            )
        )
    torch = ctx.torch_release
    if torch is not None and ctx.profile.python_minor in torch.python_experimental:
        out.append(
            finding(
                "warning",
                "python-experimental",
                f"torch {torch.version} has wheels for Python {ctx.profile.python_minor}, but upstream calls that "
                f"Python experimental for this release (supported: {torch.python_min}-{torch.python_max})",
                f"use Python {torch.python_max} for a supported build",
                torch.cite(),
            )
        )
    elif torch is not None and not in_range(python, torch.python_min, torch.python_max):
        out.append(
            finding(
                "error",
                "python-no-wheels",
                f"torch {torch.version} has no wheels for Python "
                f"{ctx.profile.python_minor} (it has {torch.python_min}-{torch.python_max})",
                f"use Python {torch.python_min}-{torch.python_max}",
                torch.cite(),
            )
        )
    return out


def python_base(ctx: CheckContext) -> list[Finding]:
    from envgen.plan.installers import installer_of

    if not installer_of(ctx.profile).base_python:
        return []
    info = ctx.base
    if info is None or info.python is None:
        return [
            finding(
                "warning",
                "python-base-unknown",
                f"installer is pip, so packages go into the Python of "
                f"{ctx.profile.base}, whose version is not in the knowledge base",
                "use a known base or installer: conda",
                info.cite() if info else "base_images.yaml",
            )
        ]
    if minor(info.python) != ctx.profile.python_minor:
        # The Python is the OS's python3 (an nvidia/cuda image gets it from apt): cite the OS row, not the
        # image's tag row, so an unverified tag row does not soften this into a warning.
        row = ctx.kb.os_image(info.os) if info.os else None
        others = ctx.kb.bases_with_python(ctx.profile.python_minor)
        elsewhere = f", or a base whose python3 is {ctx.profile.python_minor} ({', '.join(others)})" if others else ""
        return [
            finding(
                "error",
                "python-base-mismatch",
                f"installer is pip, so packages go into {ctx.profile.base}'s "
                f"Python {info.python}, not the profile's Python {ctx.profile.python_version}: the smoke test would "
                "fail after the whole build",
                f'set python: "{minor(info.python)}" (the base\'s own), or use installer: conda (it brings '
                f"Python {ctx.profile.python_minor} itself){elsewhere}; or build a base that has it from a "
                "source this machine reaches (such as the deadsnakes PPA on Ubuntu) and use local_base: true",
                row.cite() if row else info.cite(),
            )
        ]
    return []


RULES = [python_wheels, python_base]
