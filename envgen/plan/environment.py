"""The image's environment variables, planned from the profile and the wheels it installs: the environment's
PATH, the library directories of NVIDIA's wheels (where the KB says each one puts them, the same reading the
check's library survey uses), the NVIDIA Container Toolkit's variables, then the profile's own ``env``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from envgen import layout
from envgen.kb.knowledge import KnowledgeBase
from envgen.kb.libraries import nvidia_wheel, wheel_lib_dirs
from envgen.plan.installers import installer_of
from envgen.plan.refusals import env_collisions, refuse
from envgen.profile.model import Profile

ENV_PREFIX = layout.ENV  # where every installer puts the environment


def python_dir(profile: Profile, kb: KnowledgeBase) -> str:
    """lib/pythonX.Y inside the environment (``ENV_PREFIX``): the profile's Python for conda, the base's otherwise."""
    if not installer_of(profile).base_python:
        return f"python{profile.python_minor}"
    info = kb.base_image(profile.base)
    version = info.python if info and info.python else profile.python_version
    return "python" + ".".join(version.split(".")[:2])


def nvidia_lib_dirs(kb: KnowledgeBase, pip_pins: Sequence[str], site_packages: str) -> list[str]:
    """Library directories of pip-installed NVIDIA wheels, where the KB says each one puts them
    (``kb.libraries.wheel_lib_dirs``: nvidia-cudnn-cu11 -> nvidia/cudnn/lib, nvidia-cublas 13 -> nvidia/cu13/lib)."""
    dirs: set[str] = set()
    for pin in pip_pins:
        wheel = nvidia_wheel(pin)
        if wheel is not None:
            dirs.update(f"{site_packages}/{d}" for d in wheel_lib_dirs(kb.cuda_libraries, wheel))
    return sorted(dirs)


def environment(own: Mapping[str, str], profile_env: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """envgen's own variables (``own``: ``own_environment``'s, held by the plan), then the profile's ``env``; a
    profile variable that would replace one of envgen's is refused (``plan.refusals``: check reports the same)."""
    refuse(env_collisions(own, profile_env))
    return tuple(sorted({**own, **profile_env}.items()))


def own_environment(profile: Profile, kb: KnowledgeBase, pip_pins: Sequence[str],
                    require_cuda: str | None) -> dict[str, str]:
    """The variables envgen sets itself: the environment's PATH, the NVIDIA wheels' library path, the NVIDIA
    Container Toolkit's variables."""
    env: dict[str, str] = {"PATH": f"{ENV_PREFIX}/bin:$PATH"}
    if profile.is_gpu:
        libs = [f"{ENV_PREFIX}/lib"] if installer_of(profile).conda_env else []
        libs += nvidia_lib_dirs(kb, pip_pins, f"{ENV_PREFIX}/lib/{python_dir(profile, kb)}/site-packages")
        if libs:
            env["LD_LIBRARY_PATH"] = ":".join(libs) + "${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        env["NVIDIA_VISIBLE_DEVICES"] = "all"
        env["NVIDIA_DRIVER_CAPABILITIES"] = "compute,utility"
        # plan.require wrote it and `check --driver` evaluates it as the toolkit does; a CUDA base's own value
        # (with its brand=/driver= alternatives) is replaced on purpose; None keeps an NGC base's own value
        # (see envgen/plan/require.py)
        if require_cuda:
            env["NVIDIA_REQUIRE_CUDA"] = require_cuda
    return env
