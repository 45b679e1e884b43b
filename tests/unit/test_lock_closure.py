"""A user's pin of a framework's own dependency, inside the range the framework declares, belongs to the environment
set (issue #28): cpu-smoke plus ``protobuf==4.21.12`` (TensorFlow 2.12 allows ``>=3.20.3,<5``) and ``six==1.16.0``
(``>=1.12``) was refused by `envgen lock` ("moves protobuf from 4.25.9 ... to 4.21.12") and failed an unlocked
build's extras layer. Now the plan puts the lines the frameworks require into the environment stage, and the lock
resolves them with the frameworks' pins. Resolved for real: uv against PyPI and the host's wheelhouse (torch's CPU
wheel), for the image's platform, no engine (as test_lock_ranges.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from envgen.kb import KnowledgeBase, load_kb
from envgen.lock.lock import lock
from envgen.plan.image import plan_image
from envgen.plan.lockfile import parse_lock
from envgen.profile import load_profile

PINS = ["numpy==1.23.5", "protobuf==4.21.12", "six==1.16.0", "colorama==0.4.6"]


def closure_profile(directory: Path) -> Path:
    """cpu-smoke with two pins of TensorFlow's own dependencies and one package no framework needs."""
    text = (Path(__file__).parents[2] / "profiles" / "cpu-smoke.yaml").read_text(encoding="utf-8")
    body = text.replace("name: cpu-smoke", "name: closure").replace(
        "  pip:\n    - numpy==1.23.5\n", "  pip:\n" + "".join(f"    - {pin}\n" for pin in PINS))
    assert body.count("protobuf==4.21.12") == 1
    path = directory / "closure.yaml"
    path.write_text(body, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def locked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = closure_profile(tmp_path_factory.mktemp("closure"))
    lock(str(path), engine=False)
    return path


def test_the_plan_puts_the_frameworks_dependencies_in_the_environment_stage(tmp_path: Path) -> None:
    plan = plan_image(load_profile(str(closure_profile(tmp_path)), env={}), load_kb())
    stages = {r.name: (r.stage, r.origin) for r in plan.requirements}
    assert stages == {"numpy": ("environment", "packages.pip[0]"), "protobuf": ("environment", "packages.pip[1]"),
                      "six": ("environment", "packages.pip[2]"), "colorama": ("extras", "packages.pip[3]")}
    assert plan.environment_pip == ["tensorflow-cpu==2.12.0", "torch==2.13.0+cpu", *PINS[:3]]
    assert plan.extras_pip == ["colorama==0.4.6"]


def test_the_lock_resolves_the_pins_with_the_frameworks(locked: Path) -> None:
    parsed = parse_lock((locked.parent / "closure.lock.txt").read_text(encoding="utf-8"))
    environment = {e.name: e.version for e in parsed.environment}
    assert environment["protobuf"] == "4.21.12" and environment["six"] == "1.16.0"
    assert environment["numpy"] == "1.23.5" and "tensorflow-cpu" in environment
    assert [e.pin for e in parsed.extras] == ["colorama==0.4.6"]
    # what the lock was made for: the frameworks' pins and packages.pip as written, whatever stage each takes
    assert parsed.inputs.framework == ("tensorflow-cpu==2.12.0", "torch==2.13.0+cpu")
    assert parsed.inputs.extras == tuple(PINS)


def test_the_locked_render_installs_them_in_the_environment_layer(locked: Path, kb: KnowledgeBase) -> None:
    from envgen.render.core import render_in_memory

    files = render_in_memory(plan_image(load_profile(str(locked)), kb)).files
    environment = files["requirements.lock"].decode()
    extras = [line for line in files["requirements.extra.txt"].decode().splitlines() if not line.startswith("#")]
    assert "\nprotobuf==4.21.12 --hash=sha256:" in environment and "\nsix==1.16.0 --hash=sha256:" in environment
    assert [line.split(" ")[0] for line in extras if line] == ["colorama==0.4.6"]


def test_a_pin_of_a_dependency_of_a_dependency_lands_in_the_environment_stage(tmp_path: Path) -> None:
    """Unlocked, the split reads the KB's recorded Requires-Dist transitively: TensorFlow 2.12 requires
    ``jax>=0.3.15``, and the recorded jax releases require ``scipy`` and ``ml-dtypes``, which TensorFlow does not name
    itself: a user's pin of scipy is resolved with the frameworks, not installed over them in the extras layer."""
    from envgen.plan.requirements import framework_closure

    kb = load_kb()
    tensorflow = kb.requires_of("tensorflow-cpu", "2.12.0")
    assert tensorflow is not None
    direct = {r.name for r in tensorflow.active("3.11", frozenset())}
    assert "jax" in direct and "scipy" not in direct and "ml-dtypes" not in direct
    closure = framework_closure(kb, ["tensorflow-cpu==2.12.0", "torch==2.13.0+cpu"], "3.11")
    assert {"jax", "scipy", "ml-dtypes"} <= closure and "colorama" not in closure
    path = closure_profile(tmp_path)
    path.write_text(path.read_text().replace("protobuf==4.21.12", "scipy==1.11.4"))
    plan = plan_image(load_profile(str(path), env={}), kb)
    stages = {r.name: r.stage for r in plan.requirements}
    assert stages["scipy"] == "environment" and stages["colorama"] == "extras"
    assert "scipy==1.11.4" in plan.environment_pip and plan.extras_pip == ["colorama==0.4.6"]
