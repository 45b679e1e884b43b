"""bench/bench_build.py's pure parts: the wheels it downloads for a lock, and that each hand-written reference
installs exactly the pins of the profile it is measured against (the comparison's fairness)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from envgen.profile import load_profile

REPO = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_build", REPO / "bench" / "bench_build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # dataclasses read the module of the class they make
    spec.loader.exec_module(module)
    return module


def test_the_wheelhouse_gets_every_pip_set_of_the_lock_and_no_apt_line() -> None:
    text = (REPO / "profiles" / "a100-pypi.lock.txt").read_text(encoding="utf-8")
    lines = _bench().locked_lines(text)
    names = [line.split("==")[0] for line in lines]
    assert len(lines) == 45 + 8 + 2  # [environment], [extras], [tools] (pip: requirements.lock installs it; uv)
    assert {"tensorflow", "nvidia-cudnn-cu11", "pip", "uv"} <= set(names)
    assert not any(name.startswith("python3") for name in names)  # the [apt] section stays out


@pytest.mark.parametrize("profile", ["cpu-smoke", "a100-pypi"])
def test_each_reference_installs_the_profiles_pins_from_the_wheelhouse_and_keeps_no_wheel(profile: str) -> None:
    bench = _bench()
    assert profile in bench.PROFILES
    dockerfile = (REPO / "bench" / "reference" / f"{profile}.Dockerfile").read_text(encoding="utf-8")
    loaded = load_profile(str(REPO / "profiles" / f"{profile}.yaml"), env={})
    frameworks = loaded.frameworks
    wanted = {f"{frameworks.tensorflow_package}=={frameworks.tensorflow}", *loaded.packages.pip}
    if frameworks.pytorch:
        wanted.add(f"torch=={frameworks.pytorch}")
    assert set(re.findall(r"[a-z][a-z0-9-]*==[0-9][^\s\\]*", dockerfile)) == wanted
    assert "--no-index --find-links /tmp/wheels" in dockerfile and "--mount=type=bind,source=wheels" in dockerfile
    assert "COPY" not in dockerfile.replace("# ", "").split("FROM", 1)[1]  # no wheel in a layer of the reference


def test_a_history_step_is_shown_without_its_mounts() -> None:
    step = ("RUN |3 A=1 /bin/sh -c --mount=type=cache,target=/root/.cache/uv --mount=type=bind,source=wheels,"
            "target=/tmp/wheels sh /opt/envgen/sh/uv.sh pip install -r /tmp/envgen/requirements.cuda.txt")
    short = _bench().short_step(step)
    assert short == "RUN sh /opt/envgen/sh/uv.sh pip install -r /tmp/envgen/requirements.cuda.txt"
    assert _bench().short_step("RUN " + "x" * 100).endswith("...") and len(_bench().short_step("x" * 100)) == 90


def test_both_contexts_hold_the_wheels_of_the_lock_and_the_extra_only(tmp_path: Path) -> None:
    bench = _bench()
    house = tmp_path / "house"
    house.mkdir()
    names = ["torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl", "colorama-0.4.6-py2.py3-none-any.whl",
             "Markupsafe-3.0.4-cp311-cp311-manylinux_2_17_x86_64.whl",  # the lock's markupsafe, spelt otherwise
             "nvidia_cudnn_cu11-8.6.0.163-py3-none-manylinux1_x86_64.whl", "torch-2.12.0-cp311-none-any.whl"]
    for name in names:
        (house / name).write_bytes(b"")
    lock = tmp_path / "cpu-smoke.lock.txt"
    lock.write_text((REPO / "profiles" / "cpu-smoke.lock.txt").read_text(encoding="utf-8"), encoding="utf-8")
    run = bench.Bench("cpu-smoke", tmp_path, house, "ns", None, tmp_path / "log")
    assert sorted(p.name for p in bench.profile_wheels(run, lock).iterdir()) == sorted(names[:3])
    hand = bench.hand_context(run)
    assert sorted(p.name for p in (hand / "wheels").iterdir()) == sorted(names[:3])
    assert (hand / "Dockerfile").read_text(encoding="utf-8").startswith("# The hand-written reference")


def test_step_times_reads_each_steps_seconds_and_where_uvs_went() -> None:
    """BuildKit's plain progress as Docker 20.10 printed it for the cpu-smoke bench (2026-12-04 06:10, lines cut to
    what the parser reads): steps with their seconds in the order they ended, the phases under their step."""
    log = "\n".join((
        "#5 [internal] load build context", "#5 transferring context: 659.54MB 3.3s done", "#5 DONE 3.3s",
        "#7 [system 3/3] RUN --mount=type=bind,source=envgen/sh/create-user.sh,target=/opt/envgen/sh/create-user.sh"
        "     sh /opt/envgen/sh/create-user.sh 1000 envgen", "#7 DONE 0.3s",
        "#9 [runtime 1/7] RUN --mount=type=cache,target=/root/.cache/uv     sh /opt/envgen/sh/uv.sh venv /opt/env",
        "#9 0.233 Resolved 53 packages in 1ms", "#9 3.210 Prepared 53 packages in 2.97s",
        "#9 13.65 Bytecode compiled 11071 files in 8.04s", "#9 DONE 17.0s",
        "#11 [runtime 3/7] COPY envgen/envgen-smoke /usr/local/bin/envgen-smoke", "#11 DONE 0.0s",
        "#16 exporting layers", "#16 exporting layers 7.3s done", "#16 DONE 7.3s"))
    assert _bench().step_times(log) == [
        (3.3, "[internal] load build context"),
        (0.3, "[system 3/3] RUN sh /opt/envgen/sh/create-user.sh 1000 envgen"),
        (17.0, "[runtime 1/7] RUN sh /opt/envgen/sh/uv.sh venv /opt/env"),
        (3.21, "at 3.210s: Prepared 53 packages in 2.97s"),
        (13.65, "at 13.65s: Bytecode compiled 11071 files in 8.04s"),
        (7.3, "exporting layers")]
