"""The base image's part of the plan: its family (kb/data/base_families.yaml) and the python setup the
environment is made with; what the render writes and the check judges alike."""

from __future__ import annotations

from collections.abc import Collection

from envgen.kb.families import PythonSetup
from envgen.kb.knowledge import KnowledgeBase
from envgen.plan.environment import ENV_PREFIX
from envgen.plan.installers import installer_of
from envgen.plan.lock_platforms import main_arch
from envgen.plan.lockfile import lock_target
from envgen.plan.refusals import Refused, base_collisions, refusal
from envgen.profile.model import Profile


def python_setup_key(profile: Profile, kb: KnowledgeBase) -> str:
    """The python_setups row (base_families.yaml) the environment is made with: the installer's answer
    (``plan.installers``: the conda installer's own, else the base family's)."""
    return installer_of(profile).python_setup_key(kb.base_family(profile))


def python_setup_row(profile: Profile, kb: KnowledgeBase) -> PythonSetup:
    return kb.python_setup(python_setup_key(profile, kb))


def base_refusals(profile: Profile, kb: KnowledgeBase) -> list[Refused]:
    """The base's own content where envgen's environment would be made anew (``plan.refusals``)."""
    return base_collisions(kb.base_family(profile), python_setup_row(profile, kb), profile.base, ENV_PREFIX)


def labelled_base_refusals(profile: Profile, kb: KnowledgeBase, labels: Collection[str]) -> list[Refused]:
    """The same, for a base the engine holds whose labels name its family (an image envgen built) where the profile
    does not: the build's side (check reads no engine; ``plan.refusals``: envgen-base-unnamed)."""
    refusal("envgen-base-unnamed")
    family = kb.base_family(profile, labels)
    if family == kb.base_family(profile):
        return []  # the profile names the family itself: check and the render have judged it
    # the family the labels name against the environment the render will make (it reads no labels)
    return [Refused("envgen-base-unnamed", r.message, r.fix)
            for r in base_collisions(family, python_setup_row(profile, kb), profile.base, ENV_PREFIX)]


def lock_target_refusals(made_for: str | None, where: str, profile: Profile, kb: KnowledgeBase) -> list[Refused]:
    """A lock made for another target than this image's (``plan.refusals``: lock-target)."""
    return lock_target_check(made_for, where, profile, lock_target(profile.python_minor, kb.glibc(profile.base),
                                                                   main_arch(profile.platforms)))


def lock_target_check(made_for: str | None, where: str, profile: Profile, expected: str) -> list[Refused]:
    """The same against the target the plan settled (``BasePart.lock_target``)."""
    refusal("lock-target")
    if not made_for or made_for == expected:
        return []
    from envgen.profile.loader import profile_arg

    return [Refused("lock-target", f"{where} was made for {made_for}; this image is {expected}",
                    f"run `envgen lock {profile_arg(profile)}` again")]
