"""The probe's import check (probe_imports.py): every distribution of the profile imported in a child
interpreter, failures and import-time warnings recognised from recorded real texts. Real child processes
import real (tiny) packages written into a temporary site directory; their error output is recorded text
(tests/fixtures/errors/)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from test_probe_helpers import probe_module

from envgen.kb import load_kb
from envgen.plan.image import plan_image
from envgen.profile import load_profile
from envgen.render.core import render_in_memory

ERRORS = Path(__file__).resolve().parents[1] / "fixtures" / "errors"
PROFILES = Path(__file__).resolve().parents[2] / "profiles"


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


def _row(kind: str, spec: str) -> dict[str, object]:
    """One row of the expected document's ``distributions``, as the plan writes it (envgen/plan/expected.py)."""
    name, _, version = spec.partition("==")
    return {"name": name, "kind": kind, "specifier": f"=={version}" if version else "", "marker": None,
            "origin": "packages.pip[0]" if kind == "pip" else "frameworks.pytorch"}


def _ctx(pip: list[str], frameworks: tuple[str, ...] = ()) -> object:
    common = probe_module("core.common")
    rows = [_row("framework", spec) for spec in frameworks] + [_row("pip", spec) for spec in pip]
    expect = {"name": "p", "gpu": {"required": False}, "expected": {"gpu_required": False, "distributions": rows}}
    return common.Context(expect)


def _expected(tmp_path: Path, name: str, **changes: object) -> dict:
    """The expected document envgen renders for profiles/NAME.yaml with ``changes``."""
    data = {**yaml.safe_load((PROFILES / f"{name}.yaml").read_text()), **changes}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return {"expected": dict(render_in_memory(plan_image(load_profile(str(path), env={}), load_kb())).plan.expected)}


def test_distributions_come_from_the_plans_expected_document(tmp_path: Path) -> None:
    """The plan's frameworks (TensorFlow under its package's name) and the packages.pip lines whose marker holds
    in the image; the probe reads nothing of the profile's own lists."""
    imports = probe_module("library.imports")
    pip = ["opencv-python-headless==4.9.0.80", "PyYAML==6.0.1", 'tomli==2.0.1; python_version < "3.8"']
    expect = _expected(tmp_path, "cpu-smoke", packages={"apt": [], "pip": pip})
    assert imports.distributions_to_import(expect) == [
        ("tensorflow-cpu", True), ("torch", True), ("opencv-python-headless", False), ("pyyaml", False)]
    rows = expect["expected"]["distributions"]
    assert [(r["specifier"], r["origin"]) for r in rows] == [
        ("==2.12.0", "frameworks.tensorflow"), ("==2.13.0+cpu", "frameworks.pytorch"),
        ("==4.9.0.80", "packages.pip[0]"), ("==6.0.1", "packages.pip[1]")]
    assert imports.distributions_to_import({"frameworks": {"pytorch": "2.1.2"}, "packages": {"pip": pip}}) == []


def test_conda_packages_are_imported_when_they_are_python(tmp_path: Path) -> None:
    imports = probe_module("library.imports")
    expect = _expected(tmp_path, "modern-a100")
    conda = [r for r in expect["expected"]["distributions"] if r["kind"] == "conda"]
    assert conda and all(r["origin"].startswith("packages.conda[") for r in conda)
    assert all((r["name"], None) in imports.distributions_to_import(expect) for r in conda)


def test_a_marker_the_image_does_not_meet_leaves_the_line_out() -> None:
    imports = probe_module("library.imports")
    rows = [dict(_row("pip", "a==1"), marker='python_version < "3"'), _row("pip", "b==1")]
    assert imports.distributions_to_import({"expected": {"distributions": rows}}) == [("b", False)]


def test_modules_from_top_level_or_record(site: Path) -> None:
    imports = probe_module("library.imports")
    _dist(site, "Good-Pkg", "goodmod", "")
    _dist(site, "other", "othermod", "", top_level=False)
    found = imports.installed_metadata([str(site)])
    assert imports.top_level_modules(found["good-pkg"]) == ["goodmod"]
    assert imports.top_level_modules(found["other"]) == ["othermod"]


def test_clean_imports_pass(site: Path) -> None:
    imports = probe_module("library.imports")
    _dist(site, "goodpkg", "goodmod", "VALUE = 1\n")
    ctx = _ctx(["goodpkg==1.0"])
    message, figures = imports.check_imports(ctx)
    assert figures["imported"] == ["goodpkg"] and "1 distributions import" in message


def test_a_failing_import_is_diagnosed_from_the_recorded_text(site: Path) -> None:
    common, imports = probe_module("core.common"), probe_module("library.imports")
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
    common, imports = probe_module("core.common"), probe_module("library.imports")
    text = _recorded("numpy-abi--1.txt").split("\n\nTraceback")[0]
    _dist(site, "oldcv", "oldcv", f"import sys\nsys.stderr.write({text!r})\n")
    entry = common.run_check(_ctx(["oldcv==1.0"]), "imports", imports.TIER, imports.check_imports)
    assert entry["status"] == common.FAIL and entry["diagnosis"]["id"] == "numpy-abi"
    assert entry["figures"]["diagnoses"] == {"oldcv": "numpy-abi"}


def test_frameworks_missing_are_left_to_their_own_checks(site: Path) -> None:
    common, imports = probe_module("core.common"), probe_module("library.imports")
    entry = common.run_check(_ctx([], ("torch==2.1.2",)), "imports", imports.TIER, imports.check_imports)
    assert entry["status"] == common.PASS and entry["figures"]["imported"] == []


def test_a_module_that_needs_the_driver_is_not_a_break_without_one(site: Path) -> None:
    common, imports = probe_module("core.common"), probe_module("library.imports")
    if Path("/dev/nvidiactl").exists():
        pytest.skip("this host has an NVIDIA driver")
    message = "ImportError: libcuda.so.1: cannot open shared object file: No such file or directory"
    _dist(site, "gpuext", "gpuext", f"raise ImportError({message[13:]!r})\n")
    entry = common.run_check(_ctx(["gpuext==1.0"]), "imports", imports.TIER, imports.check_imports)
    assert entry["status"] == common.PASS and entry["figures"]["needs_driver"] == ["gpuext"]


def test_torch_after_import_call_needs_no_numpy(site: Path) -> None:
    """torch does not depend on numpy: without it, the from_numpy call is left out, not failed."""
    common, imports = probe_module("core.common"), probe_module("library.imports")
    _dist(site, "torch", "torch", "def from_numpy(a):\n    raise RuntimeError('Numpy is not available')\n")
    (site / "numpy").mkdir()
    (site / "numpy" / "__init__.py").write_text("raise ImportError('No module named numpy here')\n")
    entry = common.run_check(_ctx(["torch==2.2.2"]), "imports", imports.TIER, imports.check_imports)
    assert entry["status"] == common.PASS, entry
    (site / "numpy" / "__init__.py").write_text("def zeros(n):\n    return [0.0] * n\n")
    entry = common.run_check(_ctx(["torch==2.2.2"]), "imports", imports.TIER, imports.check_imports)
    assert entry["status"] == common.FAIL and entry["diagnosis"]["id"] == "numpy-abi"


def test_the_document_the_plan_writes_reads_back_strictly(tmp_path: Path) -> None:
    """envgen.expected/3 read back: every row of ``distributions`` is an ExpectedDistribution, and a key beyond its
    fields (or a kind the probe does not know) is refused."""
    from pydantic import ValidationError

    from envgen.plan.expected import EXPECTED_SCHEMA, Expected, ExpectedDistribution

    doc = _expected(tmp_path, "cpu-smoke")["expected"]
    assert doc["schema"] == EXPECTED_SCHEMA == "envgen.expected/3"
    fields = {k: v for k, v in doc.items() if k != "schema"}
    assert Expected.model_validate(fields).document() == doc
    row = doc["distributions"][0]
    for bad in ({**row, "version": "2.12.0"}, {**row, "kind": "wheel"}):
        with pytest.raises(ValidationError):
            ExpectedDistribution.model_validate(bad)
