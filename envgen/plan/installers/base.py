"""What every installer module gives (``plan.installers``): the answers the plan, the render and the check read
where they used to test the installer's name."""

from __future__ import annotations

from typing import ClassVar, NamedTuple

from envgen.kb.families import BaseFamily
from envgen.profile.installers import PROFILE_INSTALLERS, ProfileInstaller


class ContextFile(NamedTuple):
    """A file the installer adds to the build context: its path there, the template, the BuildKit flag it is
    rendered with."""

    path: str
    template: str
    buildkit: bool = True


class Installer:
    """One way of making the environment. Class attributes are the answers; a subclass sets those it changes."""

    name: ClassVar[str] = ""
    # the environment is a conda environment made from packages.conda (micromamba); its prefix holds CUDA libraries
    conda_env: ClassVar[bool] = False
    # the stages (plan.libraries.STAGES) this installer may run; which of them a profile runs is the plan's
    stages: ClassVar[tuple[str, ...]] = ("base", "environment", "extras")
    context_files: ClassVar[tuple[ContextFile, ...]] = ()
    # the lock beside the profile's YAML file: its suffix, and the tool `envgen lock` resolves it with
    lock_suffix: ClassVar[str] = ".lock.txt"
    lock_tool: ClassVar[str] = ""
    # what `envgen lock` runs for it: "module.function" under envgen.lock (``lock.command``; test_installers
    # resolves it), called with the profile's reference, the KB, --wheelhouse and --conda-channel
    lock_command: ClassVar[str] = ""
    # a pip lock file (read_lock's format) is what this installer installs from
    pip_lock: ClassVar[bool] = False
    # what check says when the lock is missing: (why a later build can differ, what `envgen lock` needs)
    lock_missing: ClassVar[tuple[str, str]] = ("", "")
    # the check rules that judge this installer alone ("module.function" under envgen.check)
    check_rules: ClassVar[tuple[str, ...]] = ()

    # its own python_setups row (base_families.yaml), whatever the base; "": the base family's (``python_setup_key``)
    python_setup: ClassVar[str] = ""
    # the tool the build downloads to make the environment: its row of render/data/tools.yaml (url, sha256) and the
    # mirrors field that replaces its URL (``render.downloads``); "" for none (pip and uv come with the base's
    # Python or the lock)
    fetched_tool: ClassVar[str] = ""
    tool_mirror: ClassVar[str] = ""
    # `envgen suggest` writes its profiles with this installer (one installer sets it: ``suggested_installer``)
    suggested: ClassVar[bool] = False

    # the kinds of source `envgen init --from` reads (suggest.adopt's ``Read.kind``: "environment" for an
    # environment.yml) whose adopted profile uses this installer; a kind no installer names gets ``DEFAULT_INSTALLER``
    adopted_from: ClassVar[tuple[str, ...]] = ()

    @property
    def facts(self) -> ProfileInstaller:
        """What the profile knows of this installer (profile/installers.py: the keys that pick it, its default
        channels, whether its Python is the base's), read there because the profile ranks below the plan."""
        return PROFILE_INSTALLERS[self.name]

    @property
    def base_python(self) -> bool:
        """The environment's Python is the base image's (its version is read from the base's KB row), not the
        profile's: a venv on it, so a Python the source names is not the image's unless a base has it."""
        return self.facts.base_python

    def python_setup_key(self, family: BaseFamily) -> str:
        """The python_setups row the environment is made with: the installer's own (``python_setup``), else the base
        family's own Python (a base_provides base: ``base_provided.BaseProvided``)."""
        return self.python_setup or family.python
