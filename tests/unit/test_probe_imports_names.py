"""The import check's names and budget (probe_imports_names.py, probe_imports_run.py; issue #38): the names a
distribution installs come from its RECORD (lines copied from the real wheels' RECORD files, scikit-learn 1.9.1,
botorch 0.18.1, protobuf), never from a top_level.txt name nothing backs (Debian 12's python3-setuptools 66.1.1);
100 failing modules cost two children, not 100; a CPU profile is never told a cause about CUDA, and an import
between two releases made for different majors names both (tensorflow-addons 0.23.0 under Keras 3.15.1, recorded
here: tests/fixtures/pypi/probe-imports/tfa-keras3-import.txt). The real 178-distribution run:
tests/package/test_probe_imports_pypi.py."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from test_probe_helpers import probe_module

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "pypi" / "probe-imports" / "tfa-keras3-import.txt"
# first path of RECORD lines, copied from the wheels installed by tests/package/test_probe_imports_pypi.py
SKLEARN = ["scikit_learn-1.9.1.dist-info/METADATA", "scikit_learn.libs/libgomp-e985bcbb.so.1.0.0",
           "sklearn/__init__.py", "sklearn/_isotonic.cpython-311-x86_64-linux-gnu.so", "sklearn/_isotonic.pyx",
           "sklearn/__pycache__/__init__.cpython-311.pyc"]
BOTORCH = ["botorch/__init__.py", "botorch-0.18.1.dist-info/top_level.txt", "build/lib/botorch/__init__.py",
           "build/lib/botorch_community/__init__.py", "botorch_community/__init__.py",
           "notebooks_community/furbo/furbo.ipynb", "scripts/check_pre_commit_reqs.py/"]
PROTOBUF = ["google/_upb/_message.abi3.so", "google/protobuf/__init__.py", "protobuf-7.36.2.dist-info/RECORD",
            "../../../bin/protoc-gen,,", "six.py", "_cffi_backend.cpython-311-x86_64-linux-gnu.so",
            "distutils-precedence.pth"]


def _write(site: Path, name: str, version: str, files: dict[str, str], requires: tuple[str, ...] = ()) -> Path:
    meta = site / f"{name.replace('-', '_')}-{version}.dist-info"
    meta.mkdir(parents=True)
    for path, text in files.items():
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_text(text)
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    (meta / "METADATA").write_text("\n".join(lines + [f"Requires-Dist: {r}" for r in requires]) + "\n\nbody\n")
    (meta / "RECORD").write_text("".join(f"{p},,\n" for p in files) + f"{meta.name}/RECORD,,\n")
    return meta


def test_names_come_from_record() -> None:
    names = probe_module("library.imports_names")
    assert names.modules_of_paths(SKLEARN) == {"sklearn"}
    assert names.modules_of_paths(BOTORCH) == {"botorch", "botorch_community"}
    assert names.modules_of_paths(PROTOBUF) == {"google", "six"}


def test_top_level_txt_only_where_it_is_backed(tmp_path: Path) -> None:
    """Debian 12's python3-setuptools 66.1.1: an .egg-info with no RECORD, whose top_level.txt (recorded from
    /usr/lib/python3/dist-packages/setuptools-66.1.1.egg-info) names `debian`, which the package never installs."""
    names = probe_module("library.imports_names")
    meta = tmp_path / "setuptools-66.1.1.egg-info"
    meta.mkdir()
    (meta / "top_level.txt").write_text("_distutils_hack\ndebian\npkg_resources\nsetuptools\n")
    for package in ("_distutils_hack", "pkg_resources", "setuptools"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    assert names.top_level_modules(str(meta)) == ["pkg_resources", "setuptools"]


def test_the_extra_a_module_needs(tmp_path: Path) -> None:
    names = probe_module("library.imports_names")
    meta = _write(tmp_path, "black", "26.10.1", {}, ("click>=8.0.0", "aiohttp>=3.10; extra == 'd'",
                                                      "colorama>=0.4.3; extra == \"colorama\""))
    extras = names.extra_only_requirements(str(meta))
    assert extras == {"aiohttp": "d", "colorama": "colorama"}
    # black 26.10.1's blackd re-raises the ModuleNotFoundError with its own advice (recorded in the pypi test)
    output = ("ModuleNotFoundError: No module named 'aiohttp'\n\nDuring handling ...\nImportError: aiohttp dependency "
              "is not installed: No module named 'aiohttp'. Please re-install black with the '[d]' extra")
    assert names.needs_extra(output, extras, {"black": ""}) == ("d", "aiohttp")
    assert names.needs_extra(output, extras, {"aiohttp": ""}) is None  # installed: a real break
    assert names.needs_extra("ModuleNotFoundError: No module named 'click'", extras, {}) is None


def test_budget_holds_when_100_modules_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capfd: pytest.CaptureFixture[str]) -> None:
    """100 failing distributions and one that kills its interpreter: one child, one retry of the failing ones
    apart (continued past the crash), every failing module named with its error, within the budget."""
    common, imports = probe_module("core.common"), probe_module("library.imports")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    for index in range(100):
        _write(tmp_path, f"bad{index}", "1.0", {f"bad{index}/__init__.py": f"raise ImportError('broken {index}')\n"})
    _write(tmp_path, "crash", "1.0", {"crash/__init__.py": "import os\nos._exit(3)\n"})
    _write(tmp_path, "good", "1.0", {"good/__init__.py": "import time\ntime.sleep(11)\n"})
    rows = [{"name": n, "kind": "pip", "marker": None} for n in ["good", "crash"] + [f"bad{i}" for i in range(100)]]
    ctx = common.Context({"gpu": {"required": False}, "expected": {"distributions": rows}, "smoke": {"timeout_s": 120}})
    began = time.time()
    entry = common.run_check(ctx, "imports", imports.TIER, imports.check_imports)
    assert time.time() - began < 120
    assert entry["status"] == common.FAIL and entry["figures"]["imported"] == ["good"]
    assert entry["figures"]["retried"] == 101 and len(entry["figures"]["failed"]) == 101
    assert "bad57 (bad57): ImportError: broken 57" in entry["message"]
    assert "crash (crash): the child interpreter died (exit code 3)" in entry["message"]
    assert "envgen probe: imports: 0 of 102 modules done" in capfd.readouterr().err  # progress after 10 s


def test_a_cpu_profile_is_never_told_about_cuda() -> None:
    """The recorded import of tensorflow-addons 0.23.0 under Keras 3 logs TensorFlow's "Could not find cuda
    drivers" line: a GPU profile may be told silent-cpu for it, a CPU profile never."""
    common = probe_module("core.common")
    text = "\n".join(line for line in RECORDED.read_text().splitlines() if not line.startswith("# "))
    gpu = common.Context({"gpu": {"required": True}})
    cpu = common.Context({"gpu": {"required": False}})
    assert common.diagnose(text, gpu.diagnoses)["id"] == "silent-cpu"
    assert common.diagnose(text, cpu.diagnoses) is None
    assert all(not entry.get("gpu_only") for entry in cpu.diagnoses)


def test_an_import_across_major_releases_names_both(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """tensorflow-addons' own import of keras.src.engine, replayed from the recorded output, against a keras that
    lacks it: the check names both with their versions, and the cause is about them, not CUDA."""
    common, imports = probe_module("core.common"), probe_module("library.imports")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    text = "\n".join(line for line in RECORDED.read_text().splitlines() if not line.startswith("# "))
    log = text.split("Traceback (most recent call last):")[0]
    _write(tmp_path, "keras", "3.15.1", {"keras/__init__.py": "", "keras/src/__init__.py": ""})
    _write(tmp_path, "tensorflow-addons", "0.23.0", {"tensorflow_addons/__init__.py": (
        f"import sys\nsys.stderr.write({log!r})\nfrom keras.src.engine import keras_tensor\n")})
    rows = [{"name": "tensorflow-addons", "kind": "pip", "marker": None}]
    ctx = common.Context({"gpu": {"required": False}, "expected": {"distributions": rows}})
    entry = common.run_check(ctx, "imports", imports.TIER, imports.check_imports)
    assert entry["status"] == common.FAIL and entry["diagnosis"]["id"] == "import-across-releases"
    cause = entry["diagnosis"]["cause"]
    assert cause.startswith("tensorflow-addons 0.23.0 imports keras.src.engine, a part of keras that keras 3.15.1")
    assert "CUDA" not in cause + entry["diagnosis"]["fix"]
