"""mirrors.apt_mirror on the apt sources of Debian 11/12/13 and Ubuntu 18.04-24.04 as their official images ship them
(written out here from the images' build sources, tests/fixtures/apt-sources/README.md) (one-line and deb822,
primary and security archives; NVIDIA's cuda.list untouched): the build script the Dockerfiles and `envgen lock`
run (templates/sh/apt-mirror.sh), run by the real sh and sed; a mirror that matches nothing warns; an https
mirror on a base without CA certificates falls back to http."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from envgen.kb import load_kb
from envgen.lock.lock_base import apt_script
from envgen.paths import build_scripts_dir
from envgen.plan.image import plan_image
from envgen.profile import load_profile
from envgen.render.core import render_in_memory

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "apt-sources"
RELEASES = ["debian-11", "debian-12", "debian-13", "ubuntu-18.04", "ubuntu-20.04", "ubuntu-22.04", "ubuntu-24.04"]
OFFICIAL = re.compile(r"https?://(deb\.debian\.org|security\.debian\.org|archive\.ubuntu\.com|security\.ubuntu\.com)/")


SCRIPT = build_scripts_dir() / "apt-mirror.sh"


def _run(apt: Path, mirror: str, ca: Path | None = None) -> subprocess.CompletedProcess[str]:
    ca_files = (str(ca),) if ca else (str(apt / "no-such-ca.crt"),)
    return subprocess.run(["sh", str(SCRIPT), mirror, str(apt), *ca_files], capture_output=True, text=True,
                          check=True)


def _uris(apt: Path) -> list[str]:
    """Every source URI apt would use (deb lines and deb822 URIs:), comments left out."""
    out = []
    for path in sorted(apt.rglob("*")):
        if path.suffix not in (".list", ".sources"):
            continue
        for line in path.read_text().splitlines():
            words = line.split()
            if line.startswith("deb "):
                out.append(next(w for w in words[1:] if not w.startswith("[")))
            elif line.startswith("URIs:"):
                out += words[1:]
    return out


@pytest.mark.parametrize("release", RELEASES)
def test_every_official_source_points_at_the_mirror(release: str, tmp_path: Path) -> None:
    apt = tmp_path / "apt"
    shutil.copytree(FIXTURES / release, apt)
    before = _uris(apt)
    assert any(OFFICIAL.match(u) for u in before)
    distro = release.split("-")[0]
    mirror = f"http://mirror.example.cn/{distro}"
    result = _run(apt, mirror + "/")
    after = _uris(apt)
    assert "warning" not in result.stderr
    for old, new in zip(before, after, strict=True):
        if OFFICIAL.match(old):
            security = "security" in old and distro == "debian"
            assert new.rstrip("/") == (f"{mirror}-security" if security else mirror), (old, new)
        else:
            assert new == old  # NVIDIA's repository and anything else is left alone
    assert not any(OFFICIAL.match(u) for u in after)


def test_a_mirror_that_matches_nothing_warns(tmp_path: Path) -> None:
    apt = tmp_path / "apt"
    (apt / "sources.list.d").mkdir(parents=True)
    (apt / "sources.list").write_text("deb http://mirrors.internal/debian bookworm main\n")
    result = _run(apt, "http://mirror.example.cn/debian")
    assert "matched no apt source" in result.stderr


def test_https_mirror_without_ca_certificates_uses_http(tmp_path: Path) -> None:
    apt = tmp_path / "apt"
    shutil.copytree(FIXTURES / "debian-12", apt)
    result = _run(apt, "https://mirror.example.cn/debian")
    assert "no CA certificates" in result.stderr
    assert "URIs: http://mirror.example.cn/debian/" in (apt / "sources.list.d" / "debian.sources").read_text()
    ca = tmp_path / "ca.crt"
    ca.write_text("x")
    shutil.rmtree(apt)
    shutil.copytree(FIXTURES / "debian-12", apt)
    result = _run(apt, "https://mirror.example.cn/debian", ca=ca)
    assert "URIs: https://mirror.example.cn/debian/" in (apt / "sources.list.d" / "debian.sources").read_text()


@pytest.mark.parametrize("name", ["legacy-maxwell", "modern-a100"])
def test_the_dockerfile_runs_this_substitution(name: str) -> None:
    """Every apt RUN of both variants runs apt-install.sh with APT_MIRROR declared; the context ships it and
    apt-mirror.sh as they are here; apt-install.sh hands this script the mirror, /etc/apt and the CA files
    (the base's and the proxy's secret)."""
    files = render_in_memory(plan_image(load_profile(name), load_kb())).files
    for variant in ("Dockerfile", "Dockerfile.classic"):
        text = files[variant].decode()
        runs = text.count("sh /opt/envgen/sh/apt-install.sh")  # the RUNs (its bind mounts name it too)
        assert "apt-get" not in text and text.count("ARG APT_MIRROR\n") == runs >= 1
    for script in ("apt-install.sh", "apt-mirror.sh", "lib.sh"):
        assert files[f"envgen/sh/{script}"] == (build_scripts_dir() / script).read_bytes()
    install = (build_scripts_dir() / "apt-install.sh").read_text()
    assert ('sh "$here/apt-mirror.sh" "$APT_MIRROR" /etc/apt /etc/ssl/certs/ca-certificates.crt "$ca"'
            in install) and 'ca="$ENVGEN_SECRETS/ca_bundle"' in install


def test_envgen_lock_runs_the_same_script() -> None:
    script = apt_script(["python3"], "http://apt.example/debian")
    assert ("sh /workspace/apt-mirror.sh http://apt.example/debian /etc/apt /etc/ssl/certs/ca-certificates.crt"
            " /workspace/ca.pem") in script
