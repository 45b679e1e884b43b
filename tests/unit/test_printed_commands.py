"""Issue #32, item 1 and 6: every `envgen ...` command that envgen prints names the profile so that it runs as
printed (a profile given by path is named by that path, not by its `name:`), every message names the same lock
file (the one beside the profile's file), and a conda profile without a lock is told so.

Each test failed before: check printed `envgen lock hf-finetune` for `envgen check hf-finetune.yaml` (no profile
named so: `error: no profile named 'hf-finetune'`), the build said `no inj3.lock.txt` where check said
`inj.lock.txt`, and a conda profile got no `lock-missing`."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from envgen.docker import BuilderInfo
from envgen.profile import find_profile

PROFILE = """\
name: inj3
base: debian:bookworm-slim
installer: pip
python: "3.11"
local_base: true
gpu:
  required: false
packages:
  pip:
    - six==1.16.0
    - rich>=13
"""

CONDA = """\
name: conda-user
base: debian:bookworm-slim
installer: conda
python: "3.11"
local_base: true
gpu:
  required: false
packages:
  conda:
    - numpy=1.26.4
"""

# The commands that take a profile as their first argument.
PROFILE_COMMANDS = {"check", "lock", "build", "render", "push", "pull", "smoke", "run", "show", "export", "save"}


def envgen(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "envgen", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def printed_commands(text: str) -> list[list[str]]:
    """Each `envgen ...` command between backticks, split as a shell splits it."""
    return [shlex.split(m) for m in re.findall(r"`(envgen [^`]+)`", text)]


@pytest.mark.parametrize("given", ["inj.yaml", "./inj.yaml", "sub/inj.yaml"])
def test_check_names_the_profile_as_given(tmp_path: Path, given: str, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / given
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(PROFILE)
    result = envgen("check", given, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    commands = printed_commands(result.stdout)
    assert commands, result.stdout
    monkeypatch.chdir(tmp_path)  # lock-missing and pip-floating each print one
    for argv in commands:
        if argv[1:3] == ["doctor", "--profile"]:  # the download line: doctor takes the profile as an option
            argv = [argv[0], "doctor", *argv[3:]]
        assert argv[1] in PROFILE_COMMANDS | {"doctor"}, argv
        found = find_profile(argv[2])  # from the directory the user ran in, as printed
        assert found.path == target.resolve(), (argv, found)
    assert "inj3" not in {argv[2] for argv in commands}


def test_check_and_build_name_the_same_lock_file(tmp_path: Path) -> None:
    (tmp_path / "inj.yaml").write_text(PROFILE)
    check = envgen("check", "inj.yaml", "--json", cwd=tmp_path)
    missing = next(f for f in json.loads(check.stdout) if f["code"] == "lock-missing")
    assert "(inj.lock.txt)" in missing["message"]
    from envgen.pipeline.build import check_locked_base  # what `envgen build` says before building
    from envgen.profile import load_profile

    said: list[str] = []
    check_locked_base(None, load_profile(str(tmp_path / "inj.yaml")), said.append)  # type: ignore[arg-type]
    assert said and "no inj.lock.txt" in said[0] and f"envgen lock {tmp_path / 'inj.yaml'}" in said[0]


def test_conda_profile_without_a_lock_is_told(tmp_path: Path) -> None:
    (tmp_path / "conda-user.yaml").write_text(CONDA)
    check = envgen("check", "conda-user.yaml", "--json", cwd=tmp_path)
    codes = {f["code"]: f for f in json.loads(check.stdout)}
    assert "lock-missing" in codes, check.stdout
    assert "conda-user.conda.txt" in codes["lock-missing"]["message"]
    assert "envgen lock conda-user.yaml" in codes["lock-missing"]["fix"]


def test_builtin_conda_profile_gets_lock_missing() -> None:
    check = envgen("check", "modern-a100", "--json", cwd=Path.cwd())
    assert "lock-missing" in {f["code"] for f in json.loads(check.stdout)}


@pytest.mark.parametrize(("entries", "line", "field"), [
    (["torch==2.2.2", "-e ."], 11, "packages.pip.1"),
    (["torch==2.2.2", "numpy", "-r other.txt"], 12, "packages.pip.2"),
    (["numpy", "torch==2.2.2", "six", "-e ."], 13, "packages.pip.3"),
    (["-e ."], 10, "packages.pip.0"),
])
def test_error_names_the_line_as_written_after_a_framework_is_lifted(tmp_path: Path, entries: list[str], line: int,
                                                                      field: str) -> None:
    """Item 2: the framework line is lifted out of packages.pip before validation; the entries after it are still
    named by their own line and index (was: `t4.yaml:9: field 'packages.pip.0'` for `-e .` on line 10)."""
    pip = "".join(f"    - {json.dumps(entry)}\n" for entry in entries)
    text = PROFILE.split("packages:")[0] + "packages:\n  pip:\n" + pip
    (tmp_path / "t4.yaml").write_text(text)
    assert text.splitlines()[line - 1].strip() == f"- {json.dumps(entries[-1])}"  # the offending line, 1-based
    result = envgen("check", "t4.yaml", cwd=tmp_path)
    assert result.returncode == 2
    assert f"t4.yaml:{line}: field '{field}'" in result.stderr, result.stderr


@pytest.mark.parametrize(("kind", "starts", "secret", "dockerfile"), [
    ("buildx", "docker buildx build --load", True, "Dockerfile"),
    ("buildkit-legacy", "DOCKER_BUILDKIT=1 /opt/old/docker build", True, "Dockerfile"),
    ("classic", "docker build", False, "Dockerfile.classic"),
])
def test_printed_line_per_builder(tmp_path: Path, kind: str, starts: str, secret: bool, dockerfile: str) -> None:
    """Item 7: the line `envgen render` prints for the builder detect_builder chose: the three forms (BuilderInfo is
    a plain value: no CLI is faked; tests/pipeline/test_pipeline_printed_build.py runs the line here).
    Before, the line was `docker build ... --secret` whatever the CLI."""
    from envgen.render.core import RenderResult, docker_build_command

    result = RenderResult(dir=tmp_path, files=("Dockerfile",), profile_hash="p", content_hash="c",
                          tag="envgen/x:c", build_args={"PIP_INDEX_URL": ""}, secrets={"ca_bundle": "/etc/ca.pem"})
    cli = {"buildx": "docker", "buildkit-legacy": "/opt/old/docker", "classic": None}[kind]
    line, note = docker_build_command(result, BuilderInfo(kind, cli, "x", "why"))  # type: ignore[arg-type]
    assert line.startswith(starts), line
    assert ("--secret id=ca_bundle,src=/etc/ca.pem" in line) is secret
    assert f"-f {tmp_path / dockerfile} " in line
    assert (note is None) is secret
