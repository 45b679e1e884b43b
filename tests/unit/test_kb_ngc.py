"""NGC release rows after 23.12: what NVIDIA's pages state becomes a row (a field a page does not state stays
empty, never guessed); a release with a row gets its own CUDA, Python and driver verdicts instead of
ngc-unknown's nearest-release guess; the stored facts and ngc.yaml are compared by the refresh tool."""

from __future__ import annotations

from pathlib import Path

import pytest

from envgen.check import HostSpec, check_profile
from envgen.kb import KnowledgeBase, load_kb
from envgen.kb.refresh import ngc_notes
from envgen.profile import load_profile

P2405 = "nvcr.io/nvidia/pytorch:24.05-py3"
P2512 = "nvcr.io/nvidia/pytorch:25.12-py3"


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return load_kb()


def found(tmp_path: Path, base: str, host: HostSpec, gpu: str = "A100", extra: str = "") -> dict[str, str]:
    path = tmp_path / "ngc.yaml"
    path.write_text(f"name: ngc\nbase: {base}\ngpu: {{targets: [{gpu}]}}\n{extra}")
    kb = load_kb()
    return {f.code: f.severity for f in check_profile(load_profile(str(path), kb=kb), kb, host)}


def test_pytorch_2405_row(kb: KnowledgeBase) -> None:
    row = kb.ngc(P2405)
    assert row is not None
    assert (row.cuda, row.cudnn, row.python, row.ubuntu, row.driver_min) == ("12.4.1", "9.1.0.70", "3.10", "22.04",
                                                                            "545")
    assert row.datacenter_drivers == ["470.57", "525.85", "535.86", "545.23"]
    assert row.framework_version == "2.4.0a0+07cecf4168"


def test_pytorch_2405_profile_takes_its_own_row(tmp_path: Path) -> None:
    path = tmp_path / "ngc.yaml"
    path.write_text(f"name: ngc\nbase: {P2405}\ngpu: {{targets: [A100]}}\n")
    profile = load_profile(str(path))
    assert (profile.cuda, profile.cudnn, profile.python) == ("12.4", "9.1.0.70", "3.10")
    codes = found(tmp_path, P2405, HostSpec(gpus=["A100"], driver="550.54.15"))
    assert "ngc-unknown" not in codes and "error" not in codes.values()


def test_pytorch_2405_driver_below_minimum(tmp_path: Path) -> None:
    """545 is 24.05's minimum: a 530 driver has no forward-compatible branch (error, softened: the row is
    unverified); a 535.86+ data-centre driver runs it on an A100 but not on an RTX 4090."""
    too_old = found(tmp_path, P2405, HostSpec(gpus=["A100"], driver="530.30.02"))
    assert "ngc-driver-too-old" in too_old
    assert found(tmp_path, P2405, HostSpec(gpus=["A100"], driver="535.104.05")).get(
        "ngc-driver-forward-compat") == "warning"
    assert "ngc-driver-no-forward-compat" in found(tmp_path, P2405, HostSpec(gpus=["RTX 4090"],
                                                                              driver="535.104.05"), "RTX 4090")


def test_pytorch_2512_row_leaves_unstated_fields_empty(kb: KnowledgeBase) -> None:
    """25.12's page states CUDA 13.1.0, Python 3.12 and PyTorch 2.10.0a0+b4e4ee81d3; it defers the driver to
    NVIDIA's compatibility pages, and the stored copy lists no cuDNN or Ubuntu: those stay empty."""
    row = kb.ngc(P2512)
    assert row is not None
    assert (row.cuda, row.python, row.framework_version) == ("13.1.0", "3.12", "2.10.0a0+b4e4ee81d3")
    assert (row.cudnn, row.ubuntu, row.driver_min) == (None, None, None)
    info = kb.base_image(P2512)
    assert info is not None and (info.cuda, info.cudnn, info.os, info.python) == ("13.1.0", None, None, "3.12")


def test_pytorch_2512_driver_and_gpu_floor_come_from_its_cuda(tmp_path: Path) -> None:
    """Without a stated driver minimum, 25.12 is held to CUDA 13.1's (cuda.yaml); CUDA 13 builds no code for
    compute capability below 7.5, so a V100 (7.0) gets ngc-gpu-too-old although the NGC family floor is 6.0."""
    codes = found(tmp_path, P2512, HostSpec(gpus=["A100"], driver="575.57.08"))
    assert "ngc-driver-too-old" in codes and "ngc-unknown" not in codes
    assert "ngc-driver-too-old" not in found(tmp_path, P2512, HostSpec(gpus=["A100"], driver="590.48.01"))
    assert "ngc-gpu-too-old" in found(tmp_path, P2512, HostSpec(gpus=["V100"]), "V100")


def test_release_without_a_row_still_warns(tmp_path: Path) -> None:
    codes = found(tmp_path, "nvcr.io/nvidia/tensorflow:24.05-tf2-py3", HostSpec(gpus=["A100"]))
    assert codes.get("ngc-unknown") == "warning"


def test_ngc_unknown_names_the_release_it_assumed(tmp_path: Path) -> None:
    """24.10 has no row: the warning says its left-out CUDA/Python came from 24.05's row, so the user can tell."""
    path = tmp_path / "ngc.yaml"
    path.write_text("name: ngc\nbase: nvcr.io/nvidia/pytorch:24.10-py3\ngpu: {targets: [A100]}\n")
    kb = load_kb()
    unknown = [f for f in check_profile(load_profile(str(path), kb=kb), kb, HostSpec()) if f.code == "ngc-unknown"]
    assert unknown and "24.05-py3 (CUDA 12.4.1, Python 3.10)" in unknown[0].message


def test_stored_facts_agree_with_ngc_yaml(kb: KnowledgeBase) -> None:
    """The rerunnable comparison: every fact stored from an NVIDIA page matches the row that cites it."""
    assert ngc_notes.differences(kb, ngc_notes.load_facts()) == []


def test_parser_reads_the_fact_sentences() -> None:
    text = (Path(__file__).parent.parent / "fixtures" / "ngc" / "release-sentences.txt").read_text()
    facts = ngc_notes.parse(text)
    assert facts == {"release": "24.05", "cuda": "12.4.1", "driver_min": "545", "ubuntu": "22.04", "python": "3.10",
                     "cudnn": "9.1.0.70", "datacenter_drivers": ["470.57", "525.85", "535.86", "545.23"]}
    assert ngc_notes.parse("Release 24.06 supports CUDA compute capability 6.0 and later.") == {
        "release": "24.06", "cc_min": "6.0"}
    assert ngc_notes.parse("Release 25.12 is based on CUDA 13.1.0 . PyTorch container image version 25.12 is based "
                           "on 2.10.0a0+b4e4ee81d3 . ( /usr/local/lib/python3.12/dist-packages/torch )") == {
        "release": "25.12", "cuda": "13.1.0", "python": "3.12", "framework_version": "2.10.0a0+b4e4ee81d3"}


def test_compare_reports_drift(kb: KnowledgeBase) -> None:
    facts = ngc_notes.load_facts()
    bent = [dict(f, cuda="12.4.0") if f["row"] == P2405 else f for f in facts]
    assert any("12.4.0" in d for d in ngc_notes.differences(kb, bent))
