"""check/packages/requires.py: what the corpus cannot assert (info findings, warnings that must stay quiet) and
the pins suggest takes from it."""

from __future__ import annotations

from typing import Any

from envgen.check import check_profile
from envgen.check.context import build_context
from envgen.check.packages.requires import safe_pins
from envgen.kb import KnowledgeBase
from envgen.profile import Profile


def _profile(**fields: Any) -> Profile:
    data: dict[str, Any] = {"name": "p", "base": "debian:bookworm-slim", "local_base": True, "installer": "conda",
                            "python": "3.11", "cuda": "12.1", "gpu": {"targets": ["A100"]}}
    data.update(fields)
    return Profile.model_validate(data)


def _codes(profile: Profile, kb: KnowledgeBase) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in check_profile(profile, kb):
        if f.code.startswith("pkg-"):
            out.setdefault(f.code, []).append(f.severity)
    return out


def test_keras3_notice_is_info_and_tf_keras_silences_it(kb: KnowledgeBase) -> None:
    tf = {"tensorflow": "2.16.1", "tensorflow_package": "tensorflow[and-cuda]"}
    assert _codes(_profile(cuda="12.3", frameworks=tf), kb) == {"pkg-notice": ["info"]}
    quiet = _profile(cuda="12.3", frameworks=tf, packages={"pip": ["tf-keras==2.16.0"]})
    assert "pkg-notice" not in _codes(quiet, kb) and "pkg-ceiling" not in _codes(quiet, kb)


def test_unpinned_numpy_is_quiet_where_pip_cannot_take_numpy2(kb: KnowledgeBase) -> None:
    torch = {"pytorch": "2.2.2+cu121"}
    assert "pkg-unpinned" in _codes(_profile(frameworks=torch), kb)
    # NumPy 2 needs Python >= 3.9: on 3.8 the newest numpy pip can take is 1.24
    assert "pkg-unpinned" not in _codes(_profile(python="3.8", frameworks=torch), kb)
    # TensorFlow 2.15 declares numpy<2.0.0: pip stays below NumPy 2 for torch too
    both = {"tensorflow": "2.15.1", "tensorflow_package": "tensorflow[and-cuda]", **torch}
    assert "pkg-unpinned" not in _codes(_profile(cuda="12.2", frameworks=both), kb)


def test_a_pinned_numpy_in_range_is_fine(kb: KnowledgeBase) -> None:
    codes = _codes(_profile(frameworks={"pytorch": "2.2.2+cu121"}, packages={"pip": ["numpy==1.26.4"]}), kb)
    assert codes == {}


def test_torch_builds_other_than_pypis_have_no_recorded_pins(kb: KnowledgeBase) -> None:
    """Only the PyPI wheel's metadata is recorded (cu121 for 2.1.2): a cu118 build's pins are not guessed."""
    tf = {"tensorflow": "2.15.1", "tensorflow_package": "tensorflow[and-cuda]"}
    assert "pkg-pin-conflict" in _codes(_profile(cuda="12.2", frameworks={**tf, "pytorch": "2.1.2+cu121"}), kb)
    assert "pkg-pin-conflict" not in _codes(_profile(cuda="12.2", frameworks={**tf, "pytorch": "2.1.2+cu118"}), kb)


def test_safe_pins_name_their_rows(kb: KnowledgeBase) -> None:
    pins = safe_pins(build_context(_profile(python="3.10", cuda="11.3", frameworks={"pytorch": "1.10.2+cu113"}), kb,
                                   None))
    assert {pin for pin, _ in pins} == {"numpy==1.26.4", "setuptools==59.5.0"}
    assert all(row.cite().startswith("python_packages.yaml#") for _, row in pins)


def test_kb_consistency_catches_a_pin_inside_its_break(kb: KnowledgeBase) -> None:
    import dataclasses

    row = next(r for r in kb.package_breaks if r.id == "torch-numpy2")
    assert row.unpinned is not None
    bad = row.model_copy(update={"unpinned": row.unpinned.model_copy(update={"pin": "numpy==2.0.1"})})
    broken = dataclasses.replace(kb, package_breaks=[*kb.package_breaks, bad])
    assert any("torch-numpy2: unpinned.pin numpy==2.0.1" in p for p in broken.problems())
    assert any("duplicate row 'torch-numpy2'" in p for p in broken.problems())


def test_a_range_fix_names_the_pin_once(kb: KnowledgeBase) -> None:
    """Issue 32 item 10: `fix: pin numpy==1.26.4; pin numpy==1.26.4 (...)` (the row's fix already names the pin)."""
    profile = _profile(installer="pip", cuda=None, gpu={"required": False}, frameworks={"pytorch": "2.2.2+cpu"},
                       packages={"pip": ["numpy>=1.20"]})
    found = [f for f in check_profile(profile, kb) if f.code == "pkg-range-allows"]
    assert found, [f.code for f in check_profile(profile, kb)]
    for f in found:
        pins = [word for word in f.fix.replace(",", " ").split() if word.startswith("numpy==")]
        assert len(pins) == len(set(pins)), f.fix
