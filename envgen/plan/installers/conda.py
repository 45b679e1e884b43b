"""conda: micromamba (pinned and checksummed: render/data/tools.yaml) makes a conda environment from
environment.yml, packages.conda and the Python the profile names, the frameworks' pins on top with pip
(render/dockerfile.py: Micromamba); locked by py-rattler as an explicit list (``envgen lock``: lock/lock_conda.py)."""

from __future__ import annotations

from envgen.kb.families import BaseFamily
from envgen.plan.installers.base import ContextFile, Installer


class Conda(Installer):
    name = "conda"
    conda_env = True
    base_python = False
    stages = ("base", "conda", "environment", "extras")
    context_files = (ContextFile("environment.yml", "context/environment.yml.j2"),)
    lock_suffix = ".conda.txt"
    lock_tool = "py-rattler"
    lock_missing = ("conda resolves its packages and their dependencies (the frameworks' own too) at build time",
                    "needs the conda channels, or --conda-channel NAME=URL for a mirror")
    check_rules = ("rules_lock.conda_lock_state",)

    def python_setup_key(self, family: BaseFamily, base_provided: bool) -> str:
        """The conda environment brings its own Python on any base: the ``conda`` python_setups row."""
        return "conda"
