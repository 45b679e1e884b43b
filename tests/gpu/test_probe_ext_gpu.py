"""The probe's extension-package checks on a real GPU: every extension package installed on this machine
(on the H200: Triton, JAX, CuPy beside PyTorch; vLLM or SGLang where installed: their compiled ops and own
RMSNorm kernel) imported and called once, with a profile that names them and bare (no --expect); and their
calls skipped, not failed, when no GPU is visible to a CPU-only profile.

    python -m pytest tests/gpu/test_probe_ext_gpu.py -q        (or: python tests/gpu/probe_ext_run.py)
"""

from __future__ import annotations

import pytest
from expect_here import installed_extensions
from probe_run import by_name, run_probe, write_expect

pytestmark = pytest.mark.gpu


def test_each_installed_extension_is_called_once_on_the_gpu(tmp_path):
    here = installed_extensions()
    if not here:
        pytest.skip("no GPU extension package is installed here")
    code, report = run_probe(tmp_path, "--expect", str(write_expect(tmp_path, "--extensions")))
    checks = by_name(report)
    failed = {name: c["message"] for name, c in checks.items() if c["status"] == "fail"}
    assert code == 0, failed
    for row in here:
        check = checks["ext." + row["package"]]
        assert check["status"] == "pass", (row, check["message"])
        assert check["figures"]["version"] == row["version"]
    if "ext.jax" in checks:
        assert checks["ext.jax"]["figures"]["value"] == 257.0
        assert "cuda" in checks["ext.jax"]["figures"]["device"].lower() or "gpu" in checks["ext.jax"]["figures"][
            "device"].lower()
    if "ext.triton" in checks:
        assert checks["ext.triton"]["figures"]["max_abs_error"] == 0.0
    for engine in ("ext.vllm", "ext.sglang"):  # the engine's own RMSNorm kernel, no model weights
        if engine in checks:
            assert checks[engine]["figures"]["compiled_ops"] == "loaded"
            assert checks[engine]["figures"]["rel_error"] < 1e-2


def test_a_bare_run_finds_the_installed_extensions(tmp_path):
    here = installed_extensions()
    if not here:
        pytest.skip("no GPU extension package is installed here")
    code, report = run_probe(tmp_path, "--tier", "all")
    checks = by_name(report)
    modules = {c["figures"].get("module") for name, c in checks.items() if name.startswith("ext.")}
    assert {row["module"] for row in here} <= modules
    assert not [name for name, c in checks.items() if name.startswith("ext.") and c["status"] == "fail"], code


def test_library_tier_imports_without_calling(tmp_path):
    here = installed_extensions()
    if not here:
        pytest.skip("no GPU extension package is installed here")
    _code, report = run_probe(tmp_path, "--expect", str(write_expect(tmp_path, "--extensions")),
                              "--tier", "libraries")
    checks = by_name(report)
    for row in here:
        check = checks["ext." + row["package"]]
        assert check["status"] == "pass" and "GPU tier" in check["message"], check
