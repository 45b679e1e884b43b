"""Dockerfiles from typed stages (render/stages.py, render/dockerfile.py): each installer class gives the ordered
stages for a profile's install, each step declares what it reaches, and the emitter (render/steps.py) is the one
switch between BuildKit and the classic builder. The templates decide neither the order nor which stage exists."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from envgen import layout
from envgen.kb import load_kb
from envgen.paths import build_scripts_dir, templates_dir
from envgen.plan.image import plan_image
from envgen.profile import list_profiles, load_profile
from envgen.render.dockerfile import Micromamba, Uv, VenvPip, installer_for
from envgen.render.plan import TemplateInput, render_context
from envgen.render.stages import BASE_IMAGE, Bind, CopyFrom, Run, Stage, Wheelhouse
from envgen.render.steps import Emitter, script_closures
from tests.unit.test_render_srcbuild import PROFILE as SRCBUILD  # flash-attn and deepspeed from their sdists

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "profiles"
ON_ENVGEN_IMAGE = """\
name: top
base: envgen/team-base:0123456789ab
local_base: true
installer: pip
python: "3.11"
gpu: {required: false}
base_provides: {python: /opt/env/bin/python3}
packages:
  pip: ["colorama==0.4.6"]
"""
PIP_CACHE, UV_CACHE = ("/root/.cache/pip",), ("/root/.cache/uv",)


@pytest.fixture(scope="module")
def kb():
    return load_kb()


def _plan(kb, name: str, use_lock: bool = True) -> TemplateInput:
    return render_context(plan_image(load_profile(name, env={}), kb), use_lock=use_lock)


def _written(tmp_path: Path, kb, text: str, **changes: str) -> TemplateInput:
    for old, new in changes.items():
        text = text.replace(old, new)
    path = tmp_path / "profile.yaml"
    path.write_text(text)
    return _plan(kb, str(path))


def _names(stages: tuple[Stage, ...]) -> list[tuple[str, str, tuple[str, ...]]]:
    """Each stage as (name, what it builds on, the earlier stages it copies or mounts from)."""
    return [(stage.name, stage.base, stage.copies_from) for stage in stages]


def _environment_run(stage: Stage) -> Run:
    (run,) = [run for run in stage.runs if run.comment and run.comment[0].startswith("The environment layer")]
    return run


def test_pip_venv_builds_extras_and_copies_both_into_the_runtime(kb) -> None:
    plan = _plan(kb, "cpu-smoke", use_lock=False)
    installer = installer_for(plan, buildkit=True)
    assert isinstance(installer, VenvPip) and isinstance(installer_for(plan, buildkit=False), VenvPip)
    stages = installer.stages()
    # strip: GNU strip for the build stage's leave-out step (plan.slim), never shipped
    assert _names(stages) == [("strip", BASE_IMAGE, ()), ("build", BASE_IMAGE, ("strip",)), ("extras", "build", ()),
                              ("runtime", BASE_IMAGE, ("build", "extras"))]
    _, build, extras, runtime = stages
    environment = _environment_run(build)
    assert environment.scripts == ("pip.sh",) and environment.caches == PIP_CACHE
    assert environment.secrets and environment.wheels and " -m venv " in environment.command
    assert Wheelhouse() in build.steps  # the classic builder's copy of the wheels: the build stage only
    # what each stage reaches, read from its steps
    # slim.sh: what no package loads left out at the end of the stage (plan.slim, leave_out.yaml)
    assert (build.scripts, build.caches, build.secrets) == (("apt-install.sh", "pip.sh", "slim.sh", "strip.sh"),
                                                            PIP_CACHE, True)
    assert (extras.scripts, extras.caches, extras.secrets) == ((), (), False)
    # numpy==1.23.5 is a pin inside the frameworks' closure: the environment takes it, the extras stage has nothing
    assert [(run.command, run.scripts) for run in extras.runs] == [(f"mkdir -p {layout.EXTRAS}", ())]
    assert runtime.steps[-1] == CopyFrom("extras", layout.EXTRAS + "/", layout.ENV + "/")
    assert [run.scripts for run in runtime.runs] == [("apt-install.sh",), ("create-user.sh",)]


def test_a_locked_pip_profile_installs_with_uv_under_buildkit_and_with_pip_on_the_classic_builder(kb) -> None:
    plan = _plan(kb, "cpu-smoke")
    assert plan.lock is not None and isinstance(installer_for(plan, buildkit=False), VenvPip)
    installer = installer_for(plan, buildkit=True)
    assert isinstance(installer, Uv)
    stages = installer.stages()
    assert _names(stages) == [("system", BASE_IMAGE, ()), ("uv", "system", ()), ("strip", BASE_IMAGE, ()),
                              ("runtime", "system", ("uv", "strip"))]
    environment, extras = stages[-1].runs
    uv = Bind(layout.UV_DIR, layout.UV_DIR, stage="uv")
    assert environment.binds == (uv, Bind("requirements.lock", f"{layout.WORK}/requirements.lock"),
                                 Bind("/opt/envgen-strip", "/opt/envgen-strip", stage="strip"))
    assert extras.binds == (uv, Bind("requirements.extra.txt", f"{layout.WORK}/requirements.extra.txt"))
    assert environment.scripts == ("uv.sh", "slim.sh", "strip.sh", "compile.sh")
    assert environment.caches == extras.caches == UV_CACHE
    # uv installs, slim.sh leaves out, strip.sh strips, compile.sh byte-compiles what is left: nothing is compiled to
    # be removed, and compile.sh comes last
    install, slim, strip, compile_ = (environment.command.index(f"sh /opt/envgen/sh/{name}")
                                      for name in environment.scripts)
    assert install < slim < strip < compile_ and "--compile-bytecode" not in environment.command
    assert (stages[-1].scripts, stages[-1].caches, stages[-1].secrets) == (("compile.sh", "slim.sh", "strip.sh",
                                                                            "uv.sh"),
                                                                           UV_CACHE, True)
    assert stages[1].scripts == ("with-secrets.sh",) and stages[1].caches == ()
    assert extras.scripts == () and extras.command.startswith("echo ")  # cpu-smoke's lock has no extras
    assert not any(isinstance(step, Wheelhouse) for stage in stages for step in stage.steps)  # BuildKit only


def test_micromamba_makes_the_environment_then_the_shared_stages(kb) -> None:
    plan = _plan(kb, "modern-a100")
    installer = installer_for(plan, buildkit=True)
    assert isinstance(installer, Micromamba)
    stages = installer.stages()
    assert _names(stages) == [("strip", BASE_IMAGE, ()), ("build", BASE_IMAGE, ("strip",)),
                              ("extras", "build", ("strip",)), ("runtime", BASE_IMAGE, ("build", "extras"))]
    assert [run.scripts for run in stages[1].runs] == [("apt-install.sh",), ("micromamba.sh",), ("conda-env.sh",),
                                                       ("slim.sh", "strip.sh")]
    environment = _environment_run(stages[1])
    assert environment.caches == (f"{layout.MICROMAMBA_ROOT}/pkgs", *PIP_CACHE)
    assert environment.command.endswith("conda-env.sh environment.yml")
    locked = Micromamba(replace(plan, conda_lock="@EXPLICIT\n"))  # an explicit list beside the profile
    environment = _environment_run(locked.stages()[1])
    assert environment.scripts == ("conda-env.sh", "pip.sh") and "-r requirements.lock" in environment.command


def test_each_sdist_only_package_is_a_stage_of_its_own_between_extras_and_runtime(tmp_path: Path, kb) -> None:
    stages = installer_for(_written(tmp_path, kb, SRCBUILD), buildkit=True).stages()
    twin = "nvidia/cuda:12.8.1-cudnn-devel-ubuntu22.04"
    assert _names(stages) == [("strip", BASE_IMAGE, ()), ("build", BASE_IMAGE, ("strip",)), ("extras", "build", ()),
                              ("srcbuild1", twin, ("build", "extras")),
                              ("srcbuild2", twin, ("build", "srcbuild1", "strip")),
                              ("runtime", BASE_IMAGE, ("build", "srcbuild2"))]
    assert [run.scripts for run in stages[3].runs] == [("apt-install.sh",), ("srcbuild.sh",)]
    assert stages[3].comment[0].startswith("flash-attn==2.8.3: PyPI has an sdist only")
    # a devel base has nvcc: each build runs on the stage before it, nothing to copy in
    devel = installer_for(_written(tmp_path, kb, SRCBUILD, **{"-runtime-": "-devel-"}), buildkit=True).stages()
    assert _names(devel)[3:5] == [("srcbuild1", "extras", ()), ("srcbuild2", "srcbuild1", ("strip",))]
    assert [run.scripts for run in devel[3].runs] == [("srcbuild.sh",)]


def test_on_an_envgen_image_the_runtime_copies_only_the_extras(tmp_path: Path, kb) -> None:
    """The base's own /opt/env is the environment (no venv, nothing for the environment layer): the runtime stage
    takes the extras alone, and each stage installs as root over the base's non-root user."""
    stages = installer_for(_written(tmp_path, kb, ON_ENVGEN_IMAGE), buildkit=True).stages()
    assert _names(stages)[-1] == ("runtime", BASE_IMAGE, ("extras",))
    assert "strip" not in [name for name, _, _ in _names(stages)]  # a base that provides the environment: no strip
    assert _environment_run(stages[0]).scripts == ()
    for stage in (stages[0], stages[-1]):
        assert [(s.keyword, s.value) for s in stage.steps[:2]] == [("SHELL", stage.steps[0].value), ("USER", "root")]


def test_the_environment_layer_reaches_only_what_its_run_uses(tmp_path: Path, kb) -> None:
    """What tests/pipeline/test_pipeline_layer_cache.py relies on: adding a packages.pip line adds extras.sh to the
    extras stage, and the environment step (its command and what it declares) stays the same."""
    text = (REPO / "profiles" / "cpu-smoke.yaml").read_text()
    steps = []
    for name, pip in (("none", "  pip: []\n"), ("plus", "  pip:\n    - colorama==0.4.6\n")):
        plan = _written(tmp_path, kb, text, **{"name: cpu-smoke": f"name: {name}",
                                              "  pip:\n    - numpy==1.23.5\n": pip})
        build, extras = VenvPip(replace(plan, lock=None)).stages()[1:3]
        steps.append(_environment_run(build))
        assert [run.scripts for run in extras.runs] == ([()] if name == "none" else [("extras.sh",),
                                                                                     ("slim.sh", "strip.sh")])
    assert steps[0] == steps[1] and "extras.sh" not in steps[0].scripts


@pytest.mark.parametrize("buildkit", [True, False], ids=["buildkit", "classic"])
@pytest.mark.parametrize("name", [s.name for s in list_profiles({})] + [str(FIXTURES / "host-torch.yaml")],
                         ids=lambda n: Path(n).stem)
def test_stages_build_and_copy_only_on_earlier_ones_and_end_in_runtime(name: str, buildkit: bool, kb) -> None:
    seen: list[str] = []
    for stage in installer_for(_plan(kb, name), buildkit).stages():
        assert stage.name not in seen
        assert stage.base == BASE_IMAGE or stage.base in seen or "/" in stage.base, stage.name
        assert set(stage.copies_from) <= set(seen), stage.name
        seen.append(stage.name)
    assert seen[-1] == "runtime"


def test_the_emitter_is_the_one_switch_between_buildkit_and_classic() -> None:
    closures = script_closures(build_scripts_dir())
    step = Run("sh /opt/envgen/sh/extras.sh -r requirements.extra.txt", ("extras.sh",), PIP_CACHE, secrets=True,
               wheels=True, binds=(Bind("requirements.extra.txt", "/tmp/envgen/requirements.extra.txt"),),
               comment=("the extras",))
    kit, classic = Emitter(True, closures), Emitter(False, closures)
    scripts = kit.scripts(["extras.sh"])
    assert "extras.sh" in scripts and "lib.sh" in scripts
    assert kit.step(step) == "# the extras\nRUN " + "".join(f"{mount} \\\n    " for mount in (
        "--mount=type=cache,target=/root/.cache/pip",
        *(f"--mount=type=secret,id={secret},required=false" for secret in layout.SECRET_IDS),
        "--mount=type=bind,source=wheels,target=/tmp/wheels",
        "--mount=type=bind,source=requirements.extra.txt,target=/tmp/envgen/requirements.extra.txt",
        *(f"--mount=type=bind,source=envgen/sh/{s},target=/opt/envgen/sh/{s}" for s in scripts),
    )) + step.command + "\n"
    assert classic.step(step) == ("# the extras\nCOPY " + " ".join(f"envgen/sh/{s}" for s in scripts)
                                  + " /opt/envgen/sh/\nRUN " + step.command + "\n")
    assert (kit.step(Wheelhouse()), classic.step(Wheelhouse())) == ("", "COPY wheels/ /tmp/wheels/\n")
    stage = Stage("extras", "build", (step,), ("two", "lines"), gap=2)
    assert kit.opening(stage) == classic.opening(stage) == "\n\n# two\n# lines\nFROM build AS extras\n"


def test_the_templates_decide_neither_the_order_nor_which_stage_exists() -> None:
    """templates/docker: one loop over the stages and their steps; the one condition is the builder's header."""
    root = templates_dir()
    texts = {p.relative_to(root).as_posix(): p.read_text() for p in (root / "docker").rglob("*.j2")}
    assert [name for name, text in texts.items() if "{% if" in text or "{%- if" in text] == ["docker/_builder.j2"]
    assert texts["docker/Dockerfile.j2"].count("{% for") + texts["docker/Dockerfile.j2"].count("{%- for") == 2


def test_the_plan_puts_the_locks_nvidia_cuda_wheels_in_a_first_layer_that_one_more_package_keeps(kb) -> None:
    """a100-pypi: the plan (plan/installers/uv.py cuda_layer) picks the lock's NVIDIA CUDA library wheels by the KB's
    tables (nvidia_wheel_files.yaml, cuda_libraries.yaml), not by their names; uv installs them right after the venv,
    before the environment and the extras, so one more package in packages.pip (bench/bench_build.py's +1) changes
    requirements.extra.txt and leaves the CUDA layer, and its requirements file, as they were."""
    from envgen.plan.lockfile import LockEntry
    from envgen.plan.packages import cuda_wheel_names
    from envgen.render.files import render_files

    plan = _plan(kb, "a100-pypi")
    assert plan.lock is not None
    names = [e.name for e in plan.cuda_wheels]
    assert len(names) == 8 and "numpy" not in names and "nvidia-cuda-nvcc-cu11" in names  # nvcc: a files row only
    assert "nvidia-ml-py" not in cuda_wheel_names(kb)  # an nvidia- name with no KB row is no CUDA wheel
    assert {"nvidia-cuda-runtime-cu12", "nvidia-cuda-runtime"} <= cuda_wheel_names(kb)  # cudart's, CUDA 12 and 13
    cuda, environment, extras = Uv(plan).stages()[-1].runs
    assert cuda.binds[1] == Bind("requirements.cuda.txt", f"{layout.WORK}/requirements.cuda.txt")
    assert "uv.sh venv" in cuda.command and "uv.sh venv" not in environment.command
    assert environment.binds[1].source == "requirements.lock" and extras.binds[1].source == "requirements.extra.txt"
    more = replace(plan, lock=replace(plan.lock, extras=(*plan.lock.extras, LockEntry("colorama", "0.4.6",
                                                                                       ("0" * 64,)))))
    assert Uv(more).stages()[-1].runs[0] == cuda
    before, after = render_files(plan).files, render_files(more).files
    assert before["requirements.cuda.txt"] == after["requirements.cuda.txt"]
    assert before["requirements.extra.txt"] != after["requirements.extra.txt"]
    cuda_lines = {line for line in before["requirements.cuda.txt"].decode().splitlines() if not line.startswith("#")}
    assert cuda_lines <= set(before["requirements.extra.txt"].decode().splitlines())  # uv finds them installed there
    assert "requirements.cuda.txt" not in render_files(_plan(kb, "cpu-smoke")).files  # no NVIDIA wheels: no layer
    assert len(Uv(_plan(kb, "cpu-smoke")).stages()[-1].runs) == 2
