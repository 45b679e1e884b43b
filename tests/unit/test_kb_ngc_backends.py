"""NGC rows from NVIDIA's pages and files alone (issue 29): the Python of an NGC framework image read from NVIDIA's
Triton build files (the backend copies the framework out of that month's image from /usr/local/lib/pythonX.Y), the
parser on the stored lines and on made-up shapes, every row against them, and no row left `unverified`."""

from __future__ import annotations

import pytest

from envgen.kb import KnowledgeBase
from tools.kbrefresh import ngc_notes
from tools.kbrefresh.ngc_backends import parse_backends

BACKENDS = ngc_notes.UPSTREAM / "ngc-triton-backends.txt"
SERVER = "== triton-inference-server/server r{rel} " + "a" * 40 + " build.py\n"
TF_BACKEND = "== triton-inference-server/tensorflow_backend r{rel} " + "b" * 40 + " CMakeLists.txt\n"


def row_key(facts: dict[str, str]) -> str:
    if facts["framework"] == "tensorflow":
        return f"nvcr.io/nvidia/tensorflow:{facts['release']}-tf2-py3"
    return f"nvcr.io/nvidia/pytorch:{facts['release']}-py3"


def test_no_ngc_row_is_unverified(kb: KnowledgeBase) -> None:
    """The issue asks at most 5; every row now rests on NVIDIA's pages and files."""
    assert [row.key for row in kb.ngc_releases if row.unverified] == []


def test_the_stored_backend_lines_give_each_release_its_python() -> None:
    found = {key: facts["python"] for key, facts in parse_backends(BACKENDS.read_text(encoding="utf-8")).items()}
    assert found == {"pytorch 22.12": "3.8", "pytorch 23.12": "3.10", "pytorch 24.02": "3.10",
                     "tensorflow 22.12": "3.8", "tensorflow 23.01": "3.8", "tensorflow 23.10": "3.10",
                     "tensorflow 23.12": "3.10", "tensorflow 24.02": "3.10", "tensorflow 24.06": "3.10",
                     "tensorflow 24.08": "3.10", "tensorflow 25.02": "3.12"}


def test_every_release_read_backs_its_row(kb: KnowledgeBase) -> None:
    """Each row of a release read has that Python and cites the backend line; TensorFlow 24.06 alone has no row (its
    CUDA is not settled by anything NVIDIA wrote)."""
    no_row = []
    for facts in parse_backends(BACKENDS.read_text(encoding="utf-8")).values():
        row = kb.ngc(row_key(facts))
        if row is None:
            no_row.append(row_key(facts))
            continue
        assert row.python == facts["python"] and facts["page"] in row.source, row.key
    assert no_row == ["nvcr.io/nvidia/tensorflow:24.06-tf2-py3"]


def test_the_parser_needs_the_server_branch_to_name_the_image() -> None:
    """Made-up releases (not facts): a backend line counts only where the server branch of the same release builds
    against that framework's image of its own release; a tf1 path is not the tf2 image's; two Pythons keep none."""
    python = '69: set(TRITON_TENSORFLOW_PYTHON_PATH "/usr/local/lib/python3.9/dist-packages/tensorflow")\n'
    image = '700: image = "nvcr.io/nvidia/tensorflow:{}-tf2-py3".format(\n'
    text = (SERVER.format(rel="97.01") + '75: "97.01",  # upstream container\n' + image
            + TF_BACKEND.format(rel="97.01") + '65: set(X "/usr/local/lib/python3.8/dist-packages/tensorflow_core")\n'
            + python
            + SERVER.format(rel="97.02") + '75: "97.01",  # upstream container\n' + image
            + TF_BACKEND.format(rel="97.02") + python
            + SERVER.format(rel="97.03") + '76:    "upstream_container_version": "97.03",\n' + image
            + TF_BACKEND.format(rel="97.03") + python + python.replace("3.9", "3.11"))
    found = parse_backends(text)
    assert list(found) == ["tensorflow 97.01"]
    assert found["tensorflow 97.01"]["python"] == "3.9"
    assert found["tensorflow 97.01"]["page"].endswith("/tensorflow_backend/blob/" + "b" * 40 + "/CMakeLists.txt#L69")


# tag -> (CUDA, Python, driver minimum, GPU floor): the month's Triton notes (or the release's own cut page) and
# Triton's build files; the framework version, cuDNN and Ubuntu are on no NVIDIA page or file read
TRITON_BUILT = {
    "tensorflow:23.12-tf2-py3": ("12.3.2", "3.10", "545", "6.0"),
    "tensorflow:23.10-tf2-py3": ("12.2.2", "3.10", "535", "6.0"),
    "tensorflow:23.01-tf2-py3": ("12.0.1", "3.8", "525", "6.0"),
    "tensorflow:22.12-tf2-py3": ("11.8.0", "3.8", "520", "6.0"),
    "pytorch:23.12-py3": ("12.3.2", "3.10", "545", "6.0"),
    "pytorch:22.12-py3": ("11.8.0", "3.8", "520", "6.0"),
}


@pytest.mark.parametrize("tag", sorted(TRITON_BUILT))
def test_rows_from_triton_notes_and_build_files(kb: KnowledgeBase, tag: str) -> None:
    row = kb.ngc(f"nvcr.io/nvidia/{tag}")
    assert row is not None and not row.unverified
    assert (row.cuda, row.python, row.driver_min, row.cc_min) == TRITON_BUILT[tag]
    assert (row.framework_version, row.cudnn, row.ubuntu) == (None, None, None)
    assert "ngc-triton-backends.txt" in row.source


def test_tensorflow_2310_has_the_five_branches_its_month_lists(kb: KnowledgeBase) -> None:
    """Triton's 23.10 notes list 450.51, 470.57, 510.47, 525.85 and 535.86 (the row held three before)."""
    row = kb.ngc("nvcr.io/nvidia/tensorflow:23.10-tf2-py3")
    assert row is not None and row.datacenter_drivers == ["450.51", "470.57", "510.47", "525.85", "535.86"]


def test_tensorflow_2104_is_its_page_as_stored(kb: KnowledgeBase) -> None:
    """Every field from the stored 21.04 page; the TensorFlow version it does not give for the tf2 image is left
    out."""
    row = kb.ngc("nvcr.io/nvidia/tensorflow:21.04-tf2-py3")
    assert row is not None and not row.unverified
    assert (row.cuda, row.cudnn, row.python, row.ubuntu, row.driver_min) == ("11.3.0", "8.2.0.41", "3.8", "20.04",
                                                                             "465.19.01")
    assert row.framework_version is None and row.cc_min is None


def test_refresh_command_prints_the_backend_facts(capsys: pytest.CaptureFixture[str]) -> None:
    assert ngc_notes.main(["--triton-backends", str(BACKENDS)]) == 0
    out = capsys.readouterr().out
    assert "framework: tensorflow" in out and "python: '3.12'" in out
