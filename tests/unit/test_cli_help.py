"""`envgen --version`; help that names values (--gpu GPU, PROFILE), never Typer's <str> or <list[str]>."""

from __future__ import annotations

import subprocess
import sys

from envgen import __version__


def _envgen(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "envgen", *args], capture_output=True, text=True, timeout=60)


def test_version() -> None:
    out = _envgen("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"envgen {__version__}"


def test_help_names_values_plainly() -> None:
    from envgen.cli import command

    root = command()
    for name in [None, *sorted(root.commands)]:
        text = _envgen(*([name] if name else []), "--help").stdout
        assert "<str>" not in text and "<list[str]>" not in text and "<path>" not in text, (name, text)
        assert "....." not in text
    check = _envgen("check", "--help").stdout
    assert "--gpu GPU" in check and "--driver VERSION" in check and "PROFILE" in check


def test_looked_at_names_the_host_it_judged_against() -> None:
    out = _envgen("check", "legacy-maxwell", "--gpu", "GTX 950M", "--driver", "418.81")
    line = next(line for line in out.stdout.splitlines() if line.startswith("looked at:"))
    assert "host GTX 950M, driver 418.81" in line
    bare = _envgen("check", "legacy-maxwell")
    assert "no host GPU or driver given" in bare.stdout
