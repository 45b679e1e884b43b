"""Issue 44 item 1 on the real engine: `envgen images --size` of a built image (layers from the engine's history,
distributions from the RECORD files read in a container of it, largest files, what could be left out), and the
build's last line: the image's size against the previous build of the same profile. The minimal profile of
test_pipeline_minimal: both builds take the base and environment layers from the build cache."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from envgen.errors import InputError
from envgen.pipeline.build import BuildOutcome, build
from envgen.pipeline.sizes import report_text, size_report
from tests.pipeline.conftest import alias, minimal_profile


@pytest.fixture(scope="module")
def two_builds(write_profile: Callable[[str, str], str], cleanup_tags: list[str]) -> tuple[BuildOutcome, BuildOutcome]:
    name = write_profile("pipe-size", minimal_profile('"six==1.16.0"'))
    first = build(name)
    cleanup_tags += [first.tag, alias(name)]
    write_profile("pipe-size", minimal_profile('"six==1.17.0"'))
    second = build(name)
    cleanup_tags.append(second.tag)
    return first, second


def test_the_build_says_its_size_against_the_previous_build(two_builds: tuple[BuildOutcome, BuildOutcome]) -> None:
    first, second = two_builds
    assert first.image_id != second.image_id
    assert first.summary().splitlines()[-1].startswith("image size: ")
    assert "no previous build of pipe-size" in first.summary()
    last = second.summary().splitlines()[-1]
    assert last.startswith("image size: ") and f"previous build of pipe-size, {first.image_id[:19]}: " in last, last


def test_size_report_of_a_profile_reads_layers_distributions_and_files(
        two_builds: tuple[BuildOutcome, BuildOutcome]) -> None:
    _, second = two_builds
    report = size_report("pipe-size")
    assert report["image"] == second.image_id
    total = sum(layer["size_bytes"] for layer in report["layers"])
    assert abs(total - report["size_bytes"]) <= report["size_bytes"] * 0.01, (total, report["size_bytes"])
    steps = [layer["step"] for layer in report["layers"]]
    assert any("/opt/env /opt/env" in step for step in steps), steps
    dists = {d["name"]: d["size_bytes"] for d in report["distributions"]}
    assert dists.get("six-1.17.0", 0) > 10_000 and "six-1.16.0" not in dists, dists
    sizes = [f["size_bytes"] for f in report["files"]]
    assert len(sizes) == 15 and sizes == sorted(sizes, reverse=True) and sizes[0] > 1_000_000
    leave = report["could_leave_out"]
    assert set(leave) == {"__pycache__", "tests", "headers", "static libraries"} and leave["__pycache__"] > 0
    text = report_text(report)
    assert "layers (oldest first):" in text and "six-1.17.0" in text and "nothing removed" in text


def test_size_report_of_an_unknown_target_is_one_input_error() -> None:
    with pytest.raises(InputError, match="neither an image on this engine nor a profile"):
        size_report("no-such-image-or-profile")
