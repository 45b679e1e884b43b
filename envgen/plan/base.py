"""The base image's part of the plan: its family (kb/data/base_families.yaml) and the python setup the
environment is made with; what the render writes and the check judges alike."""

from __future__ import annotations

from envgen.kb.families import PythonSetup
from envgen.kb.knowledge import KnowledgeBase
from envgen.plan.environment import ENV_PREFIX
from envgen.plan.refusals import Refused, base_collisions
from envgen.profile.model import Profile


def python_setup_key(profile: Profile, kb: KnowledgeBase) -> str:
    """The python_setups row (base_families.yaml) the environment is made with: the conda installer's own, else
    the base family's (``python_provided`` where the profile sets base_provides)."""
    if profile.installer == "conda":
        return "conda"
    family = kb.base_family(profile)
    return family.python_provided if profile.base_provides is not None else family.python


def python_setup_row(profile: Profile, kb: KnowledgeBase) -> PythonSetup:
    return kb.python_setup(python_setup_key(profile, kb))


def base_refusals(profile: Profile, kb: KnowledgeBase) -> list[Refused]:
    """The base's own content where envgen's environment would be made anew (``plan.refusals``)."""
    return base_collisions(kb.base_family(profile), python_setup_row(profile, kb), profile.base, ENV_PREFIX)
