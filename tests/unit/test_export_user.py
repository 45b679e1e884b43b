"""Issue #32, item 10: exports as a user runs them from the project directory. A second export over a hand-edited
docker-compose.yml replaced it silently; compose mounted `./` (the output directory, as compose reads a relative
source from the compose file's folder) instead of the project; render and export wrote profiles that `check`
rejects without a word."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

BAD = """\
name: bad
base: debian:bookworm-slim
local_base: true
installer: pip
python: "3.12"
gpu:
  required: false
"""


def envgen(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "envgen", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=180)


def test_compose_mounts_the_project_and_keeps_an_edited_file(tmp_path: Path) -> None:
    first = envgen("export", "cpu-minimal", "--format", "compose", "-o", "build/exports", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    compose = tmp_path / "build" / "exports" / "docker-compose.yml"
    tool = shutil.which("docker-compose") or pytest.fail("docker-compose is not installed (scripts/host-setup)")
    config = subprocess.run([tool, "-f", str(compose), "config"], capture_output=True, text=True, timeout=120)
    assert config.returncode == 0, config.stderr
    [volume] = yaml.safe_load(config.stdout)["services"]["cpu-minimal"]["volumes"]
    source = volume["source"] if isinstance(volume, dict) else volume.split(":")[0]
    assert Path(source) == tmp_path  # the project, not build/exports
    again = envgen("export", "cpu-minimal", "--format", "compose", "-o", "build/exports", cwd=tmp_path)
    assert again.returncode == 0, again.stderr  # the same contents: nothing to lose
    compose.write_text(compose.read_text() + "# my own service settings\n")
    refused = envgen("export", "cpu-minimal", "--format", "compose", "-o", "build/exports", cwd=tmp_path)
    assert refused.returncode == 2 and "exists with other contents" in refused.stderr and "--force" in refused.stderr
    assert compose.read_text().endswith("# my own service settings\n")
    forced = envgen("export", "cpu-minimal", "--format", "compose", "-o", "build/exports", "--force", cwd=tmp_path)
    assert forced.returncode == 0 and "# my own" not in compose.read_text()


@pytest.mark.parametrize("command", [["render", "bad.yaml", "-o", "out"],
                                     ["export", "bad.yaml", "--format", "devcontainer", "-o", "out"]])
def test_writing_a_profile_check_rejects_says_so(tmp_path: Path, command: list[str]) -> None:
    (tmp_path / "bad.yaml").write_text(BAD)
    result = envgen(*command, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "note: profile 'bad' fails its check ([python-base-mismatch])" in result.stderr
    assert "`envgen check bad.yaml`" in result.stderr
