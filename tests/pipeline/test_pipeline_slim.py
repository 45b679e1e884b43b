"""Issue 44 item 2 on the real engine: the same small profile built with the leave-out step (``slim: true``, the
default) and without it (``slim: false``): the probe's import and library checks give the same verdicts, the slim
image holds none of what leave_out.yaml removes (numpy's tests, headers and static library are there in the other),
and it is smaller by what was removed (the figures are printed: run with -s). The bytecode decision of
leave_out.yaml (kept) is measured here: importing numpy as the image's user without its __pycache__ directories
(the interpreter cannot write them where the user does not own /opt/env) against with them."""

from __future__ import annotations

import statistics
from collections.abc import Callable

import pytest

from envgen.docker.run import run_container
from envgen.pipeline.build import BuildOutcome, build
from tests.pipeline.conftest import alias, minimal_profile

PIPS = '"numpy==2.1.3"'
SITE = "/opt/env/lib/python3.11/site-packages"
# what leave_out.yaml removes from numpy's wheel: its tests, its headers, its static math library
LEFT_OUT = (f"find {SITE}/numpy -type d -name tests; find {SITE} -name '*.h' -o -name '*.a' -o -name '*.hpp'; "
            "find /opt/env -path '*/share/doc' -type d")


@pytest.fixture(scope="module")
def pair(write_profile: Callable[[str, str], str], cleanup_tags: list[str]) -> tuple[BuildOutcome, BuildOutcome]:
    slim = build(write_profile("pipe-slim", minimal_profile(PIPS)))
    cleanup_tags += [slim.tag, alias("pipe-slim")]
    full = build(write_profile("pipe-slim-all", minimal_profile(PIPS) + "slim: false\n"))
    cleanup_tags += [full.tag, alias("pipe-slim-all")]
    return slim, full


def _verdicts(outcome: BuildOutcome) -> dict[str, str]:
    assert outcome.smoke is not None and outcome.smoke.passed, outcome.summary()
    return {check.name: check.status for check in outcome.smoke.checks}


def _shell(docker_client: object, image: str, script: str, env: dict[str, str] | None = None,
           user: str | None = None) -> str:
    result = run_container(docker_client, image, ["sh", "-c", script], env=env, user=user)  # type: ignore[arg-type]
    assert result.exit_code == 0, result.output
    return str(result.output)


def test_the_probe_gives_the_same_verdicts_with_and_without_the_leave_out(
        pair: tuple[BuildOutcome, BuildOutcome]) -> None:
    slim, full = pair
    assert slim.image_id != full.image_id
    verdicts = _verdicts(slim)
    assert verdicts == _verdicts(full)
    assert any("import" in name for name in verdicts) and any("librar" in name for name in verdicts), verdicts


def test_the_slim_image_holds_nothing_the_leave_out_removes_and_is_smaller(
        pair: tuple[BuildOutcome, BuildOutcome], docker_client: object) -> None:
    slim, full = pair
    assert _shell(docker_client, slim.image_id, LEFT_OUT).strip() == ""
    there = _shell(docker_client, full.image_id, LEFT_OUT).split()
    assert f"{SITE}/numpy/_core/tests" in there and any(p.endswith(".h") for p in there), there
    assert any(p.endswith(".a") for p in there), there
    sizes = {}
    for name, outcome in (("slim", slim), ("full", full)):
        image = docker_client.images.get(outcome.image_id)  # type: ignore[attr-defined]
        layers = [(row["Size"], (row.get("CreatedBy") or "")[:70]) for row in image.history() if row["Size"]]
        sizes[name] = image.attrs["Size"]
        print(f"\n{name}: {image.attrs['Size'] / 1e6:.1f} MB; layers (newest first):")
        for size, step in layers:
            print(f"  {size / 1e6:8.1f} MB  {step}")
    saved = (sizes["full"] - sizes["slim"]) / 1e6
    print(f"left out: {saved:.1f} MB")
    assert saved > 5, sizes  # numpy 2.1.3's tests alone are ~10 MB unpacked


def test_bytecode_caches_are_kept_because_importing_without_them_is_slower(
        pair: tuple[BuildOutcome, BuildOutcome], docker_client: object) -> None:
    slim, _ = pair
    probe = ("for i in 1 2 3 4 5; do s=$(date +%s%N); python -c 'import numpy'; e=$(date +%s%N); "
             "echo $(( (e - s) / 1000000 )); done")
    with_caches = [int(v) for v in _shell(docker_client, slim.image_id, probe).split()]
    # root removes the caches; PYTHONDONTWRITEBYTECODE stands for the user who cannot write them again
    without = [int(v) for v in _shell(docker_client, slim.image_id, f"find /opt/env -name __pycache__ -prune -exec "
                                      f"rm -rf {{}} +; {probe}", env={"PYTHONDONTWRITEBYTECODE": "1"},
                                      user="0:0").split()]
    print(f"\nimport numpy, ms (5 runs): with __pycache__ {with_caches}, without {without}")
    assert statistics.median(without) > 1.2 * statistics.median(with_caches), (with_caches, without)


def test_a_locked_build_leaves_out_in_the_installing_uv_step_with_the_same_verdicts(
        pair: tuple[BuildOutcome, BuildOutcome], write_profile: Callable[[str, str], str],
        cleanup_tags: list[str], docker_client: object) -> None:
    from envgen.lock.lock import lock

    write_profile("pipe-slim-lock", minimal_profile(PIPS))
    lock("pipe-slim-lock")
    lines: list[str] = []
    outcome = build("pipe-slim-lock", echo=lines.append)
    cleanup_tags += [outcome.tag, alias("pipe-slim-lock")]
    assert _verdicts(outcome) == _verdicts(pair[0])
    assert _shell(docker_client, outcome.image_id, LEFT_OUT).strip() == ""
    assert outcome.log_path is not None
    log = outcome.log_path.read_text(encoding="utf-8")
    if outcome.builder != "classic":  # uv installs in the runtime stage: the leave-out runs in the same RUN
        assert "uv.sh pip install" in log and "left out of /opt/env what nothing loads at runtime" in log
