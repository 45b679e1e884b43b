"""The whole pip set resolved and judged on its artifacts by a plain `envgen check` (envgen.lock.judged), against
the real package index (PyPI; CI has it): for each class of tests/fixtures/resolved/cases.yaml (a Requires-Python
that excludes the image's Python, no wheel for the image's CPython with an sdist that needs a compiler, two ordinary
packages' Requires-Dist ranges that exclude each other, a framework's ceiling against a package's floor) the broken
side is an error with its code and the working side ok, on at least four packages per class, none a framework.
Offline, a kept answer serves, and without one an info names what was not resolved."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from envgen.cli.check import fast
from envgen.kb import load_kb
from tests.resolved_cases import cases, profile

CASES = cases()


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for the module: the index's pages and each release's metadata are read once."""
    return tmp_path_factory.mktemp("resolved-cache")


def check(argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], cache: Path,
          offline: bool = False) -> tuple[int, list[dict[str, Any]]]:
    monkeypatch.setenv("ENVGEN_CACHE_DIR", str(cache))
    monkeypatch.delenv("ENVGEN_OFFLINE", raising=False)  # the session sets it; these tests resolve
    code = fast([*argv, "--json", *(["--offline"] if offline else [])])
    assert code is not None
    return code, json.loads(capsys.readouterr().out)


def test_each_class_has_four_packages_none_a_framework() -> None:
    frameworks = load_kb().framework_names.pip
    by_class: dict[str, set[str]] = {}
    for case_id, case in CASES:
        package = case["broken"][-1].split("==")[0]
        assert package not in frameworks, case_id
        by_class.setdefault(case_id.split("-")[0], set()).add(package)
        assert case["source"], case_id
    assert set(by_class) == {"requires_python", "no_wheel", "requires_dist", "framework_ceiling"}
    assert all(len(packages) >= 4 for packages in by_class.values()), by_class


@pytest.mark.parametrize(("case_id", "case"), CASES, ids=[c[0] for c in CASES])
def test_broken_side_is_an_error_working_side_ok(case_id: str, case: dict[str, Any], tmp_path: Path, cache: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, findings = check([str(profile(case, "broken", tmp_path))], monkeypatch, capsys, cache)
    errors = [f for f in findings if f["severity"] == "error"]
    assert code == 1 and case["code"] in {f["code"] for f in errors}, (case_id, errors)
    named = next(f for f in errors if f["code"] == case["code"])
    package = case["broken"][-1].split("==")[0]
    assert package in named["message"] and "pythonhosted.org" in named["source"] + named["message"], named
    assert any(f["code"] == "resolve-time" for f in findings)  # the cold check states its time
    code, findings = check([str(profile(case, "working", tmp_path))], monkeypatch, capsys, cache)
    assert code == 0, [f for f in findings if f["severity"] == "error"]


def test_a_kept_answer_serves_offline(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    case = next(c for i, c in CASES if i.startswith("requires_dist"))
    path = str(profile(case, "broken", tmp_path))
    online = check([path], monkeypatch, capsys, cache)
    assert check([path], monkeypatch, capsys, cache, offline=True) == online
    assert online[0] == 1


def test_offline_without_a_kept_answer_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    case = next(c for i, c in CASES if i.startswith("requires_dist"))
    code, findings = check([str(profile(case, "broken", tmp_path))], monkeypatch, capsys, tmp_path / "empty",
                           offline=True)
    said = [f for f in findings if f["code"] == "resolve-offline"]
    assert code == 0 and len(said) == 1 and "flask==1.1.4" in said[0]["message"], findings


def test_an_index_that_does_not_answer_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """A mirror that refuses connections (a closed port on this host): the set is not resolved, and the info says
    why; that answer is kept ten minutes, not a day (the next checks do not wait on the index again)."""
    config = tmp_path / "config.yaml"
    config.write_text(f"state_dir: {tmp_path / 'state'}\nmirrors:\n  pip_index_url: http://127.0.0.1:9/simple\n")
    monkeypatch.setenv("ENVGEN_CONFIG", str(config))
    case = next(c for i, c in CASES if i.startswith("requires_dist"))
    code, findings = check([str(profile(case, "broken", tmp_path))], monkeypatch, capsys, tmp_path / "c")
    said = [f for f in findings if f["code"] == "resolve-offline"]
    assert len(said) == 1 and "no index answered" in said[0]["message"], findings
    (kept,) = (tmp_path / "c").glob("resolved-*.json")
    assert json.loads(kept.read_text())["until"] < time.time() + 3600


@pytest.mark.parametrize(("names", "requires", "needs"), [
    (["p-1/src/lib.rs", "p-1/Cargo.toml"], ["maturin>=1,<2"], ["Rust (rustc, cargo)"]),
    (["p-1/p/_impl.c", "p-1/tests/data/kernel.cu"], ["setuptools"], ["a C/C++ compiler (gcc, g++)"]),  # a test's .cu
    (["p-1/p/solver.f90", "p-1/p/glue.c"], ["meson-python"], ["a Fortran compiler (gfortran)",
                                                            "a C/C++ compiler (gcc, g++)"]),
    (["p-1/p/__init__.py", "p-1/pyproject.toml"], ["hatchling"], []),
])
def test_what_an_sdist_needs_is_read_from_its_files(names: list[str], requires: list[str], needs: list[str]) -> None:
    """The table (envgen/lock/build_needs.json) applied to an sdist's member names and build requirements; the
    sdists of the cases above are read whole from the index (scipy 1.13.1's Fortran, pydantic-core's Cargo.toml)."""
    from envgen.lock.sdist_needs import _match

    assert [row["need"] for row in _match(names, requires)] == needs


def test_a_warm_check_reads_the_kept_answer_alone(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """With the answer kept, a check asks nothing of the index and loads none of the resolving code: no uv, no
    packaging, no envgen.pypi (what keeps a warm check under 0.3 s: bench/bench_check_resolved.py)."""
    import os
    import subprocess
    import sys

    case = next(c for i, c in CASES if i.startswith("requires_dist"))
    path = str(profile(case, "broken", tmp_path))
    assert check([path], monkeypatch, capsys, cache)[0] == 1  # kept now
    env = {k: v for k, v in os.environ.items() if k != "ENVGEN_OFFLINE"}
    code = ("import sys; sys.argv = ['envgen', 'check', sys.argv[1]]\nfrom envgen.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('LOADED', sorted(m for m in sys.modules if m.split('.')[0] == 'packaging' or m in "
            "('envgen.pypi', 'envgen.lock.judge_run', 'envgen.lock.meet', 'subprocess', 'urllib.request')))")
    done = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.splitlines()[-1] == "LOADED []", done.stdout[-500:]
    assert "[pkg-requires-clash]" in done.stdout
