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


def test_metavariables_say_what_each_value_is() -> None:
    """Issue 32 item 10: `-o DIR` on options that take a file, `--gpu-route runtime|cdi` without auto on the
    commands that take auto, and `run`'s usage without its command."""
    for name in ("init", "suggest", "save"):
        text = _envgen(name, "--help").stdout
        assert "-o, --output FILE" in text, (name, text)
    for name in ("render", "export"):
        assert "-o, --output DIR" in _envgen(name, "--help").stdout, name
    for name in ("build", "smoke", "run", "pull"):
        assert "--gpu-route auto|runtime|cdi" in _envgen(name, "--help").stdout, name
    assert "--gpu-route runtime|cdi" in _envgen("export", "--help").stdout  # an export takes no auto
    run_usage = _envgen("run", "--help").stdout.splitlines()[0]
    assert "PROFILE|IMAGE" in run_usage and "COMMAND" in run_usage, run_usage
    assert "IMAGE|PROFILE" in _envgen("smoke", "--help").stdout.splitlines()[0]


def test_looked_at_names_the_host_it_judged_against() -> None:
    out = _envgen("check", "legacy-maxwell", "--gpu", "GTX 950M", "--driver", "418.81")
    line = next(line for line in out.stdout.splitlines() if line.startswith("looked at:"))
    assert "host GTX 950M, driver 418.81" in line
    bare = _envgen("check", "legacy-maxwell")
    assert "no host GPU or driver given" in bare.stdout
