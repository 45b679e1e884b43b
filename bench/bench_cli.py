"""Whole-process wall time of the commands run on every edit: `envgen --help`, `envgen check`, `envgen suggest`.

Each command is started as a fresh process N times (after one warm-up run that also fills the knowledge-base
cache and writes the bytecode); the median is printed next to three references measured in the same run,
interleaved with the commands so machine load hits them alike: `python -c pass` (interpreter start),
`python -c "import yaml"`, and the libraries the CLI stands on (`import typer.main, typer._adapters, yaml` and
one pydantic model built: Typer 0.29 parses every option through pydantic), so the "x libs" column shows what
envgen's own code adds. A plain `envgen check` line skips Typer (envgen.cli.check's fast path) and, with the caches
warm, imports no pydantic at all (the profile and the KB rows are envgen.records types): "pydantic alone" (`from
pydantic import BaseModel`) is what it no longer pays, and "envgen check, via Typer" the same check through Typer,
measured in the same run. "after an edit" reloads the edited YAML with the validator the profile cache kept
(pydantic_core, no schema generated).

Bytecode: an installed envgen runs from .pyc files (pip compiles a wheel's modules when it installs it; an
editable install writes them on first run). PYTHONDONTWRITEBYTECODE=1 in the caller's environment (this
workplace sets it) would make every run of a fresh checkout compile envgen's ~60 modules again (~50 ms), so it is
dropped for the commands and the warm-up run writes the bytecode.

    python bench/bench_cli.py [-n RUNS] [--profile PROFILE] [--baseline DIR]

--baseline DIR adds `envgen --help` and `envgen check` of another checkout (for example
`git archive a173857 | tar -x -C DIR`, the code before the speed work), run with `python -S` and
PYTHONPATH=DIR:<site-packages> so the editable install of this checkout cannot shadow it.

Each case runs with a private cache directory (ENVGEN_CACHE_DIR) so the user's cache is not touched; the
"check, no cache" row sets ENVGEN_NO_CACHE=1 (parse and validate the YAML every time).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGETS = {"envgen --help": 0.3, "envgen check": 0.3, "envgen suggest": 1.0}
LIBS = "libraries (typer, pydantic)"
PYDANTIC = "pydantic alone"  # what a plain `envgen check` stood on while the profile and KB rows were pydantic models
# What every envgen command that parses options and reads a profile stands on: Typer with its pydantic adapters,
# PyYAML, and one pydantic model built (the first build imports pydantic's plugin loader, importlib.metadata).
_LIBS_CODE = ("import typer.main, typer._adapters, yaml\nfrom pydantic import BaseModel\n"
              "class M(BaseModel):\n    x: int")


def _time(cmd: list[str], env: dict[str, str], cwd: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds user+system) of one run of ``cmd``; the CPU figure is what the command costs,
    the wall figure what a user waits, which on a loaded machine includes waiting for a core."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):  # check exits 1 on errors in the profile; anything else is a failure
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr.decode()[-400:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", "--runs", type=int, default=15)
    parser.add_argument("--profile", default="modern-a100")
    parser.add_argument("--baseline", help="another checkout's root, measured beside this one")
    args = parser.parse_args(argv)
    py = sys.executable
    envgen = [py, "-m", "envgen"]
    # the baseline gets a cache directory of its own: a KB cache keeps one pickle per directory, so sharing one
    # would make each checkout evict the other's and both would measure the uncached load
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as baseline_cache, \
            tempfile.TemporaryDirectory() as edits:
        env = {**os.environ, "ENVGEN_CACHE_DIR": cache}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        nocache = {**env, "ENVGEN_NO_CACHE": "1"}
        source = Path(__file__).resolve().parents[1] / "profiles" / f"{args.profile}.yaml"
        edited = str(Path(edits) / f"{args.profile}.yaml")
        Path(edited).write_text(source.read_text())
        touches = iter(range(10**6))

        def edit() -> None:
            with open(edited, "a") as handle:
                handle.write(f"# edit {next(touches)}\n")

        before = {"envgen check, after an edit": edit}
        cases: list[tuple[str, list[str], dict[str, str]]] = [
            ("python -c pass", [py, "-c", "pass"], env),
            ('python -c "import yaml"', [py, "-c", "import yaml"], env),
            (LIBS, [py, "-c", _LIBS_CODE], env),
            (PYDANTIC, [py, "-c", "from pydantic import BaseModel"], env),
            ("envgen --help", [*envgen, "--help"], env),
            ("envgen check", [*envgen, "check", args.profile, "--gpu", "A100", "--driver", "525.60.13"], env),
            # the same check through Typer: a line the fast path leaves to Typer (`--` before the profile)
            ("envgen check, via Typer", [*envgen, "check", "--gpu", "A100", "--driver", "525.60.13", "--",
                                         args.profile], env),
            # the edit-check loop: the profile changed since the last check (a comment line added before each
            # run), so the loaded-profile cache cannot serve it; the KB cache still does
            ("envgen check, after an edit", [*envgen, "check", edited, "--gpu", "A100", "--driver", "525.60.13"],
             env),
            ("envgen check, no cache", [*envgen, "check", args.profile, "--gpu", "A100", "--driver", "525.60.13"],
             nocache),
            ("envgen suggest", [*envgen, "suggest", "--gpu", "RTX 3090", "--driver", "470.82",
                                "--frameworks", "tensorflow,pytorch"], env),
        ]
        if args.baseline:
            import site

            old = {**env, "ENVGEN_CACHE_DIR": baseline_cache,
                   "PYTHONPATH": os.pathsep.join([args.baseline, *site.getsitepackages()])}
            cases += [
                ("baseline --help", [py, "-S", "-m", "envgen", "--help"], old),
                ("baseline check", [py, "-S", "-m", "envgen", "check", args.profile, "--gpu", "A100",
                                    "--driver", "525.60.13"], old),
            ]
        for name, cmd, case_env in cases:  # warm-up: page cache, bytecode, the KB cache
            before.get(name, lambda: None)()
            _time(cmd, case_env, cache)
        walls: dict[str, list[float]] = {name: [] for name, _, _ in cases}
        cpus: dict[str, list[float]] = {name: [] for name, _, _ in cases}
        load_before = os.getloadavg()[0]
        for _ in range(args.runs):
            for name, cmd, case_env in cases:
                before.get(name, lambda: None)()
                wall, cpu = _time(cmd, case_env, cache)  # cwd: nothing of a checkout on sys.path[0]
                walls[name].append(wall)
                cpus[name].append(cpu)
    wall = {name: statistics.median(values) for name, values in walls.items()}
    cpu = {name: statistics.median(values) for name, values in cpus.items()}
    base, yaml_ref, libs = wall["python -c pass"], wall['python -c "import yaml"'], wall[LIBS]
    print(f"median of {args.runs} runs, whole process (python {sys.version.split()[0]}, {os.cpu_count()} cores, "
          f"1-min load {load_before:.2f} before / {os.getloadavg()[0]:.2f} after, bytecode cached as installed)")
    print(f"{'command':<28} {'wall s':>7} {'min s':>7} {'cpu s':>7} {'x pass':>7} {'x yaml':>7} {'x libs':>7}"
          "  target (wall)")
    for name in walls:
        target = None if name.endswith("via Typer") else TARGETS.get(name.split(",")[0])  # a reference, no target
        verdict = "" if target is None else f"< {target} s {'ok' if wall[name] < target else 'MISSED'}"
        print(f"{name:<28} {wall[name]:>7.3f} {min(walls[name]):>7.3f} {cpu[name]:>7.3f} {wall[name] / base:>7.1f} "
              f"{wall[name] / yaml_ref:>7.1f} {wall[name] / libs:>7.2f}  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
