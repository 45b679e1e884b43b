"""Issue #32 item 4 / #33: on a base that holds frameworks and other distributions (base_provides), every pip
resolution envgen renders is constrained to the base's versions (constraints.base.txt, written from the plan), so
that a packages.pip line whose *dependencies* need another version fails at that step, named in one line, instead of
installing a second copy (torch from PyPI over the base's CUDA build)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from envgen import layout
from envgen.errors import BuildFailed
from envgen.kb import load_kb
from envgen.lock.wheels import download_command, manylinux_platforms, prefetch
from envgen.paths import build_scripts_dir
from envgen.plan.image import plan_image
from envgen.plan.requirements import base_conflict, depends_on
from envgen.profile import load_profile
from envgen.render.core import render_in_memory

PIP_LOG = Path(__file__).resolve().parents[1] / "fixtures" / "pip" / "resolution-impossible-constraint.txt"
TOP = {"name": "on-torch", "base": "envgen-local/h200-host:latest", "local_base": True, "python": "3.12",
       "cuda": "13.0", "frameworks": {"pytorch": "2.11.0+cu130"}, "gpu": {"targets": ["H200"]},
       "base_provides": {"python": "/opt/torch/.venv/bin/python3",
                         "packages": {"Six": "1.11.0", "triton": "3.6.0"}},
       "packages": {"pip": ["asttokens==2.4.1", "triton>=3.5"]}}
LINE = ("a packages.pip line needs another version of six than the base holds (base_provides: six 1.11.0): "
        "asttokens 2.4.1 depends on six>=1.12.0")


def load(tmp_path: Path, **changes: object):
    data = {**TOP, **changes}
    path = tmp_path / f"{data['name']}.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_profile(str(path), env={})


def test_the_plan_holds_every_version_the_base_holds_once(tmp_path: Path) -> None:
    plan = plan_image(load(tmp_path), load_kb())
    # the framework at its public version (==2.11.0 admits the base's +cu130 build), the packages by PEP 503 name
    assert plan.base_held == {"six": "1.11.0", "torch": "2.11.0", "triton": "3.6.0"}
    assert plan.pins.base == ("six==1.11.0", "torch==2.11.0", "triton==3.6.0") == tuple(plan.base_constraints)
    plain = {key: value for key, value in TOP.items() if key != "base_provides"}
    path = tmp_path / "plain.yaml"
    path.write_text(yaml.safe_dump({**plain, "name": "plain", "base": "debian:bookworm-slim"}))
    assert plan_image(load_profile(str(path), env={}), load_kb()).pins.base == ()


def test_every_resolving_install_is_given_the_constraints_file(tmp_path: Path) -> None:
    files = render_in_memory(plan_image(load(tmp_path), load_kb())).files
    constraints = files[layout.BASE_CONSTRAINTS].decode()
    assert [line for line in constraints.splitlines() if not line.startswith("#")] == [
        "six==1.11.0", "torch==2.11.0", "triton==3.6.0"]
    for name in ("Dockerfile", "Dockerfile.classic"):
        text = files[name].decode()
        assert f"COPY requirements.lock {layout.BASE_CONSTRAINTS} /tmp/envgen/\n" in text
        assert "-r requirements.extra.txt -c constraints.base.txt" in text, text
    # the base's triton satisfies its line: not installed, not in the extras file
    assert files["requirements.extra.txt"].decode().splitlines()[-1] == "asttokens==2.4.1"


def test_the_environment_stage_and_a_source_build_are_constrained_too(tmp_path: Path) -> None:
    """A base that holds TensorFlow, torch installed on it (the environment stage), and a line built from its sdist."""
    p = load(tmp_path, python="3.11", cuda="12.1", frameworks={"tensorflow": "2.15.1", "pytorch": "2.1.2+cu121"},
             base="envgen-local/tf:2.15", gpu={"targets": ["A100"]},
             base_provides={"python": "/usr/bin/python3", "frameworks": ["tensorflow"]},
             packages={"pip": ["flash-attn==2.5.8"]})
    plan = plan_image(p, load_kb())
    assert plan.pins.base == ("tensorflow==2.15.1",) and plan.framework_pip[0].startswith("torch==2.1.2")
    text = render_in_memory(plan_image(p, load_kb())).files["Dockerfile"].decode()
    assert "-r requirements.lock -c constraints.base.txt" in text, text
    # flash-attn 2.5.8: PyPI has an sdist only (extensions.yaml); built in its own stage, constrained the same way
    assert [sb.spec for sb in plan.source_builds] == ["flash-attn==2.5.8"]
    assert '--prefix /opt/extras "flash-attn==2.5.8" -c constraints.base.txt' in text, text


def test_a_profile_without_base_provides_has_no_constraints(tmp_path: Path) -> None:
    plain = {key: value for key, value in TOP.items() if key != "base_provides"}
    path = tmp_path / "plain.yaml"
    path.write_text(yaml.safe_dump({**plain, "name": "plain", "base": "debian:bookworm-slim", "frameworks": {},
                                    "gpu": {"required": False}}))
    files = render_in_memory(plan_image(load_profile(str(path), env={}), load_kb())).files
    assert layout.BASE_CONSTRAINTS not in files and "-c constraints" not in files["Dockerfile"].decode()


# --- the explanation: the build scripts and the host download say one line -------------------------------------

def _run(tmp_path: Path, script: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``script`` with a fake python that prints pip's recorded ResolutionImpossible (tests/fixtures/pip/) for
    ``install`` and six 1.11.0 for ``list``; the constraints file as the stage holds it."""
    (tmp_path / "constraints.base.txt").write_text("# the base\nsix==1.11.0\ntorch==2.11.0\n")
    fake = tmp_path / "bin" / "python"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\nif [ "$3" = list ]; then echo six==1.11.0; exit 0; fi\ncat "{PIP_LOG}"; exit 1\n')
    fake.chmod(0o755)
    env = {"PATH": "/usr/bin:/bin", "ENVGEN_PYTHON": str(fake), "ENVGEN_ENV": str(tmp_path),
           "ENVGEN_EXTRAS": str(tmp_path / "extras"), "ENVGEN_WORK": str(tmp_path),
           "ENVGEN_BASE_CONSTRAINTS": str(tmp_path / "constraints.base.txt"),
           "ENVGEN_SECRETS": str(tmp_path / "secrets"), "ENVGEN_MOUNTINFO": str(tmp_path / "mountinfo")}
    (tmp_path / "mountinfo").write_text("30 1 0:1 / / rw - overlay overlay rw\n")
    return subprocess.run(["sh", str(build_scripts_dir() / script), *args], capture_output=True, text=True,
                          env=env, cwd=tmp_path, check=False)


def test_pip_sh_names_the_distribution_the_base_holds(tmp_path: Path) -> None:
    done = _run(tmp_path, "pip.sh", "install", "-r", "requirements.lock", "-c", "constraints.base.txt")
    assert done.returncode == 1
    assert "ResolutionImpossible" in done.stdout  # pip's own output is shown as it ran
    envgen = [line for line in done.stderr.splitlines() if line.startswith("envgen:")]
    # the same words as the lock, check and the host download (plan.requirements.base_conflict)
    assert envgen == ["envgen: " + "; ".join(base_conflict("six", "1.11.0", "asttokens 2.4.1 depends on six>=1.12.0"))]
    assert LINE in envgen[0] and "torch" not in envgen[0]


def test_extras_sh_says_it_once_not_as_an_environment_conflict(tmp_path: Path) -> None:
    """The extras stage's own --constrain (pip list of /opt/env, which sees the base's six) is met by the same
    constraint: the line names the base, not the environment layer."""
    done = _run(tmp_path, "extras.sh", "--constrain", "--prefix", str(tmp_path / "extras"), "-r",
                "requirements.extra.txt", "-c", "constraints.base.txt")
    assert done.returncode == 1
    envgen = [line for line in done.stdout.splitlines() + done.stderr.splitlines() if "envgen:" in line]
    assert len(envgen) == 1 and LINE in envgen[0], envgen


def test_the_python_side_reads_the_same_line() -> None:
    text = PIP_LOG.read_text()
    assert depends_on(text, "six") == "asttokens 2.4.1 depends on six>=1.12.0" and depends_on(text, "si") == ""
    message, fix = base_conflict("six", "1.11.0", depends_on(text, "six"))
    assert message == LINE and "base_provides" in fix and "six 1.11.0" in fix


def test_the_host_download_is_constrained_and_names_the_conflict(tmp_path: Path) -> None:
    """The classic builder's host download (real pip, PyPI): asttokens 2.4.1 requires six>=1.12.0."""
    requirements, constraints = tmp_path / "requirements.extra.txt", tmp_path / layout.BASE_CONSTRAINTS
    requirements.write_text("asttokens==2.4.1\n")
    constraints.write_text("six==1.11.0\n")
    platforms = manylinux_platforms("2.36")
    command = download_command([requirements], tmp_path / "house", "3.11", find_links=[], index_urls=[],
                               platforms=platforms, constraints=constraints)
    assert command[-2:] == ["-c", str(constraints)] and command[:3] == [sys.executable, "-m", "pip"]
    with pytest.raises(BuildFailed) as err:
        prefetch([requirements], tmp_path / "house", "3.11", find_links=[], index_urls=[], platforms=platforms,
                 log_path=tmp_path / "wheels.log", constraints=constraints)
    assert err.value.one_line().startswith(LINE), err.value.one_line()


# --- envgen lock: resolved under the same constraints (uv against PyPI, for real; no engine) ----------------------

HELD_LOCK = """\
name: {name}
base: debian:bookworm-slim
local_base: true
python: "3.11"
gpu: {{required: false}}
base_provides: {{python: /usr/bin/python3, packages: {{six: "1.11.0"}}}}
packages:
  pip: [{pip}]
"""


def test_a_lock_keeps_the_bases_version_and_does_not_install_it(tmp_path: Path) -> None:
    """python-dateutil 2.9.0.post0 requires six>=1.5: unconstrained, the lock would pin six 1.17.0 beside it."""
    from envgen.lock.lock import lock
    from envgen.plan.lockfile import parse_lock

    path = tmp_path / "held-lock.yaml"
    path.write_text(HELD_LOCK.format(name="held-lock", pip='"python-dateutil==2.9.0.post0"'))
    outcome = lock(str(path), engine=False)
    parsed = parse_lock(outcome.path.read_text())
    assert [e.line.split(" ")[0] for e in parsed.extras] == ["python-dateutil==2.9.0.post0"], parsed.extras
    assert not any(e.name == "six" for e in (*parsed.environment, *parsed.extras))


def test_a_lock_that_would_pin_another_version_is_refused_naming_the_line(tmp_path: Path) -> None:
    from envgen.errors import InputError
    from envgen.lock.lock import lock

    path = tmp_path / "held-conflict.yaml"
    path.write_text(HELD_LOCK.format(name="held-conflict", pip='"tomli==2.0.1", "asttokens==2.4.1"'))
    with pytest.raises(InputError) as err:
        lock(str(path), engine=False)
    line = err.value.one_line()
    assert line.startswith("a packages.pip line needs another version of six than the base holds (base_provides: "
                           "six 1.11.0): packages.pip[1] 'asttokens==2.4.1' resolves to six 1."), line
    assert "base_provides" in (err.value.fix or "") and not (tmp_path / "held-conflict.lock.txt").exists()


# --- check, offline: the recorded Requires-Dist rows against the base's versions ------------------------------------

@pytest.mark.parametrize(("line", "errs"), [
    ("xformers==0.0.22.post7", True),  # its wheel requires torch==2.1.0 (framework_requires.yaml)
    ("xformers==0.0.23.post1", False),  # torch==2.1.2: the base's
    ("xformers>=0.0.22,<0.0.24", False),  # a recorded release inside the range fits
    ("rich==13.7.1", False),  # no rows: nothing said
])
def test_check_says_it_from_the_recorded_requires_dist(tmp_path: Path, line: str, errs: bool) -> None:
    from envgen.check import check_profile

    p = load(tmp_path, python="3.11", cuda="12.1", frameworks={"pytorch": "2.1.2+cu121"}, gpu={"targets": ["A100"]},
             base_provides={"python": "/opt/conda/bin/python"}, packages={"pip": [line]})
    found = [f for f in check_profile(p, load_kb()) if f.code == "base-provides-requires"]
    assert [f.severity for f in found] == (["error"] if errs else []), found
    if errs:
        assert found[0].message.startswith(
            "a packages.pip line needs another version of torch than the base holds (base_provides: torch 2.1.2): "
            "packages.pip[0] 'xformers==0.0.22.post7': xformers 0.0.22.post7 requires torch==2.1.0, as its wheel's "
            "Requires-Dist says"), found[0].message
        assert found[0].source.startswith("framework_requires.yaml#xformers==0.0.22.post7: https://")


def test_the_held_version_is_judged_as_pip_judges_it() -> None:
    """A post-release is not its release (``==0.0.22`` leaves out the base's 0.0.22.post7: pip would install
    another copy, so the line is not the base's); a local label on the held version matches a public pin."""
    from envgen.plan.requirements import held_in

    assert not held_in("==0.0.22", "0.0.22.post7") and held_in("==0.0.22.post7", "0.0.22.post7")
    assert held_in("==2.6.0", "2.6.0+cu124") and held_in("==2.6.0+cu124", "2.6.0+cu124")
    assert held_in(">=2.5,<3", "2.6.0+cu124") and held_in("", "1.0") and not held_in("<2", "2.6.0")
