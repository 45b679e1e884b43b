"""The probe's import check (probe_imports.py): every distribution of the profile imported in a child
interpreter, failures and import-time warnings recognised from recorded real texts. Real child processes
import real (tiny) packages written into a temporary site directory; their error output is recorded text
(tests/fixtures/errors/)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_probe_helpers import probe_module

ERRORS = Path(__file__).resolve().parents[1] / "fixtures" / "errors"


def _recorded(name: str) -> str:
    return "\n".join(line for line in (ERRORS / name).read_text().splitlines() if not line.startswith("# "))


def _dist(site: Path, name: str, module: str, code: str, *, top_level: bool = True) -> None:
    (site / module).mkdir()
    (site / module / "__init__.py").write_text(code)
    meta = site / f"{name.replace('-', '_')}-1.0.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    if top_level:
        (meta / "top_level.txt").write_text(module + "\n")
    else:
        (meta / "RECORD").write_text(f"{module}/__init__.py,,\n{meta.name}/METADATA,,\n../../bin/tool,,\n")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    return tmp_path


def _ctx(pip: list[str], frameworks: dict[str, str] | None = None) -> object:
    common = probe_module("probe_common")
    expect = {"name": "p", "gpu": {"required": False}, "frameworks": frameworks or {}, "packages": {"pip": pip}}
    return common.Context(expect)


def test_distributions_of_a_profile() -> None:
    imports = probe_module("probe_imports")
    expect = {"frameworks": {"tensorflow": "2.15.1", "tensorflow_package": "tensorflow[and-cuda]",
                             "pytorch": "2.1.2+cu121"},
              "packages": {"pip": ["opencv-python-headless==4.9.0.80", "PyYAML==6.0.1"], "conda": ["numpy=1.26.4"]}}
    assert imports.profile_distributions(expect) == [
        ("tensorflow", True), ("torch", True), ("opencv-python-headless", False), ("pyyaml", False), ("numpy", None)]


def test_modules_from_top_level_or_record(site: Path) -> None:
    imports = probe_module("probe_imports")
    _dist(site, "Good-Pkg", "goodmod", "")
    _dist(site, "other", "othermod", "", top_level=False)
    found = imports.installed_metadata([str(site)])
    assert imports.top_level_modules(found["good-pkg"]) == ["goodmod"]
    assert imports.top_level_modules(found["other"]) == ["othermod"]


def test_clean_imports_pass(site: Path) -> None:
    imports = probe_module("probe_imports")
    _dist(site, "goodpkg", "goodmod", "VALUE = 1\n")
    ctx = _ctx(["goodpkg==1.0"])
    message, figures = imports.check_imports(ctx)
    assert figures["imported"] == ["goodpkg"] and "1 distributions import" in message


def test_a_failing_import_is_diagnosed_from_the_recorded_text(site: Path) -> None:
    common, imports = probe_module("probe_common"), probe_module("probe_imports")
    text = _recorded("markupsafe-soft-unicode--1.txt")
    _dist(site, "oldjinja", "oldjinja", f"raise ImportError({text.splitlines()[-1].strip()[13:]!r})\n")
    _dist(site, "goodpkg", "goodmod", "")
    ctx = _ctx(["oldjinja==1.0", "goodpkg==1.0", "absent-pkg==2.0"])
    entry = common.run_check(ctx, "imports", imports.TIER, imports.check_imports)
    assert entry["status"] == common.FAIL
    assert entry["diagnosis"]["id"] == "markupsafe-soft-unicode"
    assert entry["figures"]["failed"] == ["oldjinja"] and entry["figures"]["imported"] == ["goodpkg"]
    assert entry["figures"]["missing"] == ["absent-pkg"]
    assert "absent-pkg is named by the profile but not installed" in entry["message"]


def test_a_warning_at_import_that_means_a_break_fails(site: Path) -> None:
    """NumPy 2 under a wheel built for 1.x: the import returns, the module only printed NumPy's message."""
    common, imports = probe_module("probe_common"), probe_module("probe_imports")
    text = _recorded("numpy-abi--1.txt").split("\n\nTraceback")[0]
    _dist(site, "oldcv", "oldcv", f"import sys\nsys.stderr.write({text!r})\n")
    entry = common.run_check(_ctx(["oldcv==1.0"]), "imports", imports.TIER, imports.check_imports)
    assert entry["status"] == common.FAIL and entry["diagnosis"]["id"] == "numpy-abi"
    assert entry["figures"]["diagnoses"] == {"oldcv": "numpy-abi"}


def test_frameworks_missing_are_left_to_their_own_checks(site: Path) -> None:
    common, imports = probe_module("probe_common"), probe_module("probe_imports")
    entry = common.run_check(_ctx([], {"pytorch": "2.1.2"}), "imports", imports.TIER, imports.check_imports)
    assert entry["status"] == common.PASS and entry["figures"]["imported"] == []


def test_a_module_that_needs_the_driver_is_not_a_break_without_one(site: Path) -> None:
    common, imports = probe_module("probe_common"), probe_module("probe_imports")
    if Path("/dev/nvidiactl").exists():
        pytest.skip("this host has an NVIDIA driver")
    message = "ImportError: libcuda.so.1: cannot open shared object file: No such file or directory"
    _dist(site, "gpuext", "gpuext", f"raise ImportError({message[13:]!r})\n")
    entry = common.run_check(_ctx(["gpuext==1.0"]), "imports", imports.TIER, imports.check_imports)
    assert entry["status"] == common.PASS and entry["figures"]["needs_driver"] == ["gpuext"]


def test_torch_after_import_call_needs_no_numpy(site: Path) -> None:
    """torch does not depend on numpy: without it, the from_numpy call is left out, not failed."""
    common, imports = probe_module("probe_common"), probe_module("probe_imports")
    _dist(site, "torch", "torch", "def from_numpy(a):\n    raise RuntimeError('Numpy is not available')\n")
    (site / "numpy").mkdir()
    (site / "numpy" / "__init__.py").write_text("raise ImportError('No module named numpy here')\n")
    entry = common.run_check(_ctx(["torch==2.2.2"]), "imports", imports.TIER, imports.check_imports)
    assert entry["status"] == common.PASS, entry
    (site / "numpy" / "__init__.py").write_text("def zeros(n):\n    return [0.0] * n\n")
    entry = common.run_check(_ctx(["torch==2.2.2"]), "imports", imports.TIER, imports.check_imports)
    assert entry["status"] == common.FAIL and entry["diagnosis"]["id"] == "numpy-abi"
