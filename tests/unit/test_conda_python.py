"""A conda profile's `python: "3.7"` is conda's fuzzy `python=3.7` (3.7.*), not `python==3.7` (exactly 3.7.0);
a patch release (`3.7.12`) stays exact. Also for the profiles `envgen suggest` writes."""

from __future__ import annotations

import yaml

from envgen.kb import load_kb
from envgen.plan.condalock import conda_python_spec
from envgen.plan.image import plan_image
from envgen.profile import load_profile
from envgen.profile.model import Profile
from envgen.render.core import render_in_memory


def _environment_yml(profile: Profile) -> list[str]:
    files = render_in_memory(plan_image(profile, load_kb())).files
    return [d for d in yaml.safe_load(files["environment.yml"])["dependencies"] if isinstance(d, str)]


def test_minor_is_fuzzy_and_patch_is_exact() -> None:
    assert conda_python_spec("3.7") == "python=3.7"
    assert conda_python_spec("3.7.12") == "python==3.7.12"


def test_environment_yml_of_a_minor_only_profile() -> None:
    base = load_profile("legacy-maxwell")
    fuzzy = base.model_copy(update={"python": "3.7"})
    assert "python=3.7" in _environment_yml(fuzzy)
    assert not [d for d in _environment_yml(fuzzy) if d.startswith("python==")]
    exact = base.model_copy(update={"python": "3.7.12"})
    assert "python==3.7.12" in _environment_yml(exact)
