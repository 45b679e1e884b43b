"""The probe's import check over 175 real distributions from PyPI INSIDE an envgen image: a profile of this test's
own whose packages.pip are tests/fixtures/pypi/probe-imports/requirements.txt (the most used ML and data
distributions: scikit-learn, scipy, pandas, black, setuptools, transformers, jax, pyarrow, opencv, ... and what they
pull in; CPU wheels only, no torch: this host reaches PyPI alone, not PyTorch's index), built by `envgen build` on
the local Debian 12 base, then asked twice per module in the built image: the probe's verdict (`envgen smoke IMAGE
--json`, the imports check's figures) and a plain `python -c 'import M'` of every top-level module the probe names
(tests/pipeline/plain_imports.py). They must agree on every module; the figure is printed (run with -s).

The wheels are downloaded once (pip download, for CPython 3.11 on glibc 2.36) into pytest's cache
(.pytest_cache/d/probe-imports-image/wheels; antlr4-python3-runtime 4.9.3, which PyPI has only as an sdist, is built
into a wheel there) and the build installs offline from that wheelhouse (`build(..., wheelhouse=, offline=True)`),
so a warm run downloads nothing."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from typer.testing import CliRunner

from envgen.cli import app
from envgen.lock.wheels import manylinux_platforms, target_options
from tests.pipeline.conftest import alias, minimal_profile, plain_imports

if TYPE_CHECKING:
    from docker import DockerClient

LISTS = Path(__file__).resolve().parents[1] / "fixtures" / "pypi" / "probe-imports"
SDIST_ONLY = ("antlr4-python3-runtime",)  # no wheel on PyPI: built here once
pytestmark = pytest.mark.slow


def _pins() -> list[str]:
    lines = (LISTS / "requirements.txt").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def _pip(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.fixture(scope="module")
def wheelhouse(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every pinned wheel for CPython 3.11 on Debian 12 (glibc 2.36), downloaded once and kept in pytest's cache."""
    kept = getattr(pytestconfig, "cache", None)  # None under -p no:cacheprovider: the wheels are fetched again
    house = (Path(kept.mkdir("probe-imports-image")) if kept is not None else tmp_path_factory.mktemp("pii")) / "wheels"
    pins = _pins()
    done = house / ".complete"
    if done.is_file() and done.read_text(encoding="utf-8") == "\n".join(pins):
        return house
    house.mkdir(parents=True, exist_ok=True)
    wheels = [p for p in pins if p.split("==")[0] not in SDIST_ONLY]
    listed = house.parent / "wheels.txt"
    listed.write_text("\n".join(wheels) + "\n", encoding="utf-8")
    _pip("download", "--no-deps", "--dest", str(house),
         *target_options("3.11", manylinux_platforms("2.36"), [], []), "-r", str(listed))
    _pip("wheel", "--no-deps", "--wheel-dir", str(house), *[p for p in pins if p.split("==")[0] in SDIST_ONLY])
    done.write_text("\n".join(pins), encoding="utf-8")
    return house


def _probe_verdicts(image: str) -> tuple[dict[str, str], dict[str, Any]]:
    smoked = CliRunner().invoke(app, ["smoke", image, "--json"])
    report = json.loads(smoked.output[smoked.output.index("{"):])
    entry = next(c for c in report["checks"] if c["name"] == "imports")
    modules = entry["figures"]["modules"]
    verdicts = {m: "ok" for m in modules["ok"]}
    verdicts.update({m: "failed" for m in modules["failed"]})
    verdicts.update({m: "needs_extra" for m in modules["needs_extra"]})
    return verdicts, entry


def test_the_import_check_in_an_image_agrees_with_plain_imports(
        docker_client: DockerClient, write_profile: Callable[[str, str], str], cleanup_tags: list[str],
        wheelhouse: Path) -> None:
    from envgen.pipeline.build import build

    pins = _pins()
    name = write_profile("probe-imports-many", minimal_profile(", ".join(f'"{p}"' for p in pins)))
    started = time.monotonic()
    outcome = build(name, smoke=False, wheelhouse=wheelhouse, offline=True)
    built_s = time.monotonic() - started
    cleanup_tags += [outcome.tag, alias(name)]
    verdicts, entry = _probe_verdicts(outcome.tag)
    probed_s = time.monotonic() - started - built_s
    names = [re.split(r"[\[<>=!~;\s]", p, maxsplit=1)[0] for p in pins]
    plain = plain_imports(docker_client, outcome.tag, names)
    # namespace packages the probe names (google, mpl_toolkits: folders of packages, no __init__.py), imported alike
    others = sorted(set(verdicts) - set(plain))
    plain.update(plain_imports(docker_client, outcome.tag, ["--modules", *others]) if others else {})
    plain_s = time.monotonic() - started - built_s - probed_s

    def agrees(module: str) -> bool:
        error = plain[module]
        if verdicts[module] == "needs_extra":
            return error is not None and error.startswith("extra: ")
        return (verdicts[module] == "ok") == (error is None)

    agree = [m for m in verdicts if agrees(m)]
    print(f"\nimport check in the image vs plain imports: agree on {len(agree)} of {len(verdicts)} top-level modules "
          f"of {len(pins)} distributions (build {built_s:.0f} s, probe {probed_s:.0f} s, plain imports "
          f"{plain_s:.0f} s; the check itself {entry['duration_s']} s, {entry['figures']['retried']} retried)")
    wrong = {m: (verdicts[m], plain.get(m)) for m in verdicts if m not in agree}
    assert not wrong, wrong
    assert set(plain) == set(verdicts), set(plain) - set(verdicts)  # the probe names every package plainly named
    assert len(pins) >= 150 and len(verdicts) >= 150
    # a rejection only where the import really fails, named with its own error (here, 2026-12-03: keras 3 without
    # tensorflow, its backend; lightgbm's libgomp.so.1, which debian:bookworm-slim lacks)
    failing = {m for m, error in plain.items() if error is not None and not error.startswith("extra: ")}
    assert {m for m, v in verdicts.items() if v == "failed"} == failing
    assert (entry["status"] == "fail") == bool(failing)
    for module in failing:
        assert f"({module}): {plain[module]}" in entry["message"], (module, plain[module], entry["message"])
    assert {"sklearn", "scipy", "pandas", "black", "setuptools", "transformers", "jax"} <= set(verdicts)
    assert not {"scikit_learn", "dist", "build", "docs", "debian"} & set(verdicts)
    assert verdicts["blackd"] == "needs_extra"
