"""Render refuses nothing check let through (issue #28 part 2): every refusal of the render and the build's
preparation is in ``envgen.plan.refusals.REFUSALS``; for each one the profile decides, a profile that triggers it
gets the same reason and fix from `envgen check` as a finding, and the render refuses it. Measured before: a pip
profile with env PATH got "0 error(s)" from check and a render error; a conda GPU profile with env LD_LIBRARY_PATH
got "no findings"."""

from __future__ import annotations

import importlib
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from envgen.check import check_profile
from envgen.errors import EnvgenError
from envgen.kb import KnowledgeBase, load_kb
from envgen.paths import builtin_profiles_dir, kb_data_dir
from envgen.plan.image import plan_image
from envgen.plan.refusals import REFUSALS
from envgen.profile import Profile, load_profile
from envgen.render import render_in_memory

Case = Callable[[Path, KnowledgeBase], tuple[Profile, KnowledgeBase]]


def _write(tmp_path: Path, name: str, body: dict[str, object]) -> Profile:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump({"name": name, **body}), encoding="utf-8")
    return load_profile(str(path), env={})


def _env_path(tmp_path: Path, kb: KnowledgeBase) -> tuple[Profile, KnowledgeBase]:
    return _write(tmp_path, "envpath", {"base": "debian:bookworm-slim", "local_base": True, "installer": "pip",
                                        "python": "3.11", "gpu": {"required": False}, "env": {"PATH": "/opt/bin"},
                                        "packages": {"pip": ["numpy==1.26.4"]}}), kb


def _env_conda(tmp_path: Path, kb: KnowledgeBase) -> tuple[Profile, KnowledgeBase]:
    return _write(tmp_path, "condald", {"base": "nvidia/cuda:12.1.1-runtime-ubuntu22.04", "installer": "conda",
                                        "python": "3.11", "cuda": "12.1", "env": {"LD_LIBRARY_PATH": "/usr/local/lib"},
                                        "packages": {"conda": ["numpy=1.26.4"]}}), kb


def _base_collision(tmp_path: Path, kb: KnowledgeBase) -> tuple[Profile, KnowledgeBase]:
    """An image envgen built, recognised by its row (here a KB whose envgen family names the team's registry path),
    under a profile that makes a venv at /opt/env anew (no base_provides)."""
    data = tmp_path / "kb"
    shutil.copytree(kb_data_dir(), data)
    path = data / "base_families.yaml"
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    envgen = next(row for row in doc["base_families"] if row["name"] == "envgen")
    envgen["match"] = {"repository_prefix": "localhost:5000/team/"}
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return _write(tmp_path, "ontop", {"base": "localhost:5000/team/base:1", "local_base": True, "installer": "pip",
                                      "python": "3.11", "gpu": {"required": False},
                                      "packages": {"pip": ["colorama==0.4.6"]}}), load_kb(data)


def _lock_stale(tmp_path: Path, kb: KnowledgeBase) -> tuple[Profile, KnowledgeBase]:
    """cpu-minimal's lock beside a copy whose numpy pin moved."""
    source = builtin_profiles_dir()
    shutil.copy(source / "cpu-minimal.lock.txt", tmp_path / "cpu-minimal.lock.txt")
    text = (source / "cpu-minimal.yaml").read_text(encoding="utf-8").replace("numpy==1.26.4", "numpy==1.26.3")
    (tmp_path / "cpu-minimal.yaml").write_text(text, encoding="utf-8")
    return load_profile(str(tmp_path / "cpu-minimal.yaml"), env={}), kb


def _lock_target(tmp_path: Path, kb: KnowledgeBase) -> tuple[Profile, KnowledgeBase]:
    """cpu-minimal's lock, its inputs unchanged, made for another C library (manylinux_2_17)."""
    source = builtin_profiles_dir()
    lock = (source / "cpu-minimal.lock.txt").read_text(encoding="utf-8")
    assert "# target: cp311-manylinux_2_36_x86_64" in lock
    (tmp_path / "cpu-minimal.lock.txt").write_text(lock.replace("manylinux_2_36", "manylinux_2_17"), encoding="utf-8")
    shutil.copy(source / "cpu-minimal.yaml", tmp_path / "cpu-minimal.yaml")
    return load_profile(str(tmp_path / "cpu-minimal.yaml"), env={}), kb


_CONDA = {"base": "nvidia/cuda:12.1.1-runtime-ubuntu22.04", "installer": "conda", "python": "3.11", "cuda": "12.1",
          "packages": {"conda": ["numpy=1.26.4"]}}


def _lock_not_pip(tmp_path: Path, kb: KnowledgeBase) -> tuple[Profile, KnowledgeBase]:
    (tmp_path / "condald.lock.txt").write_text("# a pip lock\n", encoding="utf-8")
    return _write(tmp_path, "condald", _CONDA), kb


def _conda_lock_stale(tmp_path: Path, kb: KnowledgeBase) -> tuple[Profile, KnowledgeBase]:
    """An explicit list made when the profile asked for numpy 1.26.3."""
    (tmp_path / "condald.conda.txt").write_text(
        "# format: envgen.conda-lock/1\n# conda-pins: numpy==1.26.3 pip==24.0 python=3.11\n@EXPLICIT\n",
        encoding="utf-8")
    return _write(tmp_path, "condald", _CONDA), kb


def _conda_lock_not_explicit(tmp_path: Path, kb: KnowledgeBase) -> tuple[Profile, KnowledgeBase]:
    (tmp_path / "condald.conda.txt").write_text("numpy=1.26.4\n", encoding="utf-8")
    return _write(tmp_path, "condald", _CONDA), kb


def _base_provides_conflict(tmp_path: Path, kb: KnowledgeBase) -> tuple[Profile, KnowledgeBase]:
    """The base holds six 1.16.0 (base_provides.packages); packages.pip asks for 1.15.0, and a range without it."""
    return _write(tmp_path, "basesix", {"base": "debian:bookworm-slim", "local_base": True, "installer": "pip",
                                        "python": "3.11", "gpu": {"required": False},
                                        "base_provides": {"packages": {"six": "1.16.0", "colorama": "0.4.6"}},
                                        "packages": {"pip": ["six==1.15.0", "colorama<0.4"]}}), kb


# code -> the profiles that trigger it (each refusal seen by check has at least one)
CASES: dict[str, list[Case]] = {
    "env-replaces-envgen": [_env_path, _env_conda],
    "base-env-collision": [_base_collision],
    "base-provides-conflict": [_base_provides_conflict],
    "lock-stale": [_lock_stale],
    "lock-not-pip": [_lock_not_pip],
    "lock-target": [_lock_target],
    "conda-lock-stale": [_conda_lock_stale, _conda_lock_not_explicit],
}


def test_every_refusal_check_can_see_has_a_case() -> None:
    assert {r.code for r in REFUSALS if r.seen_by == "check"} == set(CASES)
    assert len({r.code for r in REFUSALS}) == len(REFUSALS)


@pytest.mark.parametrize(("code", "case"), [(code, case) for code, cases in CASES.items() for case in cases],
                         ids=lambda v: v if isinstance(v, str) else v.__name__)
def test_check_reports_what_the_render_refuses(tmp_path: Path, kb: KnowledgeBase, code: str, case: Case) -> None:
    profile, used = case(tmp_path, kb)
    refusal = next(r for r in REFUSALS if r.code == code)
    findings = [f for f in check_profile(profile, used) if f.code == code]
    assert findings and all(f.severity == refusal.severity for f in findings), findings
    with pytest.raises(EnvgenError) as err:
        render_in_memory(plan_image(profile, used))
    assert any(err.value.message in f.message for f in findings), (err.value.message, findings)
    assert err.value.fix and any(err.value.fix in f.fix or f.fix in err.value.fix or "envgen lock" in f.fix
                                 for f in findings)


def test_the_measured_profiles_get_an_error_from_check(tmp_path: Path, kb: KnowledgeBase) -> None:
    for case in (_env_path, _env_conda):
        profile, used = case(tmp_path, kb)
        errors = [f for f in check_profile(profile, used) if f.severity == "error"]
        assert [f.code for f in errors] == ["env-replaces-envgen"]


@pytest.mark.parametrize("refusal", [r for r in REFUSALS if r.seen_by != "check"], ids=lambda r: r.code)
def test_refusals_check_cannot_see_say_why(refusal) -> None:  # type: ignore[no-untyped-def]
    """The rest depend on the command's options and paths, the engine or a registry, or are envgen's own bugs: each
    names what check is not given, and the module that raises it exists."""
    assert refusal.why_not_check and refusal.seen_by in ("invocation", "engine", "internal")
    importlib.import_module(refusal.raised_in)


def test_layering_on_an_envgen_image_is_no_collision(tmp_path: Path, kb: KnowledgeBase) -> None:
    """Named in the profile (base_provides.python inside /opt/env), the envgen image is layered on: no finding."""
    profile = _write(tmp_path, "top", {"base": "localhost:5000/team/base:1", "local_base": True, "installer": "pip",
                                       "python": "3.11", "gpu": {"required": False},
                                       "base_provides": {"python": "/opt/env/bin/python3"},
                                       "packages": {"pip": ["colorama==0.4.6"]}})
    assert "base-env-collision" not in {f.code for f in check_profile(profile, kb)}
    files = render_in_memory(plan_image(profile, kb)).files
    dockerfile = files["Dockerfile"].decode()
    assert "USER root" in dockerfile and " -m venv" not in dockerfile
    assert "COPY --from=build /opt/env /opt/env" not in dockerfile


# Where the render and the build's preparation can refuse: each module raising an InputError or RenderError (or
# calling a function that makes one) is named by an entry of the list. CheckFailed (prepare.py) is check's own verdict.
SCANNED = ("render/*.py", "plan/*.py", "pipeline/prepare.py", "pipeline/build.py", "plan/lockfile.py",
           "lock/lock_base.py")


def _refusing_modules() -> set[str]:
    import ast

    import envgen

    root = Path(envgen.__file__).parent
    found = set()
    for pattern in SCANNED:
        for path in root.glob(pattern):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                name = (node.exc.func.id if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
                        and isinstance(node.exc.func, ast.Name) else "")
                if name in ("InputError", "RenderError") or (name[:1].islower() and name != "refusal"):
                    found.add("envgen." + ".".join(path.relative_to(root).with_suffix("").parts))
    return found


def test_every_module_that_refuses_is_in_the_list() -> None:
    listed = {r.raised_in for r in REFUSALS}
    refusing = _refusing_modules()
    assert {"envgen.render.plan", "envgen.plan.condalock", "envgen.plan.lockfile"} <= refusing
    assert refusing <= listed, sorted(refusing - listed)


def test_an_envgen_base_named_by_its_labels_alone_is_refused_by_the_build(tmp_path: Path, kb: KnowledgeBase) -> None:
    """The engine's labels (read by the build, not by check) name an image envgen built: a profile that makes its
    environment anew over it is refused, naming the interpreter to layer on; one that names it is not."""
    from envgen.plan.base import labelled_base_refusals

    labels = {"io.envgen.profile": "team", "io.envgen.version": "0.1.0"}
    plain = _write(tmp_path, "plain", {"base": "localhost:5000/team/base:1", "local_base": True, "installer": "pip",
                                       "python": "3.11", "gpu": {"required": False}})
    refused = labelled_base_refusals(plain, kb, labels)
    assert [r.code for r in refused] == ["envgen-base-unnamed"]
    assert "occupies /opt/env" in refused[0].message and "/opt/env/bin/python3" in refused[0].fix
    assert labelled_base_refusals(plain, kb, {}) == []
    named = _write(tmp_path, "named", {"base": "localhost:5000/team/base:1", "local_base": True, "installer": "pip",
                                       "python": "3.11", "gpu": {"required": False},
                                       "base_provides": {"python": "/opt/env/bin/python3"}})
    assert labelled_base_refusals(named, kb, labels) == []


def test_frameworks_installed_on_top_of_an_envgen_image_reach_the_image(tmp_path: Path, kb: KnowledgeBase) -> None:
    """On top of an envgen image, a framework the base does not provide is installed into the base's /opt/env in
    the build stage, so the runtime stage copies that environment (without one, it keeps the base's)."""
    profile = _write(tmp_path, "top", {"base": "localhost:5000/team/base:1", "local_base": True, "installer": "pip",
                                       "python": "3.11", "gpu": {"required": False},
                                       "frameworks": {"pytorch": "2.2.2", "tensorflow": "2.15.0"},
                                       "base_provides": {"python": "/opt/env/bin/python3",
                                                         "frameworks": ["tensorflow"]}})
    files = render_in_memory(plan_image(profile, kb)).files
    dockerfile = files["Dockerfile"].decode()
    assert "torch==2.2.2" in files["requirements.lock"].decode()
    assert " -m venv" not in dockerfile and "COPY --from=build /opt/env /opt/env" in dockerfile
