"""Ranges, unpinned names and markers in packages.pip, resolved for real: `envgen lock` (uv against PyPI, for the
image's platform, no engine) pins each floating line inside its range and leaves out a line whose marker does not
hold for the image's Python; the lock's recorded inputs read back (a marker holds spaces), so check finds it current
and reports what the lock pins; `check --resolve` says what each floating line resolves to today. Network: PyPI
(reachable here and in CI, as in test_resolve_witness.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from envgen.check import check_profile
from envgen.kb import KnowledgeBase
from envgen.kb.specifiers import contains
from envgen.lock.lock import lock
from envgen.lock.witness import witness
from envgen.plan.image import plan_image
from envgen.plan.lockfile import parse_lock
from envgen.profile import load_profile

PROFILE = """\
name: ranges
base: debian:bookworm-slim
local_base: true
python: "3.11"
gpu: {required: false}
packages:
  pip: ["idna>=3.4,<3.7", "six", 'tomli==2.0.1; python_version < "3.11"', "colorama!=0.4.5"]
"""


@pytest.fixture(scope="module")
def locked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("ranges") / "ranges.yaml"
    path.write_text(textwrap.dedent(PROFILE), encoding="utf-8")
    lock(str(path), engine=False)
    return path


def test_the_lock_pins_each_floating_line_inside_its_range(locked: Path) -> None:
    parsed = parse_lock((locked.parent / "ranges.lock.txt").read_text(encoding="utf-8"))
    pins = {e.name: e.version for e in parsed.extras}
    assert contains(">=3.4,<3.7", pins["idna"]) and pins["idna"] == "3.6"  # the newest inside the range
    assert "six" in pins and pins["colorama"] != "0.4.5"
    assert "tomli" not in pins  # python_version < "3.11" does not hold for the image's 3.11
    assert parsed.inputs.extras == ("idna>=3.4,<3.7", "six", 'tomli==2.0.1; python_version < "3.11"',
                                    "colorama!=0.4.5")


def test_check_reads_the_lock_as_current_and_names_what_it_pins(locked: Path, kb: KnowledgeBase) -> None:
    findings = check_profile(load_profile(str(locked)), kb)
    assert "lock-stale" not in {f.code for f in findings}
    floating = [f for f in findings if f.code == "pip-floating"]
    assert [f.severity for f in floating] == ["info"] * 3
    assert "the lock pins idna==3.6 (ranges.lock.txt)" in floating[0].message


def test_resolve_says_what_each_floating_line_resolves_to_today(locked: Path, kb: KnowledgeBase) -> None:
    found = [f for f in witness(load_profile(str(locked)), kb) if f.code == "resolve-floating"]
    assert len(found) == 3
    assert found[0].message.startswith("packages.pip line 'idna>=3.4,<3.7' resolves to idna==3.6 today (CPython 3.11")


def test_the_render_installs_the_locked_versions(locked: Path, kb: KnowledgeBase) -> None:
    from envgen.render.core import render_in_memory

    files = render_in_memory(plan_image(load_profile(str(locked)), kb)).files
    extra = files["requirements.extra.txt"].decode()
    pins = [line for line in extra.splitlines() if line and not line.startswith("#")]
    assert "idna==3.6" in {line.split(" ")[0] for line in pins} and not any(p.startswith("tomli") for p in pins)
    assert all("--hash=sha256:" in line for line in pins)
