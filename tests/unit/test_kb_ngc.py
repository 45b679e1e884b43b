"""NGC release rows after 23.12: what NVIDIA's pages state becomes a row (a field a page does not state stays
empty, never guessed); a release with a row gets its own CUDA, Python and driver verdicts instead of
ngc-unknown's nearest-release guess; the stored facts and ngc.yaml are compared by the refresh tool."""

from __future__ import annotations

from pathlib import Path

import pytest

from envgen.check import HostSpec, check_profile
from envgen.kb import KnowledgeBase, load_kb
from envgen.plan.image import plan_image
from envgen.profile import load_profile
from tools.kbrefresh import ngc_notes

P2405 = "nvcr.io/nvidia/pytorch:24.05-py3"
P2512 = "nvcr.io/nvidia/pytorch:25.12-py3"


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
    profile = plan_image(load_profile(str(path)), load_kb()).profile  # planning fills them (plan.defaults)
    assert (profile.cuda, profile.cudnn, profile.python) == ("12.4", "9.1.0.70", "3.10")
    codes = found(tmp_path, P2405, HostSpec(gpus=["A100"], driver="550.54.15"))
    assert "ngc-unknown" not in codes and "error" not in codes.values()


def test_pytorch_2405_driver_below_minimum(tmp_path: Path) -> None:
    """545 is 24.05's minimum: a 530 driver has no forward-compatible branch (an error: the row rests on named NVIDIA
    notes); a 535.86+ data-centre driver runs it on an A100 but not on an RTX 4090."""
    too_old = found(tmp_path, P2405, HostSpec(gpus=["A100"], driver="530.30.02"))
    assert too_old.get("ngc-driver-too-old") == "error"
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
    """24.11 has no row (no Triton notes of the month in the corpus): the warning says its left-out CUDA/Python came
    from 24.10's row, so the user can tell."""
    path = tmp_path / "ngc.yaml"
    path.write_text("name: ngc\nbase: nvcr.io/nvidia/pytorch:24.11-py3\ngpu: {targets: [A100]}\n")
    kb = load_kb()
    unknown = [f for f in check_profile(load_profile(str(path), kb=kb), kb, HostSpec()) if f.code == "ngc-unknown"]
    assert unknown and "24.10-py3 (CUDA 12.6.2, Python 3.10)" in unknown[0].message


# release -> (CUDA, Python, PyTorch build, driver minimum or None) as the Triton notes and matrix state them
TRITON_ROWS = {
    "24.03": ("12.4.0", "3.10", "2.3.0a0+40ec155e58", "545"),
    "24.07": ("12.5.1", "3.10", "2.4.0a0+3bcc3cddb5", "555"),
    "24.10": ("12.6.2", "3.10", "2.5.0a0+e000cf0ad9", "560"),
    "25.01": ("12.8.0", "3.12", "2.6.0a0+ecf3bae40a", None),
    "25.03": ("12.8.1", "3.12", "2.7.0a0+7c8ec84dab", None),
    "25.04": ("12.9.0", "3.12", "2.7.0a0+79aa17489c", "575"),
    "25.06": ("12.9.1", "3.12", "2.8.0a0+5228986c39", "575"),
    "25.10": ("13.0.2", "3.12", "2.9.0a0+145a3a7bda", None),
}


@pytest.mark.parametrize("release", sorted(TRITON_ROWS))
def test_rows_from_triton_notes_and_matrix(kb: KnowledgeBase, release: str) -> None:
    """Each row names both NVIDIA documents it is read from, which state every field it holds, so it is verified
    (issue 29) although its own PyTorch page is unread; cuDNN, Ubuntu and the GPU floor are not stated for the
    PyTorch image, so they stay empty."""
    row = kb.ngc(f"nvcr.io/nvidia/pytorch:{release}-py3")
    assert row is not None and not row.unverified
    assert (row.cuda, row.python, row.framework_version, row.driver_min) == TRITON_ROWS[release]
    assert (row.cudnn, row.ubuntu, row.cc_min) == (None, None, None)
    assert f"triton-inference-server/release-notes/rel-{release.replace('.', '-')}.html" in row.source
    assert "docs/introduction/compatibility.md" in row.source


def test_pytorch_2407_gets_its_own_cuda_and_python(tmp_path: Path) -> None:
    """nvcr.io/nvidia/pytorch:24.07-py3 without cuda/python: the profile takes CUDA 12.5 and Python 3.10 from its row,
    with no ngc-unknown; a 550 driver is below 24.07's 555 (no data-centre branch 550 is listed)."""
    base = "nvcr.io/nvidia/pytorch:24.07-py3"
    path = tmp_path / "ngc.yaml"
    path.write_text(f"name: ngc\nbase: {base}\ngpu: {{targets: [A100]}}\n")
    profile = plan_image(load_profile(str(path)), load_kb()).profile
    assert (profile.cuda, profile.python) == ("12.5", "3.10")
    codes = found(tmp_path, base, HostSpec(gpus=["A100"], driver="555.42.06"))
    assert "ngc-unknown" not in codes and "error" not in codes.values()
    assert "ngc-driver-too-old" in found(tmp_path, base, HostSpec(gpus=["A100"], driver="550.54.15"))


def test_pytorch_2603_from_the_cuda_dl_base_notes(kb: KnowledgeBase, tmp_path: Path) -> None:
    """26.03: CUDA 13.2.0, Ubuntu 24.04, Python 3.12 from the CUDA DL base image's notes; no PyTorch version or
    driver stated, so the driver is CUDA 13.2's (cuda.yaml: 595.45.04)."""
    row = kb.ngc("nvcr.io/nvidia/pytorch:26.03-py3")
    assert row is not None and (row.cuda, row.python, row.ubuntu, row.framework_version, row.driver_min) == (
        "13.2.0", "3.12", "24.04", None, None)
    base = "nvcr.io/nvidia/pytorch:26.03-py3"
    assert "ngc-driver-too-old" in found(tmp_path, base, HostSpec(gpus=["A100"], driver="590.48.01"))
    assert "ngc-driver-too-old" not in found(tmp_path, base, HostSpec(gpus=["A100"], driver="595.45.04"))
    assert ngc_notes.parse("- Ubuntu 24.04 including Python 3.12\n- NVIDIA CUDA 13.2.0.046\n- NVIDIA cuDNN 9.20.0.48\n"
                           "Release 26.03 is based on CUDA 13.2.0. For comprehensive ...") == {
        "release": "26.03", "cuda": "13.2.0", "ubuntu": "24.04", "python": "3.12", "cudnn": "9.20.0.48"}


def test_unsound_triton_driver_text_falls_back_to_the_cuda_minimum(tmp_path: Path) -> None:
    """Triton's 25.01 notes say 'CUDA 12.8.0.038 which requires NVIDIA Driver release 560': below CUDA 12.8's own
    570.26, so the row leaves driver_min empty and a 565 driver is too old for 25.01 (CUDA 12.8's minimum)."""
    base = "nvcr.io/nvidia/pytorch:25.01-py3"
    assert "ngc-driver-too-old" in found(tmp_path, base, HostSpec(gpus=["A100"], driver="565.57.01"))
    assert "ngc-driver-too-old" not in found(tmp_path, base, HostSpec(gpus=["A100"], driver="570.86.10"))


def test_pytorch_2510_is_cuda13_so_volta_is_refused(tmp_path: Path) -> None:
    assert "ngc-gpu-too-old" in found(tmp_path, "nvcr.io/nvidia/pytorch:25.10-py3", HostSpec(gpus=["V100"]), "V100")
    assert "ngc-gpu-too-old" not in found(tmp_path, "nvcr.io/nvidia/pytorch:25.06-py3", HostSpec(gpus=["V100"]),
                                          "V100")


@pytest.mark.parametrize("base", ["nvcr.io/nvidia/pytorch:24.06-py3", "nvcr.io/nvidia/pytorch:25.05-py3",
                                  "nvcr.io/nvidia/tensorflow:24.10-tf2-py3"])
def test_releases_the_documents_do_not_settle_have_no_row(tmp_path: Path, base: str) -> None:
    """24.06: Triton (CUDA 12.5.0) and MXNet (12.4.1) disagree; 25.05: a build in the matrix but no Triton notes of
    the month; TensorFlow 24.10: nothing read states its contents. Each stays a warning, not an input error."""
    assert load_kb().ngc(base) is None
    assert found(tmp_path, base, HostSpec(gpus=["A100"])).get("ngc-unknown") == "warning"


def test_triton_matrix_parser_reads_the_nv_suffix() -> None:
    """The .nvYY.M suffix names the NGC PyTorch release; builds without it, and vLLM rows, name none."""
    from tools.kbrefresh.ngc_triton import parse_matrix

    text = (Path(__file__).parent.parent / "fixtures" / "ngc" / "triton-compatibility-excerpt.md").read_text()
    assert parse_matrix(text) == {
        "24.07": {"release": "24.07", "triton": ["24.10", "24.08"], "framework_version": "2.4.0a0+3bcc3cddb5",
                  "python": "3.10"},
        "24.10": {"release": "24.10", "triton": ["24.11"], "framework_version": "2.5.0a0+e000cf0ad9",
                  "python": "3.10"},
        "24.11": {"release": "24.11", "triton": ["24.12"], "framework_version": "2.6.0a0+df5bbc09d1",
                  "python": "3.12"},
        "25.01": {"release": "25.01", "triton": ["25.02", "25.01"], "framework_version": "2.6.0a0+ecf3bae40a",
                  "python": "3.12"},
    }
    bent = text.replace("| Python 3.12.3  | 2.6.0a0+ecf3bae40a", "| Python 3.11.9  | 2.6.0a0+ecf3bae40a")
    assert "python" not in parse_matrix(bent)["25.01"], "rows that disagree keep only what they agree on"


def test_parser_reads_triton_notes_sentences() -> None:
    """Triton's notes write the CUDA with its build number and no comma before 'which'."""
    assert ngc_notes.parse("Release 25.03 is based on CUDA 12.8.1.012 which requires NVIDIA Driver release 560 or "
                           "later. However, ... you can use NVIDIA driver release 470.57 (or later R470), 525.85 (or "
                           "later R525), 535.86 (or later R535), or 545.23 (or later R545).") == {
        "release": "25.03", "cuda": "12.8.1", "driver_min": "560",
        "datacenter_drivers": ["470.57", "525.85", "535.86", "545.23"]}


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
