"""The installers, one module each: how the environment at ``layout.ENV`` is made for a profile's ``installer:``.
An installer owns its Python setup (which ``python_setups`` row of base_families.yaml), the context files it adds,
the install stages it runs (``plan.libraries.STAGES``), its lock (file suffix and the tool that resolves it), what a
build downloads for it and the check rules that judge it alone (named ``module.function`` under ``envgen.check``;
tests/unit/test_installers.py resolves each). Everything that used to test the installer's name asks the
registry instead (``installer_of``; ``adopted_installer`` for `envgen init --from`); what the profile itself knows of
an installer (the keys that pick it, its default channels, whether its Python is the base's) is its row in
``envgen/profile/installers.py``, below the plan, read here as ``Installer.facts``. A new installer is a module here,
a row in ``INSTALLERS`` and a row there (docs/EXTENDING.md)."""

from __future__ import annotations

from typing import Protocol

from envgen.plan.installers.base import ContextFile, Installer
from envgen.plan.installers.base_provided import BaseProvided
from envgen.plan.installers.conda import Conda
from envgen.plan.installers.pip import Pip
from envgen.plan.installers.uv import Uv
from envgen.profile.installers import DEFAULT_INSTALLER

INSTALLERS: dict[str, Installer] = {installer.name: installer for installer in (Pip(), Conda())}
UV = Uv()  # a locked pip profile's install under BuildKit (``Uv.applies``), not a value of ``installer:``
BASE_PROVIDED = BaseProvided()  # the pip installer on a base_provides base (``installer_of``)


class _Installs(Protocol):
    @property
    def installer(self) -> str: ...

    @property
    def base_provides(self) -> object | None: ...


def adopted_installer(kind: str) -> Installer:
    """The installer of a profile `envgen init --from` makes from a source of ``kind`` (``Installer.adopted_from``;
    none names it: the profile's default, ``DEFAULT_INSTALLER``)."""
    return next((i for i in INSTALLERS.values() if kind in i.adopted_from), INSTALLERS[DEFAULT_INSTALLER])


def suggested_installer() -> Installer:
    """The installer `envgen suggest` writes its profiles with (``Installer.suggested``)."""
    return next(i for i in INSTALLERS.values() if i.suggested)


def installer_of(profile_or_name: _Installs | str) -> Installer:
    """The installer of a profile (its ``installer:``; pip on a base_provides base: ``BASE_PROVIDED``) or of an
    installer's name."""
    if isinstance(profile_or_name, str):
        return INSTALLERS[profile_or_name]
    found = INSTALLERS[profile_or_name.installer]
    return BASE_PROVIDED if found.pip_lock and profile_or_name.base_provides is not None else found


__all__ = ["BASE_PROVIDED", "INSTALLERS", "UV", "ContextFile", "Installer", "adopted_installer", "installer_of",
           "suggested_installer"]
