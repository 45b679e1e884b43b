"""Routes a firewall closes: micromamba (github.com) and torch's wheels (download.pytorch.org) each have a
mirrors. key that becomes a build arg (never a rendered file: the hash stays), and `envgen render` prints the
`docker build` line with the --build-args a plain build of the context needs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from envgen.config import UserConfig
from envgen.kb import load_kb
from envgen.plan.image import plan_image
from envgen.profile import load_profile
from envgen.profile.model import Mirrors
from envgen.render.core import render_in_memory
from envgen.render.scripts import build_scripts

MAMBA = "https://mirror.example.cn/micromamba/1.5.10-0/micromamba-linux-64"
TORCH = "https://mirror.example.cn/pytorch-wheels/"


def _ctx(name: str, mirrors: Mirrors | None = None):  # type: ignore[no-untyped-def]
    return render_in_memory(plan_image(load_profile(name), load_kb()), UserConfig(mirrors=mirrors or Mirrors()))


def test_micromamba_mirror_is_the_micromamba_url_build_arg() -> None:
    plain, mirrored = _ctx("legacy-maxwell"), _ctx("legacy-maxwell", Mirrors(micromamba_url=MAMBA))
    assert mirrored.plan.build_args["MICROMAMBA_URL"] == MAMBA
    assert "MICROMAMBA_URL" not in plain.plan.build_args
    assert mirrored.content_hash == plain.content_hash


def test_pytorch_wheels_mirror_replaces_download_pytorch_org() -> None:
    plain, mirrored = _ctx("modern-a100"), _ctx("modern-a100", Mirrors(pytorch_wheels=TORCH))
    assert mirrored.plan.build_args["PYTORCH_WHEELS"] == TORCH.rstrip("/")
    assert mirrored.content_hash == plain.content_hash
    text = plain.files["Dockerfile"].decode()
    assert "download.pytorch.org" in text
    for line in text.splitlines():  # every use of the host goes through the build arg
        if "https://download.pytorch.org/whl" in line and "ARG" not in line:
            assert "${PYTORCH_WHEELS:-https://download.pytorch.org/whl}" in line, line


def test_pytorch_mirror_shell_expands_to_the_mirror() -> None:
    text = _ctx("modern-a100").files["Dockerfile"].decode()
    word = next(w for w in text.split() if "${PYTORCH_WHEELS:-" in w)
    url = word[word.index("${PYTORCH_WHEELS:-"):].split('"')[0].rstrip(";")
    out = subprocess.run(["sh", "-c", f'PYTORCH_WHEELS={TORCH.rstrip("/")}; echo "{url}"'], capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out.startswith(TORCH.rstrip("/") + "/"), out


def test_render_prints_the_docker_build_line(tmp_path: Path) -> None:
    profile = tmp_path / "mamba.yaml"
    text = Path("profiles/legacy-maxwell.yaml").read_text() if Path("profiles/legacy-maxwell.yaml").exists() else ""
    assert text
    profile.write_text(text.replace("name: legacy-maxwell", "name: mamba")
                       + f"mirrors:\n  micromamba_url: {MAMBA}\n  apt_mirror: http://mirror.example.cn/ubuntu\n")
    out = subprocess.run([sys.executable, "-m", "envgen", "render", str(profile), "-o", str(tmp_path / "ctx")],
                         capture_output=True, text=True, env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin",
                                                              "PYTHONPATH": str(Path.cwd())})
    assert out.returncode == 0, out.stderr
    assert "docker build" in out.stdout
    assert f"--build-arg MICROMAMBA_URL={MAMBA}" in out.stdout
    assert "--build-arg APT_MIRROR=http://mirror.example.cn/ubuntu" in out.stdout


ROUTE_ARGS = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST", "PIP_NO_INDEX", "ENVGEN_FRAMEWORK_INDEX",
              "PYTORCH_WHEELS", "APT_MIRROR", "MICROMAMBA_URL", "CONDA_CHANNEL_ALIAS", "CONDA_CHANNEL_MIRRORS")


def _stages(text: str) -> list[list[str]]:
    stages: list[list[str]] = []
    for line in text.replace("\\\n", " ").splitlines():
        if line.startswith("FROM "):
            stages.append([])
        if stages:
            stages[-1].append(line)
    return stages


@pytest.mark.parametrize("name", ["legacy-maxwell", "modern-a100", "a100-pypi", "cpu-smoke", "ngc-tensorflow"])
@pytest.mark.parametrize("dockerfile", ["Dockerfile", "Dockerfile.classic"])
def test_every_stage_declares_the_route_args_it_reads(name: str, dockerfile: str) -> None:
    """A build arg is scoped to the stage that declares it (`FROM build AS extras` inherits none): a stage
    that reads one without its own ARG never sees the mirror."""
    for stage in _stages(_ctx(name).files[dockerfile].decode()):
        declared = {line.split()[1].split("=")[0] for line in stage if line.startswith("ARG ")}
        body = " ".join(line for line in stage if line.startswith("RUN "))
        # ...and what the build scripts these RUNs run read (envgen/sh/: pip.sh reads PIP_INDEX_URL, ...)
        body += " ".join(data.decode() for data in build_scripts([body]).values()).replace("\n", " ")
        for arg in ROUTE_ARGS:
            if "${" + arg in body or "$" + arg + " " in body:
                assert arg in declared, (stage[0], arg)
