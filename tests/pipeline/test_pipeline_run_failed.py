"""Issue 38 (smaller): after a build whose smoke test failed, `envgen run PROFILE` said "run `envgen build`", which
fails the same way. Built here for real: python-magic 0.4.27 imports libmagic at import time, which
debian:bookworm-slim does not hold, so the probe's import check fails; `run` then names the failure, says a new
build fails alike, and gives the untagged image's ID to look inside."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from envgen.errors import ImageNotValidated, SmokeFailed
from envgen.pipeline.build import build
from envgen.pipeline.run import run
from tests.pipeline.conftest import minimal_profile


def test_run_after_a_failed_smoke_test_says_what_to_do_instead_of_building_again(
        envgen_home: Path, write_profile: Callable[[str, str], str], cleanup_tags: list[str]) -> None:
    name = write_profile("pipe-run-failed", minimal_profile('"python-magic==0.4.27"'))
    with pytest.raises(SmokeFailed) as built:
        build(name)
    short = built.value.message.split("image ", 1)[1][:19].replace("sha256:", "")[:12]
    cleanup_tags.append(short)
    with pytest.raises(ImageNotValidated) as info:
        run(name, command=["true"])
    text = info.value.one_line()
    assert "failed its smoke test" in text and "magic" in text, text
    assert f"`envgen build {name}` would fail the same way" in text, text
    assert f"`envgen run --force {short}`" in text and f"`envgen smoke {short}`" in text, text
