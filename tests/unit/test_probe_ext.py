"""The probe's extension-package checks (probe_ext) without a GPU: which packages it checks, the import and
version gate, the library tier's import-only run, the GPU tier's call and its skip; the GPU calls themselves run
on the device machine (tests/gpu/test_probe_ext_gpu.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_probe_helpers import probe_module


def _fake_package(root: Path, module: str, version: str) -> None:
    (root / module).mkdir()
    (root / module / "__init__.py").write_text(f'__version__ = "{version}"\n')


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    _fake_package(tmp_path, "xformers", "0.0.32.post2")
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def _ctx(expect: dict | None = None):
    common = probe_module("core.common")
    return common, common.Context(expect or {}, diagnoses=common.load_diagnoses())


def _expect(*rows: tuple[str, str, str]) -> dict:
    return {"gpu": {"required": True},
            "expected": {"extensions": [{"package": p, "module": m, "version": v} for p, m, v in rows]}}


def test_the_profile_names_the_packages_and_a_bare_run_finds_them(fake: Path) -> None:
    ext = probe_module("gpu.ext")
    _common, ctx = _ctx(_expect(("flash-attn", "flash_attn", "2.8.3")))
    assert [name for name, _ in ext.checks(ctx)] == ["ext.flash-attn"]
    _common, bare = _ctx()
    assert "ext.xformers" in [name for name, _ in ext.checks(bare)]


def test_library_tier_imports_and_compares_the_version(fake: Path) -> None:
    ext = probe_module("gpu.ext")
    common, ctx = _ctx(_expect(("xformers", "xformers", "0.0.32.post2")))
    (name, func), = ext.checks(ctx, call=False)
    entry = common.run_check(ctx, name, ext.TIER, func)
    assert entry["status"] == "pass" and "GPU tier" in entry["message"]
    assert entry["figures"]["version"] == "0.0.32.post2"
    common, ctx = _ctx(_expect(("xformers", "xformers", "0.0.31")))
    (name, func), = ext.checks(ctx, call=False)
    entry = common.run_check(ctx, name, ext.TIER, func)
    assert entry["status"] == "fail" and "version mismatch" in entry["message"]


def test_a_missing_package_the_profile_names_fails() -> None:
    ext = probe_module("gpu.ext")
    common, ctx = _ctx(_expect(("flash-attn", "envgen_no_such_module", "2.8.3")))
    (name, func), = ext.checks(ctx, call=False)
    entry = common.run_check(ctx, name, ext.TIER, func)
    assert entry["status"] == "fail" and "expected by the profile but cannot be imported" in entry["message"]


def test_gpu_tier_calls_once_or_skips_without_a_gpu(fake: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ext, calls = probe_module("gpu.ext"), probe_module("gpu.ext_calls")
    called = []
    monkeypatch.setitem(calls.CALLS, "xformers", lambda ctx, module: (called.append(module) or "ran", {"x": 1}))
    common, ctx = _ctx(_expect(("xformers", "xformers", "0.0.32.post2")))
    ctx.mode, ctx.gpus = "gpu", [{"name": "H200"}]
    (name, func), = ext.checks(ctx)
    entry = common.run_check(ctx, name, ext.TIER, func)
    assert entry["status"] == "pass" and entry["message"].endswith("; ran") and entry["figures"]["x"] == 1
    assert len(called) == 1
    ctx.mode, ctx.gpus = "cpu-only", []
    entry = common.run_check(ctx, name, ext.TIER, func)
    assert entry["status"] == "skipped" and "GPU call skipped" in entry["message"]


def test_every_known_package_has_a_call_or_a_reason() -> None:
    ext, calls = probe_module("gpu.ext"), probe_module("gpu.ext_calls")
    for module, _package in ext.KNOWN:
        assert module in calls.CALLS or module in calls.NO_CALL, module


def test_the_probe_knows_every_module_the_knowledge_base_names() -> None:
    from envgen.kb import load_kb

    known = {module for module, _package in probe_module("gpu.ext").KNOWN}
    assert {row.module for row in load_kb().extensions} <= known


def _fake_engine(root: Path, ops_error: str | None) -> None:
    """A stand-in vllm package (the real wheel is 400 MB and needs CUDA): its compiled-ops module raises the
    loader's words, as recorded in vllm's and sglang's trackers, or imports cleanly."""
    _fake_package(root, "vllm", "0.11.0")
    body = f"raise ImportError({ops_error!r})\n" if ops_error else ""
    (root / "vllm" / "_C.py").write_text(body)


@pytest.mark.parametrize(("ops_error", "status", "said"), [
    (None, "pass", "vllm._C loads"),
    ("libcuda.so.1: cannot open shared object file: No such file or directory", "pass", "needs the NVIDIA driver"),
    # https://github.com/saturncloud/images/pull/482: vLLM 0.25.1 on a CUDA 12.9 base
    ("libcudart.so.13: cannot open shared object file: No such file or directory", "fail", "cannot be loaded"),
])
def test_an_engine_loads_its_compiled_ops_in_the_library_tier(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              ops_error: str | None, status: str, said: str) -> None:
    _fake_engine(tmp_path, ops_error)
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("vllm", "vllm._C"):
        monkeypatch.delitem(__import__("sys").modules, name, raising=False)
    ext = probe_module("gpu.ext")
    common, ctx = _ctx(_expect(("vllm", "vllm", "0.11.0")))
    (name, func), = ext.checks(ctx, call=False)
    entry = common.run_check(ctx, name, ext.TIER, func)
    assert name == "ext.vllm"
    assert entry["status"] == status and said in entry["message"], entry


# the loader's words for a missing driver, as dlopen gives them (the wording glibc uses for any missing DT_NEEDED)
NO_DRIVER = "libcuda.so.1: cannot open shared object file: No such file or directory"


@pytest.mark.parametrize(("broken", "status", "said"), [
    (None, "pass", "1 of 3 shared objects load without a driver; waiting for the driver (libcuda.so.1): "
                   "_C.abi3.so, vllm_flash_attn/_vllm_fa3_C.abi3.so"),
    ("libcudart.so.13: cannot open shared object file: No such file or directory", "fail",
     "_moe_C.abi3.so (shipped by the engine) cannot be loaded: libcudart.so.13"),
])
def test_an_engine_s_shared_objects_load_or_wait_for_the_driver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                broken: str | None, status: str, said: str) -> None:
    """vllm 0.11.0's wheel: _C.abi3.so and _vllm_fa3_C.abi3.so list libcuda.so.1 as DT_NEEDED (readelf -d),
    _moe_C.abi3.so does not; dlopen stands in for the loader (the real one runs in tests/pipeline/
    test_pipeline_vllm.py), raising its words for the files that need what is missing."""
    _fake_engine(tmp_path, NO_DRIVER)
    (tmp_path / "vllm" / "_C").mkdir()  # a package wins over the empty _C.abi3.so below when vllm._C is imported
    (tmp_path / "vllm" / "_C.py").rename(tmp_path / "vllm" / "_C" / "__init__.py")
    for name in ("_C.abi3.so", "_moe_C.abi3.so", "vllm_flash_attn/_vllm_fa3_C.abi3.so"):
        (tmp_path / "vllm" / name).parent.mkdir(exist_ok=True)
        (tmp_path / "vllm" / name).write_bytes(b"")
    opened: list[str] = []

    def dlopen(path: str, *args: object, **kwargs: object) -> None:
        opened.append(path)
        if path.endswith(("/_C.abi3.so", "/_vllm_fa3_C.abi3.so")):
            raise OSError(NO_DRIVER)
        if broken:
            raise OSError(broken)

    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("vllm", "vllm._C"):
        monkeypatch.delitem(__import__("sys").modules, name, raising=False)
    ext = probe_module("gpu.ext")
    monkeypatch.setattr(__import__("ctypes"), "CDLL", dlopen)
    common, ctx = _ctx(_expect(("vllm", "vllm", "0.11.0")))
    (name, func), = ext.checks(ctx, call=False)
    entry = common.run_check(ctx, name, ext.TIER, func)
    assert entry["status"] == status and said in entry["message"], entry
    assert len(opened) == (3 if broken is None else 2)
