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
from envgen.kb.distributions import read_framework_names
from envgen.paths import templates_dir
from envgen.plan.installers import BASE_PROVIDED, INSTALLERS, UV, adopted_installer, installer_of
from envgen.plan.lockfile import lock_path
from envgen.profile.installers import DEFAULT_INSTALLER, PROFILE_INSTALLERS, base_provides_refused, picked_installer
from envgen.profile.model import Profile

PACKAGE = Path(envgen.__file__).resolve().parent


def test_the_registry_holds_every_installer_a_profile_names() -> None:
    named = set(get_args(get_type_hints(Profile)["installer"]))
    assert set(INSTALLERS) == named == set(PROFILE_INSTALLERS) == {"pip", "conda"}
    assert installer_of("conda") is INSTALLERS["conda"] and installer_of("pip").name == "pip"
    # the profile's row of each (profile/installers.py, below the plan) is the one the plan's installer reads
    assert all(i.facts is PROFILE_INSTALLERS[name] for name, i in INSTALLERS.items())
    assert UV.facts is BASE_PROVIDED.facts is PROFILE_INSTALLERS["pip"] and UV.base_python
    assert not INSTALLERS["conda"].base_python and INSTALLERS["pip"].base_python
    assert all(row.no_base_provides for row in PROFILE_INSTALLERS.values() if not row.base_python)
    assert base_provides_refused("pip") is None
    assert base_provides_refused("conda") == ("base_provides with installer: conda: a conda environment brings its own "
                                              "Python and frameworks; use installer: pip to build on the base's "
                                              "frameworks")  # the words of the name test it replaced


def test_what_loading_and_adopting_ask_the_installers() -> None:
    """The defaults a profile that leaves ``installer:`` out gets, and the installer `envgen init --from` writes, come
    from the installers' rows (no name is tested)."""
    assert picked_installer({}).name == DEFAULT_INSTALLER == "pip"
    assert picked_installer({"packages": {"conda": ["numpy=1.26.4"]}}).name == "conda"
    assert picked_installer({"channels": ["conda-forge"]}).name == "conda"
    assert picked_installer({"packages": ["not", "a", "mapping"], "channels": []}).name == "pip"
    assert adopted_installer("environment") is INSTALLERS["conda"]
    assert adopted_installer("requirements") is adopted_installer("dockerfile") is INSTALLERS["pip"]
    from envgen.profile.normalise import normalise

    conda = normalise({"name": "x", "base": "debian:bookworm-slim", "packages": {"conda": ["numpy=1.26.4"]}}, {},
                      Path("x.yaml"), read_framework_names())
    assert conda.data["installer"] == "conda" and conda.data["channels"] == ["conda-forge"]
    assert conda.defaults == ["installer: conda (the profile lists conda packages or channels)",
                              "channels: [conda-forge] (installer is conda and no channel was given)"]
    pip = normalise({"name": "x", "base": "debian:bookworm-slim"}, {}, Path("x.yaml"), read_framework_names())
    assert pip.data["installer"] == "pip" and "channels" not in pip.data
    assert pip.defaults == ["installer: pip (no conda packages or channels: pip on the base image's Python)"]


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


# an installer's name tested as a string (`installer == "conda"`, `r.installer != "any"`): none is left (#41: 31 tests
# in 18 modules before; the last 11, in the profile model, the adopter and a distributions.yaml row, went in h41inst)
_TEST = re.compile(r"""installer\s*(==|!=)\s*["'][a-z-]+["']""")


def test_nothing_tests_an_installer_by_name() -> None:
    found = {str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if _TEST.search(p.read_text(encoding="utf-8"))}
    assert not found, sorted(found)
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


# the modules that restated an installer's name after h41inst (#41's leftovers: kb/validate.py required a "conda"
# python_setups row, suggest/compose.py wrote "installer": "conda" and its channels, render/downloads.py named
# micromamba for every conda environment): each asks the registry now
_ASK_THE_REGISTRY = ("kb/validate.py", "suggest/compose.py", "render/downloads.py")


def _registry_words() -> set[str]:
    """What only the registry may say: each installer's name, its own python_setups row, the tool it fetches and
    that tool's mirrors field."""
    every = (*INSTALLERS.values(), UV, BASE_PROVIDED)
    return {word for i in every for word in (i.name, i.python_setup, i.fetched_tool, i.tool_mirror) if word}


def _literals(source: str) -> list[tuple[int, str]]:
    """Every string constant of ``source`` but its docstrings, with its line."""
    tree = ast.parse(source)
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def test_no_installer_name_is_restated_where_the_registry_answers() -> None:
    words = _registry_words()
    assert {"pip", "conda", "uv", "micromamba", "micromamba_url"} <= words
    found = [(rel, line, text) for rel in _ASK_THE_REGISTRY
             for line, text in _literals((PACKAGE / rel).read_text(encoding="utf-8")) if text in words]
    assert not found, found
    # the search finds what it looks for: the lines the modules had before
    assert [t for _, t in _literals('"""doc"""\nx = {"installer": "conda"}\nif "conda" not in s: pass')
            if t in words] == ["conda", "conda"]


def test_the_registry_answers_what_those_modules_asked(kb) -> None:
    from envgen.plan.installers import suggested_installer
    from envgen.profile.model import Mirrors

    # every installer's own python_setups row is a row of the KB (kb/validate.py checked "conda" alone)
    own = {i.name: i.python_setup for i in INSTALLERS.values() if i.python_setup}
    assert own == {"conda": "conda"} and all(kb.python_setup(row).name == row for row in own.values())
    # the tool each installer fetches has its tools.yaml row (url, sha256) and a mirrors field that replaces it
    from envgen.plan.installers.conda import tools

    for installer in INSTALLERS.values():
        if installer.fetched_tool:
            assert {"url", "sha256"} <= set(tools()[installer.fetched_tool])
            assert installer.tool_mirror in Mirrors.model_fields
    assert [i.fetched_tool for i in INSTALLERS.values()] == ["", "micromamba"]
    # suggest writes one installer's profiles, with that installer's default channels
    assert sum(i.suggested for i in INSTALLERS.values()) == 1 and suggested_installer() is INSTALLERS["conda"]
    assert suggested_installer().facts.channels == ("conda-forge",)


def test_the_profile_model_takes_its_default_installer_from_the_rows() -> None:
    """Review of #41 (profile/installers.py): the model's ``installer:`` default restated "pip" beside the rows'
    DEFAULT_INSTALLER (normalise fills the field from the rows; a profile validated without normalising got the
    model's own): it reads DEFAULT_INSTALLER now, which is a row."""
    import dataclasses

    field = next(f for f in dataclasses.fields(Profile) if f.name == "installer")
    assert field.default == DEFAULT_INSTALLER and DEFAULT_INSTALLER in PROFILE_INSTALLERS
    tree = ast.parse((PACKAGE / "profile" / "model.py").read_text(encoding="utf-8"))
    (assigned,) = [n for n in ast.walk(tree) if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)
                   and n.target.id == "installer"]
    assert isinstance(assigned.value, ast.Name) and assigned.value.id == "DEFAULT_INSTALLER"
