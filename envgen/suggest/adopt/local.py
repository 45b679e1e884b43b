"""A Python environment on this host (a venv, a conda env, or an interpreter) read for `envgen init --from PATH` and
`envgen doctor --python PATH`: the same reader as for an image (``image_facts.py``), run by that interpreter."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from envgen.errors import InputError
from envgen.suggest.adopt.image import FACTS, facts_read
from envgen.suggest.adopt.model import Read

# where an environment directory keeps its interpreter (a venv's bin/python, a conda env's bin/python)
_IN_ENV = ("bin/python", "bin/python3")
# variables of this shell that would show the interpreter more than its environment holds (PYTHONPATH's folders) or
# another installation (PYTHONHOME); the image's interpreter runs without them, so the environment is read without
# them (https://docs.python.org/3/using/cmdline.html#environment-variables)
_NOT_THE_ENVIRONMENT = ("PYTHONPATH", "PYTHONHOME")


def interpreter(path: Path) -> Path:
    """The interpreter of ``path``: the file itself, or a venv's or conda env's bin/python."""
    if path.is_dir():
        found = next((path / rel for rel in _IN_ENV if (path / rel).exists()), None)
        if found is None:
            raise InputError(f"{path}: a directory with no bin/python (not a venv or conda env)",
                             fix="give the environment's directory or its interpreter (…/bin/python)")
        return found
    if not path.exists():
        raise InputError(f"{path}: no such file or directory", fix="give a venv, a conda env or an interpreter")
    return path


def python_facts(path: Path) -> dict[str, Any]:
    python = interpreter(path)
    env = {key: value for key, value in os.environ.items() if key not in _NOT_THE_ENVIRONMENT}
    try:
        done = subprocess.run([str(python), str(FACTS)], capture_output=True, text=True, timeout=300, check=False,
                              env=env)
    except OSError as exc:
        raise InputError(f"{python}: cannot run it ({exc.strerror or exc})", fix="give a Python interpreter") from None
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        raise InputError(f"{python}: could not read its environment ({tail})", fix="give a Python 3.8+ interpreter")
    facts: dict[str, Any] = json.loads(lines[-1])
    return facts


def read_python(path: Path) -> Read:
    read = facts_read(python_facts(path), str(path), "python")
    unset = [f"{key}={os.environ[key]}" for key in _NOT_THE_ENVIRONMENT if os.environ.get(key)]
    if unset:
        read.notes.append(f"{path}: read without {', '.join(unset)} (set in this shell, not in the image): add what "
                          "those folders hold to packages.pip if the environment needs it")
    return read
