"""The README's install line on a stock Debian 12 system Python, for real: in a container from the
local Debian 12 base, apt installs python3, python3-venv and python3-pip (through the proxy: the CA
bundle is bind-mounted read-only, never in a layer; the container is removed afterwards), a plain
`pip install .` is shown to stop at PEP 668, then the README's install command runs unchanged on a
copy of the source, and `envgen --help` and `envgen check legacy-maxwell` run from what it installed.
Cost: ~1-2 min (apt and PyPI downloads)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from envgen.config import default_ca_bundle

ROOT = Path(__file__).resolve().parents[2]
BASE = "debian:bookworm-slim"
SOURCE_ENTRIES = ("envgen", "profiles", "templates", "scripts", "schema", "pyproject.toml", "README.md")


def readme_install_command() -> str:
    """The part of the README's first command that installs envgen (`... && <install> && ...`)."""
    block = re.search(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    assert block, "README.md has no bash block"
    first = block.group(1).splitlines()[0].split("#", 1)[0]
    steps = [step.strip() for step in first.split("&&")]
    [install] = [step for step in steps if "install" in step and "host-setup" not in step]
    return install


def test_readme_opening_keeps_two_commands() -> None:
    block = re.search(r"```bash\n(.*?)```", (ROOT / "README.md").read_text(encoding="utf-8"), re.S)
    assert block is not None
    lines = [line for line in block.group(1).splitlines() if line.strip()]
    assert len(lines) == 2 and lines[1].split("#")[0].strip() == "bash scripts/test"
    assert readme_install_command() == "bash scripts/install"
    assert (ROOT / ".ci" / "run").read_text().strip().endswith("exec bash scripts/test")


def test_readme_install_on_debian12_system_python(docker_client: object, tmp_path: Path) -> None:
    ca = default_ca_bundle({})
    source = tmp_path / "envgen"
    source.mkdir()
    for entry in SOURCE_ENTRIES:
        src = ROOT / entry
        if src.is_dir():
            shutil.copytree(src, source / entry, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            shutil.copy2(src, source / entry)
    install = readme_install_command()
    ca_in = "/run/secrets/ca_bundle"
    ca_env = f"export SSL_CERT_FILE={ca_in} PIP_CERT={ca_in} REQUESTS_CA_BUNDLE={ca_in}; " if ca else ""
    apt_ca = f"-o Acquire::https::CAInfo={ca_in}" if ca else ""
    script = f"""set -eu
{ca_env}
apt-get {apt_ca} update -q >/tmp/apt.log 2>&1 || {{ tail -n 20 /tmp/apt.log; exit 10; }}
DEBIAN_FRONTEND=noninteractive apt-get {apt_ca} install -y -q --no-install-recommends \\
    python3 python3-venv python3-pip >>/tmp/apt.log 2>&1 || {{ tail -n 20 /tmp/apt.log; exit 11; }}
echo "== system python: $(python3 -V)"
cd /src
if python3 -m pip install . >/tmp/pep668.log 2>&1; then echo "== pip install . was NOT refused"; exit 12; fi
grep -q externally-managed-environment /tmp/pep668.log && echo "== pip install .: externally-managed-environment"
echo "== README install: {install}"
{install}
export PATH="$HOME/.local/bin:$PATH"
echo "== envgen: $(command -v envgen)"
envgen --help | head -n 3
envgen check legacy-maxwell
echo "== check exit: $?"
"""
    cmd = ["docker", "run", "--rm", "--network", "host", "-v", f"{source}:/src"]
    if ca:
        cmd += ["-v", f"{ca}:{ca_in}:ro"]
    cmd += [BASE, "bash", "-c", script]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    out = proc.stdout + proc.stderr
    print(out[-4000:])
    assert proc.returncode == 0, out[-4000:]
    assert "pip install .: externally-managed-environment" in out
    assert "== envgen: /root/.local/bin/envgen" in out and "Usage: envgen" in out
    assert "== check exit: 0" in out
