"""The probe's import check over 178 real distributions from PyPI (tests/fixtures/pypi/probe-imports: scikit-learn,
scipy, pandas, black, setuptools, transformers, jax, botorch, ... and what they pull in) installed into ONE venv
by uv: for every top-level module the check names, its verdict must agree with a plain `python -c 'import M'` in the
same venv. The wheels are downloaded once into pytest's cache (.pytest_cache/d/probe-imports-pypi/uv); a warm run
installs from there (~30 s) and imports (~1-2 min on 2 cores). The agreement figure is printed (run with -s)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from envgen.paths import probe_dir

LISTS = Path(__file__).resolve().parents[1] / "fixtures" / "pypi" / "probe-imports"
# run in the venv's Python: the check over every distribution installed in the venv's site-packages
_DRIVER = """
import json, os, sys, sysconfig
sys.path.insert(0, sys.argv[1])
from envgen_checks.core import common as probe_common
from envgen_checks.library import imports as probe_imports
site = sysconfig.get_paths()["purelib"]
names = sorted(probe_imports.installed_metadata([site]))
rows = [{"name": n, "kind": "pip", "marker": None} for n in names]
ctx = probe_common.Context({"expected": {"distributions": rows}, "smoke": {"timeout_s": 400}})
entry = probe_common.run_check(ctx, "imports", probe_imports.TIER, probe_imports.check_imports)
print(json.dumps({"names": names, "entry": entry}))
"""


def _uv(*args: str, cache: Path) -> None:
    env = {**os.environ, "UV_CACHE_DIR": str(cache), "UV_NO_CONFIG": "1"}
    subprocess.run([sys.executable, "-m", "uv", *args], check=True, env=env)


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Path:
    work = tmp_path_factory.mktemp("pypi")
    kept = getattr(pytestconfig, "cache", None)  # None under -p no:cacheprovider: the wheels are fetched again
    cache = (Path(kept.mkdir("probe-imports-pypi")) if kept is not None else work) / "uv"
    env = work / "venv"
    _uv("venv", "-q", "--python", sys.executable, str(env), cache=cache)
    python = str(env / "bin" / "python")
    _uv("pip", "install", "-q", "--python", python, "-r", str(LISTS / "requirements.txt"), cache=cache)
    _uv("pip", "install", "-q", "--no-deps", "--python", python, "-r", str(LISTS / "no-deps.txt"), cache=cache)
    return env


def _plain(python: str, module: str) -> tuple[bool, str]:
    done = subprocess.run([python, "-c", f"import {module}"], capture_output=True, text=True, timeout=300)
    lines = done.stderr.strip().splitlines()
    return done.returncode == 0, lines[-1] if lines else ""


def _probe(venv: Path) -> dict[str, Any]:
    done = subprocess.run([str(venv / "bin" / "python"), "-c", _DRIVER, str(probe_dir())], capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "stderr": done.stderr}


@pytest.fixture(scope="module")
def probed(venv: Path) -> dict[str, Any]:
    return _probe(venv)


def test_the_import_check_agrees_with_plain_imports(venv: Path, probed: dict[str, Any]) -> None:
    entry, names = probed["entry"], probed["names"]
    modules = entry["figures"]["modules"]
    verdicts = {m: "ok" for m in modules["ok"]}
    verdicts.update({m: "failed" for m in modules["failed"]})
    verdicts.update({m: "needs_extra" for m in modules["needs_extra"]})
    python = str(venv / "bin" / "python")
    with ThreadPoolExecutor(max_workers=4) as pool:
        plain = dict(zip(verdicts, pool.map(lambda m: _plain(python, m), verdicts), strict=True))
    agree = [m for m, v in verdicts.items() if (v == "ok") == plain[m][0]
             and (v != "needs_extra" or "No module named" in plain[m][1])]
    print(f"\nimport check vs plain imports: agree on {len(agree)} of {len(verdicts)} top-level modules of "
          f"{len(names)} distributions ({entry['figures']['retried']} retried apart, {entry['duration_s']} s)")
    wrong = {m: (verdicts[m], plain[m]) for m in verdicts if m not in agree}
    assert not wrong, wrong
    assert len(names) >= 150 and len(verdicts) >= 150


def test_names_come_from_what_the_wheels_install(probed: dict[str, Any]) -> None:
    """The issue's false failures: scikit-learn's vendored-library folder, botorch's top_level.txt, black's
    blackd; the failing modules (botorch and co., installed without torch) named each with its error; progress
    every 10 s."""
    entry = probed["entry"]
    modules = entry["figures"]["modules"]
    named = set(modules["ok"]) | set(modules["failed"]) | set(modules["needs_extra"])
    assert {"sklearn", "scipy", "pandas", "black", "setuptools", "transformers", "jax"} <= set(modules["ok"])
    assert "blackd" in modules["needs_extra"]  # black's `d` extra: nothing here brings aiohttp
    assert not {"scikit_learn", "dist", "build", "docs", "debian"} & named
    assert {"botorch", "gpytorch", "linear_operator"} <= set(modules["failed"])
    assert entry["status"] == "fail"
    assert "botorch (botorch): ModuleNotFoundError: No module named 'torch'" in entry["message"]
    if entry["duration_s"] > 12:
        assert "envgen probe: imports:" in probed["stderr"]  # progress every 10 s


def test_a_module_that_needs_an_extra_not_installed_is_noted(tmp_path: Path,
                                                             pytestconfig: pytest.Config) -> None:
    """black without its `d` extra (no aiohttp): `blackd` is noted, not failed; the same wheel as the big venv's."""
    kept = getattr(pytestconfig, "cache", None)
    cache = (Path(kept.mkdir("probe-imports-pypi")) if kept is not None else tmp_path) / "uv"
    env = tmp_path / "venv"
    _uv("venv", "-q", "--python", sys.executable, str(env), cache=cache)
    pins = [line for line in (LISTS / "requirements.txt").read_text().splitlines()
            if line.split("==")[0] in ("black", "click", "mypy-extensions", "packaging", "pathspec", "platformdirs",
                                       "pytokens")]
    _uv("pip", "install", "-q", "--python", str(env / "bin" / "python"), *pins, cache=cache)
    entry = _probe(env)["entry"]
    assert entry["status"] == "pass", entry["message"]
    assert entry["figures"]["modules"]["needs_extra"] == ["blackd"]
    assert any(n.startswith("blackd of black needs black[d] (no aiohttp") for n in entry["figures"]["needs_extra"])
    ok, last = _plain(str(env / "bin" / "python"), "blackd")
    assert not ok and "No module named 'aiohttp'" in last
