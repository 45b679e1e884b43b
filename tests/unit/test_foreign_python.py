"""Which of an image's Pythons `envgen smoke IMAGE` probes (envgen.docker.foreign.with_python; issue #38): the shell
line is run here by the real /bin/sh, with a stand-in interpreter (a script answering the scoring question as a
venv holding torch and jax would) named as the image's entrypoint's, beside this host's own Pythons."""

from __future__ import annotations

import subprocess
from pathlib import Path

from envgen.docker.foreign import entry_interpreter, with_python


def _run(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def test_the_python_holding_frameworks_is_chosen_and_named(tmp_path: Path) -> None:
    venv = tmp_path / "venv" / "bin" / "python"
    venv.parent.mkdir(parents=True)
    venv.write_text('#!/bin/sh\nif [ "$1" = -c ] && [ "$3" = torch ]; then echo /opt/tool/.venv 2 torch,jax; '
                    'else echo ran "$@"; fi\n')
    venv.chmod(0o755)
    done = _run(with_python(None, "probe.py --tier libraries", first=str(venv)))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ran probe.py --tier libraries"
    assert f"envgen: python is {venv}, which holds torch,jax (Pythons in the image: {venv} (torch,jax)" in done.stderr


def test_none_holding_a_framework_is_said(tmp_path: Path) -> None:
    bare = tmp_path / "python3"
    bare.write_text('#!/bin/sh\nif [ "$1" = -c ] && [ "$3" = torch ]; then echo /bare 0 -; else echo ran; fi\n')
    bare.chmod(0o755)
    done = _run(with_python(None, "probe.py", first=str(bare)))
    assert done.returncode == 0
    if "which holds" not in done.stderr:  # this host's own Pythons hold no framework either
        assert "no Python in the image holds a framework to validate" in done.stderr, done.stderr


def test_the_entrypoint_names_its_python() -> None:
    assert entry_interpreter({"Entrypoint": ["/opt/venv/bin/python3", "-m", "app"]}) == "/opt/venv/bin/python3"
    assert entry_interpreter({"Entrypoint": None, "Cmd": ["/usr/bin/python3.11"]}) == "/usr/bin/python3.11"
    assert entry_interpreter({"Cmd": ["/bin/bash"]}) is None and entry_interpreter({}) is None
