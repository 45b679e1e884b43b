"""An export that runs the local image (devcontainer, compose, apptainer's docker-daemon) says when this host does
not hold that image yet, with the command that builds it; the devcontainer lands where VS Code looks for it."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path


def test_devcontainer_of_an_unbuilt_profile_says_build_it_first(
        envgen_home: Path, write_profile: Callable[[str, str], str], tmp_path: Path) -> None:
    name = write_profile("pipe-never-built", """\
        base: debian:bookworm-slim
        local_base: true
        installer: pip
        python: "3.11"
        gpu: {required: false}
        """)
    out = subprocess.run([sys.executable, "-m", "envgen", "export", name, "--format", "devcontainer", "-o",
                          str(tmp_path)], capture_output=True, text=True, env=dict(os.environ), timeout=120)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / ".devcontainer" / "devcontainer.json").is_file()
    assert f"is not built here yet: run `envgen build {name}`" in out.stderr
