"""The library tier's check of frameworks the base image provides (probe_base), against the facts the
probe's libraries.frameworks check read on the H200 host (torch 2.11.0+cu130, CUDA 13.0, imported from
/opt/torch/.venv; recorded 2026-12-01) and the expectations envgen renders for a base_provides profile."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from test_probe_helpers import probe_module

from envgen import layout
from envgen.kb import load_kb
from envgen.plan.image import plan_image
from envgen.profile import load_profile
from envgen.render.core import render_in_memory

H200_TORCH = {"version": "2.11.0+cu130", "cuda": "13.0", "cudnn": "9.19.0", "cuda_build": True}
PROFILE = {
    "name": "host-torch", "base": "envgen-local/h200-host:latest", "local_base": True, "python": "3.12",
    "cuda": "13.0", "frameworks": {"pytorch": "2.11.0+cu130"}, "gpu": {"targets": ["H200"]},
    "base_provides": {"python": "/opt/torch/.venv/bin/python3"},
}


def expectation(tmp_path: Path, **changes: object) -> dict:
    path = tmp_path / "host-torch.yaml"
    path.write_text(yaml.safe_dump({**PROFILE, **changes}))
    ctx = render_in_memory(plan_image(load_profile(str(path), env={}), load_kb()))
    return {"expected": dict(ctx.plan.expected)}


TORCH_FILE = "/opt/torch/.venv/lib/x/torch/__init__.py"


def run(expect: dict, facts: dict, monkeypatch: pytest.MonkeyPatch, where: str = TORCH_FILE):
    base = probe_module("library.base")
    common = probe_module("core.common")
    monkeypatch.setattr(base, "_module_path", lambda name: where)
    ctx = common.Context(expect)
    ctx.library_frameworks = {"torch": facts} if facts else {}
    [(name, check)] = base.checks(expect)
    assert name == "libraries.base"
    return base, common, ctx, check


def test_rendered_expectation_names_the_base_and_its_frameworks(tmp_path: Path) -> None:
    expected = expectation(tmp_path)["expected"]
    assert expected["base_provides"] == {"python": "/opt/torch/.venv/bin/python3",
                                         "frameworks": {"pytorch": "2.11.0+cu130"}, "envgen_env": layout.ENV}
    assert expected["libraries"] is None  # the base's torch finds its own: the probe derives them


def test_the_declared_build_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, _, ctx, check = run(expectation(tmp_path), H200_TORCH, monkeypatch)
    message, figures = check(ctx)
    assert "pytorch 2.11.0+cu130, CUDA 13.0 from the base image" in message
    assert figures["frameworks"]["pytorch"]["declared_cuda"] == "13.0"


@pytest.mark.parametrize(("declared", "found", "words"), [
    ("2.4.0+cu121", H200_TORCH, "the base image holds pytorch 2.11.0+cu130, the profile declares 2.4.0+cu121"),
    ("2.11.0+cu128", H200_TORCH, "declares 2.11.0+cu128"),
    ("2.11.0+cu130", {**H200_TORCH, "cuda": "12.8"}, "is built for CUDA 12.8, the profile declares CUDA 13.0"),
    ("2.11.0+cu130", {**H200_TORCH, "cuda": None, "cuda_build": False}, "is a CPU build"),
    ("2.11.0+cu130", None, "does not hold pytorch"),
])
def test_a_base_that_does_not_hold_the_declaration_fails_with_the_way_out(
        declared: str, found: dict | None, words: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expect = expectation(tmp_path, frameworks={"pytorch": declared})
    base, common, ctx, check = run(expect, found or {}, monkeypatch, where="" if found is None else TORCH_FILE)
    if found is None:
        monkeypatch.setattr(base, "_distribution_version", lambda name: None)
    with pytest.raises(common.Fail) as err:
        check(ctx)
    assert words in str(err.value) and "set frameworks: to what the base image holds" in str(err.value)


def test_a_framework_envgen_installed_is_not_the_bases(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _, common, ctx, check = run(expectation(tmp_path), H200_TORCH, monkeypatch,
                                where=f"{layout.ENV}/lib/python3.12/site-packages/torch/__init__.py")
    with pytest.raises(common.Fail, match="not from the base image's environment"):
        check(ctx)


def test_a_base_envgen_built_holds_its_frameworks_where_envgen_installs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A team base envgen built (base_provides: {python: /opt/env/bin/python3}): its frameworks are in envgen's own
    environment, so where they are imported from tells nothing apart (envgen_env is None) and the check passes."""
    expect = expectation(tmp_path, base_provides={"python": f"{layout.ENV}/bin/python3"})
    assert expect["expected"]["base_provides"]["envgen_env"] is None
    _, _, ctx, check = run(expect, H200_TORCH, monkeypatch,
                           where=f"{layout.ENV}/lib/python3.12/site-packages/torch/__init__.py")
    message, _ = check(ctx)
    assert "pytorch 2.11.0+cu130, CUDA 13.0 from the base image" in message


def test_no_base_provides_no_check() -> None:
    assert probe_module("library.base").checks({"expected": {"torch": "2.1.2"}}) == []


def _packages_expect(tmp_path: Path, packages: dict, with_torch: bool = True) -> dict:
    changes: dict[str, object] = {"base_provides": {**PROFILE["base_provides"], "packages": packages}}
    if not with_torch:
        changes.update(frameworks={}, base_provides={"python": "/usr/bin/python3", "packages": packages},
                       cuda=None, gpu={"required": False})
    return expectation(tmp_path, **changes)


def _holding(base, found: dict, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "_distribution_place",
                        lambda name: (found[name], "/opt/torch/.venv/lib/python3.12/site-packages") if name in found
                        else (None, None))


def test_the_packages_the_base_holds_are_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expect = _packages_expect(tmp_path, {"cupy-cuda13x": "14.2.0", "triton": "3.6.0"})
    base, _, ctx, check = run(expect, H200_TORCH, monkeypatch)
    _holding(base, {"cupy-cuda13x": "14.2.0", "triton": "3.6.0"}, monkeypatch)
    message, figures = check(ctx)
    assert message.endswith("; from the base image: cupy-cuda13x 14.2.0, triton 3.6.0"), message
    assert figures["packages"]["triton"] == {"declared": "3.6.0", "found": "3.6.0",
                                             "from": "/opt/torch/.venv/lib/python3.12/site-packages"}


@pytest.mark.parametrize(("found", "words"), [
    ({"triton": "3.5.1"}, "the image holds triton 3.5.1 (/opt/torch/.venv/lib/python3.12/site-packages), "
                          "base_provides.packages declares 3.6.0"),
    ({}, "the base image does not hold triton (declared 3.6.0 in base_provides.packages)"),
])
def test_a_package_the_base_does_not_hold_at_its_version_fails_naming_it(
        found: dict, words: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expect = _packages_expect(tmp_path, {"triton": "3.6.0"}, with_torch=False)
    base, common, ctx, check = run(expect, {}, monkeypatch)
    _holding(base, found, monkeypatch)
    with pytest.raises(common.Fail) as err:
        check(ctx)
    assert str(err.value) == ("base_provides: " + words + " (set base_provides.packages to what the base image "
                              "holds, or use a base that holds the declared versions)")


def test_the_distribution_is_read_from_its_metadata() -> None:
    """_distribution_place reads the installed distribution (here pytest's own, in this venv)."""
    import pytest as installed

    version, where = probe_module("library.base")._distribution_place("pytest")
    assert version == installed.__version__ and where and Path(where, "pytest").is_dir()
    assert probe_module("library.base")._distribution_place("no-such-distribution-here") == (None, None)


def test_without_importlib_metadata_pkg_resources_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Python 3.7 has no importlib.metadata: setuptools' pkg_resources reads the same distribution."""
    import importlib
    import sys
    import warnings

    import pytest as installed

    base = probe_module("library.base")
    monkeypatch.delattr(importlib, "metadata")
    monkeypatch.setitem(sys.modules, "importlib.metadata", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pkg_resources' own deprecation warning
        version, where = base._distribution_place("pytest")
    assert version == installed.__version__ and where and Path(where, "pytest").is_dir()
