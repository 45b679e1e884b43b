"""Issue #32, item 7: the `docker build` line `envgen render` prints runs, as printed, with the Docker CLI found
here. Before, it printed `docker build ... --secret ...`, which the Docker CLI 28 on PATH here (no buildx plugin)
refuses (`unknown flag: --secret`; with DOCKER_BUILDKIT=1, `buildx component is missing`).

Only the image name is changed before running it: the printed tag is in the default `envgen` namespace, which is
the user's; the suite builds under its own namespace (tests/isolation.py)."""

from __future__ import annotations

import shlex
import subprocess
import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.conftest import session_namespace

if TYPE_CHECKING:
    from docker import DockerClient

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_printed_build_line_runs_here(tmp_path: Path, docker_client: DockerClient) -> None:
    out = tmp_path / "ctx"
    rendered = subprocess.run([sys.executable, "-m", "envgen", "render", "cpu-minimal", "-o", str(out)],
                              capture_output=True, text=True, timeout=300)
    assert rendered.returncode == 0, rendered.stderr
    line = next(text.removeprefix("build it with: ") for text in rendered.stdout.splitlines()
                if text.startswith("build it with: "))
    words = shlex.split(line)
    tag_at = words.index("-t") + 1
    assert words[tag_at].startswith("envgen/cpu-minimal:")
    words[tag_at] = f"{session_namespace()}/printed-build:{uuid.uuid4().hex[:12]}"
    try:  # through a shell, as a user pastes it (a leading DOCKER_BUILDKIT=1 is an assignment)
        built = subprocess.run(" ".join(shlex.quote(w) if i else w for i, w in enumerate(words)), shell=True,
                               capture_output=True, text=True, timeout=900)
        assert built.returncode == 0, built.stderr[-3000:]
        image = docker_client.images.get(words[tag_at])
        assert image.labels["io.envgen.profile"] == "cpu-minimal"
    finally:
        subprocess.run(["docker", "rmi", "-f", words[tag_at]], capture_output=True, check=False)
