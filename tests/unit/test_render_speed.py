"""`envgen render` is run on every edit, as `envgen check` is (issue 28: it was 2.1x `neurodocker generate`,
bench/bench_render_vs_neurodocker.py): with the caches warm it reads the KB and the profile from them (no YAML
parsed, no KB row validated), compiles no template (Jinja's bytecode cache), checks nothing, starts no Typer and
imports no pydantic (the compiled validators and serialisers it needs are restored: envgen.compiled) and runs no
Docker CLI (what each says of itself is kept: envgen.docker.cli_answers) and no YAML parser (the user config and
tools.yaml are kept parsed: envgen.parsed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from envgen.cli import app

PROBE = """
import sys
out, warm = sys.argv[1], sys.argv[2] == "warm"
sys.argv = ["envgen", "render", "modern-a100", "-o", out]
if warm:  # what a warm render must not do: each raises when it is called
    import subprocess, jinja2, envgen.kb.loader, envgen.profile.cache

    def refuse(*args, **kwargs):
        raise AssertionError("a warm render parsed YAML, compiled a template or ran a command")

    envgen.kb.loader.load_kb = envgen.profile.cache.load_source = jinja2.Environment.compile = refuse
    subprocess.run = refuse  # the Docker CLIs' answers are kept (envgen.docker.cli_answers)
from envgen.cli import main
try:
    main()
except SystemExit as exc:
    assert not exc.code, exc.code
print("MODULES " + " ".join(sorted(sys.modules)))
"""


def _render(out: Path, env: dict[str, str], warm: bool = False) -> tuple[str, set[str]]:
    done = subprocess.run([sys.executable, "-c", PROBE, str(out), "warm" if warm else "cold"], capture_output=True,
                          text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    return "\n".join(lines[:-1]), set(lines[-1].split()[1:])


def test_a_warm_render_reads_the_caches_and_starts_no_typer(tmp_path: Path) -> None:
    env = {**os.environ, "ENVGEN_CACHE_DIR": str(tmp_path / "cache")}
    _render(tmp_path / "first", env)  # fills the KB, profile and template caches
    text, modules = _render(tmp_path / "out", env, warm=True)
    assert text.startswith(f"rendered modern-a100 into {tmp_path / 'out'} (")
    assert (tmp_path / "out" / "Dockerfile").read_bytes() == (tmp_path / "first" / "Dockerfile").read_bytes()
    for module in ("typer", "envgen.check", "pydantic", "envgen.docker.build"):
        assert module not in modules, f"a warm `envgen render` imports {module}"
    _, unpatched = _render(tmp_path / "again", env)  # the probe's own patches import the YAML loader
    assert "yaml" not in unpatched, "a warm `envgen render` imports yaml"
    assert any((tmp_path / "cache" / "jinja").iterdir())


def test_the_fast_path_says_what_typer_says(tmp_path: Path) -> None:
    env = {**os.environ, "ENVGEN_CACHE_DIR": str(tmp_path / "cache")}
    fast, _ = _render(tmp_path / "out", env)
    typer = CliRunner().invoke(app, ["render", "modern-a100", "-o", str(tmp_path / "out")], env=env)
    assert typer.exit_code == 0 and typer.output.strip() == fast.strip()
    as_json = CliRunner().invoke(app, ["render", "modern-a100", "--output", str(tmp_path / "j"), "--json"], env=env)
    done = subprocess.run([sys.executable, "-m", "envgen", "render", "modern-a100", f"--output={tmp_path / 'j'}",
                           "--json"], capture_output=True, text=True, env=env, check=True)
    assert json.loads(done.stdout) == json.loads(as_json.output)
