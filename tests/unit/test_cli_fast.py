"""`envgen check` without Typer: the fast path answers exactly as the Typer command does, and starts neither
Typer nor the YAML parser when the caches serve."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from envgen.cli.check import PARAMS, fast
from envgen.cli.commands import app
from envgen.cli.spec import parse

REPO = Path(__file__).resolve().parents[2]
USERS = REPO / "tests" / "corpus" / "users"


@pytest.mark.parametrize(("argv", "expected"), [
    (["p"], {"profile": "p"}),
    (["p", "--gpu", "H100", "--gpu=A100", "--driver", "535.104.05"],
     {"profile": "p", "gpu": ["H100", "A100"], "driver": "535.104.05"}),
    (["--json", "p", "--platform=wsl2", "--resolve"], {"profile": "p", "as_json": True, "platform": "wsl2",
                                                       "resolve": True}),
    (["p", "--driver", "1", "--driver", "2"], {"profile": "p", "driver": "2"}),  # click: the last one wins
    (["p", "--gpu="], {"profile": "p", "gpu": [""]}),
    (["p", "--compute-capability", "8.0"], {"profile": "p", "compute_capability": ["8.0"]}),
])
def test_parse_reads_well_formed_lines(argv: list[str], expected: dict[str, object]) -> None:
    defaults = {"gpu": None, "compute_capability": None, "driver": None, "platform": "linux", "as_json": False,
                "resolve": False, "image": False, "offline": False}
    assert parse(PARAMS, argv) == {**defaults, **expected}


@pytest.mark.parametrize("argv", [
    [], ["--help"], ["p", "--help"], ["p", "q"], ["p", "--gpux", "1"], ["p", "--driver"], ["p", "--json=1"],
    ["p", "-h"], ["p", "--"], ["-1"], ["p", "--gp", "H100"],
])
def test_parse_leaves_everything_else_to_typer(argv: list[str]) -> None:
    assert parse(PARAMS, argv) is None
    assert fast(argv) is None


LINES = [
    ["modern-a100"],
    ["legacy-maxwell", "--gpu", "GTX 950M", "--driver", "470.82.01"],
    ["modern-a100", "--json", "--gpu=H100", "--gpu", "RTX 4090"],
    ["ngc-tensorflow", "--platform", "wsl2", "--driver", "535.104.05"],
    ["cpu-minimal", "--compute-capability", "8.0"],
    ["modern-a100", "--platform", "bogus"],  # an input error of the command itself
    ["modern-a100", "--driver", "550"],  # a branch, not a version: exit 2
    ["no-such-profile"],
    ["modern-a100.yaml"],  # a built-in named as a file: the did-you-mean
    *([str(p)] for p in sorted(USERS.glob("*.yaml"))[:12]),
]


@pytest.mark.parametrize("argv", LINES, ids=lambda a: " ".join(Path(x).name for x in a))
def test_fast_path_answers_as_the_typer_command(argv: list[str], capfd: pytest.CaptureFixture[str]) -> None:
    typer_run = CliRunner().invoke(app, ["check", *argv])
    code = fast(argv)
    out, err = capfd.readouterr()
    assert code == typer_run.exit_code
    assert out == typer_run.stdout
    assert err == typer_run.stderr


def test_check_starts_neither_typer_nor_yaml(tmp_path: Path) -> None:
    """With the KB and profile caches warm, `envgen check` imports no Typer, Click, PyYAML or pydantic (the
    cached profile and rows are records, ``envgen.records``: pydantic is imported only to validate YAML)."""
    env = {**os.environ, "ENVGEN_CACHE_DIR": str(tmp_path / "cache")}
    code = ("import sys; sys.argv = ['envgen', 'check', 'modern-a100']\n"
            "from envgen.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('LOADED', sorted({m.split('.')[0] for m in sys.modules} & {'typer', 'click', 'yaml', 'jinja2', "
            "'docker', 'pydantic', 'pydantic_core', 'annotated_types'}))")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
            for _ in range(2)]  # the first run fills the caches
    assert runs[1].stdout.splitlines()[-1] == "LOADED []", runs[1].stdout[-400:]


def test_a_check_after_an_edit_restores_the_validator(tmp_path: Path) -> None:
    """An edited profile is validated by the compiled validator the first load kept (envgen.compiled): no
    pydantic schema is generated and pydantic itself is not imported, and the verdicts and the errors are those
    of a load without any cache."""
    profile = tmp_path / "mine.yaml"
    good = "name: mine\nbase: debian:bookworm-slim\npython: \"3.11\"\ngpu:\n  required: false\n"
    env = {**os.environ, "ENVGEN_CACHE_DIR": str(tmp_path / "cache")}
    code = ("import sys; sys.argv = ['envgen', 'check', sys.argv[1]]\n"
            "from envgen.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print('LOADED', sorted({m.split('.')[0] for m in sys.modules} & {'pydantic', 'pydantic_core'}))")

    def check(text: str, cached: bool = True) -> subprocess.CompletedProcess[str]:
        profile.write_text(text)
        run_env = env if cached else {**env, "ENVGEN_NO_CACHE": "1"}
        return subprocess.run([sys.executable, "-c", code, str(profile)], capture_output=True, text=True,
                              env=run_env, check=True)

    check(good)  # fills the caches, the validator among them
    assert list((tmp_path / "cache").glob("compiled-*.pickle"))
    for text in (good + "description: edited\n", good + "pyhton: \"3.11\"\n", good.replace('"3.11"', "3.11")):
        edited, fresh = check(text), check(text, cached=False)
        assert edited.stdout.splitlines()[-1] == "LOADED ['pydantic_core']", edited.stdout[-300:]
        assert edited.stdout.splitlines()[:-1] == fresh.stdout.splitlines()[:-1]
        assert edited.stderr == fresh.stderr
