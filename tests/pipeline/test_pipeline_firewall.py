"""The first build behind a firewall: no public registry answers on this machine, which is the everyday case
behind a national firewall. `envgen build` of a profile whose base is not here says so in one line before
any build step runs, naming the image and its registry and the ways out; not BuildKit's raw resolver error."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from envgen.errors import RegistryError
from envgen.pipeline.build import build


def test_unreachable_base_registry_is_one_line_before_any_step(
        envgen_home: Path, write_profile: Callable[[str, str], str]) -> None:
    name = write_profile("pipe-firewall", """\
        base: ubuntu:18.04
        installer: pip
        python: "3.6"
        gpu: {required: false}
        packages:
          pip: ["six==1.16.0"]
        """)
    lines: list[str] = []
    with pytest.raises(RegistryError) as info:
        build(name, echo=lines.append)
    err = info.value
    text = err.one_line()
    assert "ubuntu:18.04" in text and "docker.io" in text and "cannot be reached" in text, text
    assert "mirrors.registries" in (err.fix or "") and "envgen load" in (err.fix or "")
    assert "local_base" in (err.fix or "")
    assert not any(line.startswith("[") for line in lines), lines  # no build step ran
    assert len(text.splitlines()) == 1
