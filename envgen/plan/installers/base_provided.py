"""pip on a base that provides the frameworks (``base_provides``: NGC, a team's torch image, an image envgen built):
the environment is made by the base's own interpreter (the family's ``python_provided`` row: a venv that sees the
base's site directories, or the base's own /opt/env), every pip install constrained to the versions the base holds
(constraints.base.txt). Not a value of ``installer:``: the pip installer on such a base (``installer_of``)."""

from __future__ import annotations

from envgen.kb.families import BaseFamily
from envgen.plan.installers.pip import Pip


class BaseProvided(Pip):
    check_rules = (*Pip.check_rules, "base.provided.base_frameworks", "base.provided.base_packages",
                   "base.provided.base_requires")

    def python_setup_key(self, family: BaseFamily) -> str:
        """The family's ``python_provided`` row: the base's interpreter makes the environment."""
        return family.python_provided
