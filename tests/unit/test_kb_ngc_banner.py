"""NGC rows after 23.12 read from the month's Triton notes and Triton's build files (issues 21, 29): the banner parser
on the stored banners (each from a named third-party file) and on made-up banner shapes, a copied banner backing no row
field, the TensorFlow releases with a row getting a verdict (their own CUDA, Python and driver) instead of
ngc-unknown, and the releases with no NVIDIA source keeping no row."""

from __future__ import annotations

from pathlib import Path

import pytest

from envgen.check import HostSpec, check_profile
from envgen.kb import KnowledgeBase, load_kb
from envgen.plan.image import plan_image
from envgen.profile import load_profile
from tools.kbrefresh.ngc_banner import parse_banners
from tools.kbrefresh.ngc_notes import UPSTREAM

BANNERS = UPSTREAM / "ngc-container-banners.txt"
TF2502 = "nvcr.io/nvidia/tensorflow:25.02-tf2-py3"


@pytest.fixture(scope="module")
def kb() -> KnowledgeBase:
    return load_kb()


def codes(tmp_path: Path, body: str, host: HostSpec) -> dict[str, str]:
    path = tmp_path / "ngc.yaml"
    path.write_text(body)
    kb = load_kb()
    return {f.code: f.severity for f in check_profile(load_profile(str(path), kb=kb), kb, host)}


def row_key(facts: dict[str, str]) -> str:
    if facts["framework"] == "tensorflow":
        return f"nvcr.io/nvidia/tensorflow:{facts['release']}-{facts.get('flavour', 'tf2')}-py3"
    return f"nvcr.io/nvidia/pytorch:{facts['release']}-py3"


def test_banner_parser_reads_the_stored_banners() -> None:
    banners = parse_banners(BANNERS.read_text(encoding="utf-8"))
    assert banners == {"pytorch 24.02": {"release": "24.02", "framework": "pytorch", "builds": ["82611821"],
                                         "framework_version": "2.3.0a0+ebedce2"}}


def test_banner_parser_reads_the_shapes_banners_are_quoted_in() -> None:
    """Made-up releases and builds (not facts): a TensorFlow flavour, two builds of one release, a banner quoted
    without its build line, a log flattened onto one line."""
    text = ("================\n== TensorFlow ==\n================\nNVIDIA Release 98.01-tf2 (build 11)\n"
            "TensorFlow Version 9.1.0\nNVIDIA Release 98.01-tf2 (build 12)\nTensorFlow Version 9.1.0\n"
            "NVIDIA Release 98.02\nPyTorch Version 9.2.0a0+abc1234\n"
            "============= == PyTorch == ============= "
            "NVIDIA Release 98.03 (build 13) PyTorch Version 9.3.0a0+def5678\n")
    banners = parse_banners(text)
    assert banners["tensorflow 98.01-tf2"] == {"release": "98.01", "framework": "tensorflow", "flavour": "tf2",
                                               "builds": ["11", "12"], "framework_version": "9.1.0"}
    assert banners["pytorch 98.02"]["builds"] == [], "a banner quoted without its build line still names the build"
    assert banners["pytorch 98.03"]["framework_version"] == "9.3.0a0+def5678", "a log flattened onto one line"


def test_banners_that_disagree_keep_no_version() -> None:
    text = ("NVIDIA Release 24.02 (build 1)\nPyTorch Version 2.3.0a0+ebedce2\n"
            "NVIDIA Release 24.02 (build 2)\nPyTorch Version 2.3.0a0+0000000\n"
            "NVIDIA Release 24.01 (build 3)\nTriton Server Version 2.42.0\n")
    assert parse_banners(text) == {"pytorch 24.02": {"release": "24.02", "framework": "pytorch",
                                                     "builds": ["1", "2"]}}


def test_a_copied_banner_backs_no_row_field(kb: KnowledgeBase) -> None:
    """A banner quoted in a third party's README is a lead, not a source (issue 29): a row of its release leaves the
    framework build out unless an NVIDIA page or file states it, and never cites the copy."""
    checked = []
    for facts in parse_banners(BANNERS.read_text(encoding="utf-8")).values():
        row = kb.ngc(row_key(facts))
        if row is not None:
            assert row.framework_version in (None, facts["framework_version"]), row.key
            assert "kkbwilldo" not in row.source and not row.unverified, row.key
            checked.append((facts["release"], row.framework_version))
    assert checked == [("24.02", None)]


# tag -> (CUDA, Python, framework version, driver minimum), as NVIDIA's pages and files state them (None: not stated,
# or, for the driver, below the CUDA's own minimum). TensorFlow 24.06 has no row: its CUDA is not settled.
NEW_ROWS = {
    "tensorflow:24.02-tf2-py3": ("12.3.2", "3.10", None, "545"),
    "tensorflow:24.08-tf2-py3": ("12.6", "3.10", None, "560"),
    "tensorflow:25.02-tf2-py3": ("12.8.0", "3.12", None, None),
    "pytorch:24.02-py3": ("12.3.2", "3.10", None, "545"),
}
THIRD_PARTY = ("gperdrizet", "aovift", "kkbwilldo", "llama_cpp_sys")


@pytest.mark.parametrize("tag", sorted(NEW_ROWS))
def test_rows_after_2312(kb: KnowledgeBase, tag: str) -> None:
    """Verified from NVIDIA's documents alone: CUDA and driver from the month's Triton notes, Python from Triton's build
    files; the GPU floor is left out (only Triton's own is stated), and no third-party file is cited."""
    row = kb.ngc(f"nvcr.io/nvidia/{tag}")
    assert row is not None and not row.unverified and row.cc_min is None
    assert (row.cuda, row.python, row.framework_version, row.driver_min) == NEW_ROWS[tag]
    assert "triton-inference-server/release-notes" in row.source and "ngc-triton-backends.txt" in row.source
    assert not [name for name in THIRD_PARTY if name in row.source], row.source


def test_tensorflow_2406_has_no_row(tmp_path: Path) -> None:
    """Triton's 24.06 notes say CUDA 12.5.0, MXNet's 12.4.1; only third-party files said which the TensorFlow image
    has, so the release has no row and check warns ngc-unknown."""
    base = "nvcr.io/nvidia/tensorflow:24.06-tf2-py3"
    assert load_kb().ngc(base) is None
    body = f"name: p\nbase: {base}\ngpu: {{targets: [A100]}}\n"
    assert codes(tmp_path, body, HostSpec(gpus=["A100"])).get("ngc-unknown") == "warning"


@pytest.mark.parametrize("base", ["nvcr.io/nvidia/pytorch:24.12-py3", "nvcr.io/nvidia/tensorflow:24.12-tf2-py3",
                                  "nvcr.io/nvidia/tensorflow:25.01-tf2-py3"])
def test_releases_only_unnamed_excerpts_describe_have_no_row(tmp_path: Path, base: str) -> None:
    """Their Python (and build) appeared only in search-index excerpts that name no file: no row, so check warns
    ngc-unknown, not an input error."""
    assert load_kb().ngc(base) is None
    body = f"name: p\nbase: {base}\ngpu: {{targets: [A100]}}\n"
    assert codes(tmp_path, body, HostSpec(gpus=["A100"])).get("ngc-unknown") == "warning"


def test_tensorflow_2502_profile_gets_a_verdict(tmp_path: Path) -> None:
    """The last TensorFlow container, written the way a user writes it (no cuda/python): the profile takes CUDA 12.8
    and Python 3.12 from its row, no ngc-unknown; the driver is held to CUDA 12.8's minimum (570.26), since the
    month's Triton sentence (560) is below it."""
    body = f"name: tf\nbase: {TF2502}\ngpu: {{targets: [A100]}}\n"
    path = tmp_path / "tf.yaml"
    path.write_text(body)
    profile = plan_image(load_profile(str(path)), load_kb()).profile  # planning fills them (plan.defaults)
    assert (profile.cuda, profile.python) == ("12.8", "3.12")
    ok = codes(tmp_path, body, HostSpec(gpus=["A100"], driver="570.86.10"))
    assert "ngc-unknown" not in ok and "error" not in ok.values()
    assert "ngc-driver-too-old" in codes(tmp_path, body, HostSpec(gpus=["A100"], driver="565.57.01"))
    pinned = codes(tmp_path, body + "frameworks: {tensorflow: \"2.16.1\"}\n", HostSpec(gpus=["A100"]))
    assert "ngc-framework-differs" not in pinned, "no NVIDIA page states 25.02's TensorFlow: no build to compare"


def test_tensorflow_2402_driver_and_forward_compat(tmp_path: Path) -> None:
    body = "name: tf\nbase: nvcr.io/nvidia/tensorflow:24.02-tf2-py3\ngpu: {targets: [A100]}\n"
    assert "ngc-driver-too-old" in codes(tmp_path, body, HostSpec(gpus=["A100"], driver="530.30.02"))
    assert codes(tmp_path, body, HostSpec(gpus=["A100"], driver="535.104.05")).get(
        "ngc-driver-forward-compat") == "warning"


def test_refresh_command_prints_the_banners(capsys: pytest.CaptureFixture[str]) -> None:
    from tools.kbrefresh import ngc_notes

    assert ngc_notes.main(["--banner", str(BANNERS)]) == 0
    out = capsys.readouterr().out
    assert "framework_version: 2.3.0a0+ebedce2" in out and "builds:" in out
    assert ngc_notes.main(["--banner"]) == 2, "a missing file argument is a usage error"
