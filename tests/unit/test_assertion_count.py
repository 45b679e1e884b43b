"""The assertion counter (tests/assertion_count.py) in a pytest run of its own: an item that asserts nothing fails,
every kind of check counts, a skip stays a skip."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CONFTEST = """
import pytest
from tests.assertion_count import configure

pytest.register_assert_rewrite("helper")


def pytest_configure(config):
    configure(config)
"""

HELPER = """
def check_positive(value):
    assert value > 0
"""

TESTS = '''
import warnings

import pytest

from helper import check_positive


def test_asserts():
    assert 1 + 1 == 2


def test_returns_early():
    if True:
        return
    assert False


def test_raises_only():
    with pytest.raises(ZeroDivisionError):
        1 / 0


def test_raises_callable_form():
    pytest.raises(ZeroDivisionError, lambda: 1 / 0)


def test_warns_only():
    with pytest.warns(UserWarning):
        warnings.warn("seen", UserWarning)


def test_through_a_helper():
    check_positive(3)


def test_nothing_checked():
    sum([1, 2])


def test_skipped():
    pytest.skip("not here")


def test_fails_by_itself():
    assert 1 == 2
'''


def _run(tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], dict[str, int]]:
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "helper.py").write_text(HELPER)
    (tmp_path / "test_sample.py").write_text(TESTS)
    (tmp_path / "pytest.ini").write_text("[pytest]\nenable_assertion_pass_hook = true\n")
    report = tmp_path / "counts.tsv"
    env = {**os.environ, "PYTHONPATH": f"{ROOT}:{tmp_path}", "PYTHONDONTWRITEBYTECODE": "1",
           "ENVGEN_TEST_ASSERTION_REPORT": str(report)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
    counts = {}
    for line in report.read_text().splitlines():
        nodeid, count = line.split("\t")
        counts[nodeid.rpartition("::")[2]] = int(count)
    return done, counts


def test_an_item_that_asserts_nothing_fails_and_every_kind_of_check_counts(tmp_path: Path) -> None:
    done, counts = _run(tmp_path)
    outcomes = {line.split()[1].rpartition("::")[2]: line.split()[0] for line in done.stdout.splitlines()
                if line.split()[:1] and line.split()[0] in ("PASSED", "FAILED", "SKIPPED")
                and "::" in line}
    assert outcomes == {
        "test_asserts": "PASSED", "test_raises_only": "PASSED", "test_raises_callable_form": "PASSED",
        "test_warns_only": "PASSED", "test_through_a_helper": "PASSED",
        "test_returns_early": "FAILED", "test_nothing_checked": "FAILED", "test_fails_by_itself": "FAILED",
    }, done.stdout
    assert "test_returns_early asserted nothing" in done.stdout
    assert "test_fails_by_itself asserted nothing" not in done.stdout  # its own failure, not the counter's
    assert counts["test_asserts"] == 1 and counts["test_through_a_helper"] == 1 and counts["test_raises_only"] == 1
    assert counts["test_nothing_checked"] == 0 and "test_skipped" not in counts
    assert "assertions per item: minimum 0" in done.stdout
