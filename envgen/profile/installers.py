"""What a profile's ``installer:`` means to the profile itself, one row per installer: which keys of a profile that
leaves ``installer:`` out pick it, the channels it gets when it names none, and whether the environment's Python is
the base image's (``base_provides`` builds on the base's Python, so it needs such an installer). The rest of an
installer (its Python setup, stages, context files, lock, check rules) lives in its module under
``envgen/plan/installers/``, which reads this row (``Installer.facts``): the profile ranks below the plan, so loading
reads these rows without importing the plan (tests/unit/test_layers.py). Names only: no imports of envgen, no work."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

# the values of a profile's ``installer:`` (tests/unit/test_installers.py: the same names as plan.installers'
# INSTALLERS and as the rows below)
InstallerName = Literal["conda", "pip"]


@dataclass(frozen=True)
class ProfileInstaller:
    name: str
    # the environment's Python is the base image's own (a venv on it), not one the installer brings
    base_python: bool
    # why base_provides is refused with it (an installer whose Python is not the base's)
    no_base_provides: str = ""
    # the profile keys ("packages.conda", "channels") whose presence picks it when ``installer:`` is left out
    picked_by: tuple[str, ...] = ()
    # the default's reason, as `envgen show` prints it: "installer: conda (the profile lists ...)"
    picked_why: str = ""
    # ``channels:`` when the profile names none
    channels: tuple[str, ...] = ()


PROFILE_INSTALLERS: dict[str, ProfileInstaller] = {row.name: row for row in (
    ProfileInstaller("pip", base_python=True,
                     picked_why="no conda packages or channels: pip on the base image's Python"),
    ProfileInstaller("conda", base_python=False,
                     no_base_provides="a conda environment brings its own Python and frameworks",
                     picked_by=("packages.conda", "channels"),
                     picked_why="the profile lists conda packages or channels", channels=("conda-forge",)),
)}
# when no row's ``picked_by`` key is in the profile; the model's default too (profile/model.py)
DEFAULT_INSTALLER: InstallerName = "pip"


def _present(data: dict[str, object], dotted: str) -> bool:
    value: object = data
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return bool(value)


def picked_installer(data: dict[str, object]) -> ProfileInstaller:
    """The installer a profile (its YAML as a mapping) that leaves ``installer:`` out gets: the first row one of
    whose ``picked_by`` keys it sets, else the default."""
    return next((row for row in PROFILE_INSTALLERS.values() if any(_present(data, k) for k in row.picked_by)),
                PROFILE_INSTALLERS[DEFAULT_INSTALLER])


def base_provides_refused(name: str) -> str | None:
    """Why ``base_provides`` cannot go with installer ``name`` (its Python is not the base's), naming the installers
    it can go with; None where it can."""
    row = PROFILE_INSTALLERS[name]
    if row.base_python:
        return None
    usable = " or ".join(r.name for r in PROFILE_INSTALLERS.values() if r.base_python)
    return f"base_provides with installer: {name}: {row.no_base_provides}; use installer: {usable} to build on the " \
           "base's frameworks"
