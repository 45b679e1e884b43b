"""The installers as modules (issue #41): a registry keyed by the profile's ``installer:`` whose answers replace the
installer string tests; each installer's check rules, templates and lock suffix exist."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from pathlib import Path
from typing import get_args, get_type_hints

import envgen
from envgen.check.rules import RULES
from envgen.paths import templates_dir
from envgen.plan.installers import BASE_PROVIDED, INSTALLERS, UV, installer_of
from envgen.plan.lockfile import lock_path
from envgen.profile.model import Profile

PACKAGE = Path(envgen.__file__).resolve().parent


def test_the_registry_holds_every_installer_a_profile_names() -> None:
    named = set(get_args(get_type_hints(Profile)["installer"]))
    assert set(INSTALLERS) == named == {"pip", "conda"}
    assert installer_of("conda") is INSTALLERS["conda"] and installer_of("pip").name == "pip"


def test_a_base_provides_profile_gets_the_base_provided_installer(kb) -> None:
    from envgen.profile import load_profile

    fixtures = Path(__file__).resolve().parents[1] / "fixtures" / "profiles"
    held = load_profile(str(fixtures / "host-torch-held.yaml"), env={})
    plain = load_profile("cpu-minimal", env={})
    assert held.base_provides is not None and installer_of(held) is BASE_PROVIDED and BASE_PROVIDED.name == "pip"
    assert installer_of(plain) is INSTALLERS["pip"]
    family = kb.base_family(held)
    assert BASE_PROVIDED.python_setup_key(family) == family.python_provided != family.python


def test_each_installer_names_rules_and_templates_that_exist() -> None:
    registered = set(RULES)
    for installer in (*INSTALLERS.values(), UV, BASE_PROVIDED):
        for dotted in installer.check_rules:
            module, _, function = dotted.rpartition(".")
            rule = getattr(importlib.import_module(f"envgen.check.{module}"), function)
            assert rule in registered, f"{installer.name}: {dotted} is not a registered check rule"
        for item in installer.context_files:
            assert (templates_dir() / item.template).is_file(), item
        assert installer.lock_tool and set(installer.stages) >= {"base", "environment", "extras"}
    for installer in (*INSTALLERS.values(), BASE_PROVIDED):  # what `envgen lock` runs for it (lock.command)
        module, _, function = installer.lock_command.rpartition(".")
        entry = getattr(importlib.import_module(f"envgen.lock.{module}"), function)
        assert list(inspect.signature(entry).parameters) == ["ref", "kb", "wheelhouse", "channels", "platforms"], \
            installer.name
    assert lock_path(Path("p/x.yaml"), "conda").name == "x.conda.txt"
    assert lock_path(Path("p/x.yaml")).name == "x.lock.txt"


# the modules that still test the installer's name as a string (#41): the profile model (base_provides needs pip; it
# ranks below plan/), the adopter (it writes the installer's name into a new profile), and a distributions.yaml row's
# own field (the installer it refuses a package for)
STILL_TESTING = {"kb/distributions.py", "profile/model.py", "suggest/adopt/compose.py", "suggest/adopt/pythons.py"}
_TEST = re.compile(r"""installer\s*(==|!=)\s*["'](pip|conda)["']""")


def test_plan_render_and_check_ask_the_registry_not_the_name() -> None:
    found = {str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if _TEST.search(p.read_text(encoding="utf-8"))}
    assert found <= STILL_TESTING, sorted(found - STILL_TESTING)
    assert not any(_TEST.search(p.read_text(encoding="utf-8")) for p in templates_dir().rglob("*.j2"))
    ast.parse("installer == 'conda'")  # the pattern's own example parses: it is Python the search looks for
    assert _TEST.search("if profile.installer == 'conda':") and not _TEST.search("installer_of(profile).conda_env")


def test_every_package_manager_of_a_family_names_a_build_script() -> None:
    """BaseFamily.package_manager drives which script installs OS packages (plan.parts.PACKAGE_SCRIPTS)."""
    from envgen.kb.families import BaseFamily
    from envgen.paths import build_scripts_dir
    from envgen.plan.parts import PACKAGE_SCRIPTS

    managers = set(get_args(get_type_hints(BaseFamily)["package_manager"]))
    assert managers == set(PACKAGE_SCRIPTS) and "apt" in managers
    assert all((build_scripts_dir() / script).is_file() for script in PACKAGE_SCRIPTS.values())
