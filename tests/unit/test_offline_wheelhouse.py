"""Issue #32, item 4: `--offline` never contacts an index. The classic builder's host download (envgen.lock.wheels
.prefetch) ran pip with the profile's index even under --offline: ten `Retrying ... Failed to establish a new
connection` lines before it fell back to the wheelhouse, and a wheel missing from the wheelhouse ended in pip's raw
text and `downloading wheels for the classic builder failed (pip exit 1)`.

Here the download runs with the network gone (`unshare -n`, a network namespace with no interface but loopback,
made by this test), from a wheelhouse this test fills from PyPI first."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

SCRIPT = """
import json, sys
from pathlib import Path
from envgen.errors import BuildFailed
from envgen.lock.wheels import manylinux_platforms, prefetch
req, house, dest, log = (Path(a) for a in sys.argv[1:5])
try:
    got = prefetch([req], dest, "3.11", find_links=[str(house)], index_urls=["https://pypi.org/simple"],
                   platforms=manylinux_platforms("2.36"), log_path=log, offline=True)
    print(json.dumps({"wheels": [p.name for p in got]}))
except BuildFailed as exc:
    print(json.dumps({"error": exc.one_line()}))
"""


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    house = tmp_path_factory.mktemp("house")
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                    "-d", str(house), "six==1.16.0"], check=True, timeout=300)
    return house


def _offline(tmp_path: Path, house: Path, requirement: str) -> tuple[dict[str, object], float]:
    if shutil.which("unshare") is None:
        pytest.fail("unshare (util-linux) is needed to take the network away")
    req = tmp_path / "requirements.txt"
    req.write_text(requirement + "\n")
    start = time.monotonic()
    done = subprocess.run(["unshare", "-n", sys.executable, "-c", SCRIPT, str(req), str(house), str(tmp_path / "dest"),
                           str(tmp_path / "wheels.log")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1]), time.monotonic() - start


def test_offline_takes_the_wheelhouse_without_an_index(tmp_path: Path, wheelhouse: Path) -> None:
    result, seconds = _offline(tmp_path, wheelhouse, "six==1.16.0")
    assert result == {"wheels": ["six-1.16.0-py2.py3-none-any.whl"]}
    log = (tmp_path / "wheels.log").read_text()
    assert "Retrying" not in log and "Failed to establish" not in log
    assert seconds < 60  # pip's retries against an unreachable index took minutes; generous for a busy machine


def test_offline_missing_wheel_is_one_line(tmp_path: Path, wheelhouse: Path) -> None:
    result, _ = _offline(tmp_path, wheelhouse, "rich==13.7.1")
    error = str(result["error"])
    assert error.startswith(f"--offline: no wheel for rich==13.7.1 in {wheelhouse}"), error
    assert "\n" not in error and "Retrying" not in (tmp_path / "wheels.log").read_text()
    assert "name it under base_provides" in error, error  # issue 38: the route for what the base image holds
