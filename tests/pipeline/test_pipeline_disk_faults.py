"""Faults met with one line and nothing half-written, for real: a full file system is a small tmpfs mounted here
(root only; CI runs as root) under the place envgen writes: the bundle `save` writes, the TMPDIR `load` unpacks
into, the build log's directory, the validation records' directory. A damaged validation record is named with
what it means and how to validate again. Cost here: one small build (cached layers: seconds) and a ~40 MB bundle."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from envgen.docker import inspect_image, remove_image
from envgen.errors import DiskFull, ImageNotValidated
from envgen.pipeline.build import BuildOutcome, build
from envgen.pipeline.bundle import save
from envgen.pipeline.image_list import image_rows
from envgen.pipeline.run import run
from envgen.pipeline.smoke import smoke
from envgen.pipeline.state import ValidationStore
from tests.conftest import unavailable
from tests.pipeline.conftest import alias, minimal_profile

if TYPE_CHECKING:
    from docker import DockerClient

pytestmark = pytest.mark.docker
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def full_fs(tmp_path: Path) -> Iterator[Callable[[Path], Path]]:
    """Mount a small tmpfs at a directory, filled (ENOSPC for the next write there) or with ``room`` left."""
    if os.geteuid() != 0:
        unavailable("the full-disk tests mount a tmpfs: run them as root")
    mounted: list[Path] = []

    def mount(where: Path, room: str = "") -> Path:
        where.mkdir(parents=True, exist_ok=True)
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={room or '1m'}", "tmpfs", str(where)], check=True)
        mounted.append(where)
        if room:
            return where
        with (where / ".filler").open("wb") as filler:
            try:
                while True:
                    filler.write(b"\0" * 65536)
                    filler.flush()
            except OSError:
                pass
        return where

    yield mount
    for where in reversed(mounted):
        subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.fixture(scope="module")
def built(envgen_home: Path, write_profile: Callable[[str, str], str],
          docker_client: DockerClient) -> Iterator[tuple[str, BuildOutcome]]:
    name = write_profile(f"faults-{secrets.token_hex(3)}", minimal_profile('"six==1.16.0"'))
    outcome = build(name)
    yield name, outcome
    for ref in (outcome.tag, alias(name)):
        remove_image(docker_client, ref, force=True)


def _left(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name != ".filler")


def test_save_to_a_full_disk(built: tuple[str, BuildOutcome], full_fs: Callable[..., Path],
                             tmp_path: Path) -> None:
    name, _ = built
    out = full_fs(tmp_path / "full")
    with pytest.raises(DiskFull) as info:
        save(name, out / "x.envgen")
    line = info.value.one_line()
    assert f"no space left on the file system of {out / 'x.envgen'}" in line and "MB free" in line, line
    assert _left(out) == []  # no bundle, no staging directory


def test_load_with_a_full_tmpdir_names_tmpdir(built: tuple[str, BuildOutcome], full_fs: Callable[..., Path],
                                              tmp_path: Path, envgen_home: Path) -> None:
    name, _ = built
    bundle = tmp_path / "good.envgen"
    save(name, bundle)
    # room for Python's own check of TMPDIR (a TMPDIR it cannot write to at all it passes over for /tmp), not for
    # the unpacked image: a real TMPDIR that fills up on the way
    tmp = full_fs(tmp_path / "tmp", room="4m")
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "envgen", "load", str(bundle)], capture_output=True, text=True,
                          env=env, check=False)
    assert done.returncode == 1, done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "no space left" in lines[0] and "TMPDIR" in lines[0] and "damaged" not in lines[0], lines[0]
    assert _left(tmp) == []


def test_build_log_on_a_full_disk(envgen_home: Path, write_profile: Callable[[str, str], str],
                                  full_fs: Callable[..., Path], docker_client: DockerClient) -> None:
    name = write_profile(f"faults-log-{secrets.token_hex(3)}", minimal_profile('"six==1.16.0", "idna==3.7"'))
    logs = full_fs(envgen_home / "state" / "logs")
    with pytest.raises(DiskFull) as info:
        build(name)
    line = info.value.one_line()
    assert "no space left" in line and "the build log" in line and "nothing was tagged" in line, line
    assert _left(logs) == []  # the half-written log removed
    assert inspect_image(docker_client, alias(name)) is None


def test_smoke_record_on_a_full_disk_and_a_damaged_record(built: tuple[str, BuildOutcome], envgen_home: Path,
                                                          full_fs: Callable[..., Path]) -> None:
    name, outcome = built
    state = envgen_home / "state"
    store = ValidationStore(state)
    record = store.dir / (outcome.image_id.replace("sha256:", "") + ".json")
    good = record.read_bytes()
    record.write_bytes(good[: len(good) // 2])  # cut short
    with pytest.raises(ImageNotValidated) as refused:
        run(outcome.tag, command=["true"])
    line = refused.value.one_line()
    assert f"its validation record {record} is damaged" in line and f"envgen smoke {outcome.tag}" in line, line
    row = next(r for r in image_rows() if r["id"] == outcome.image_id)
    assert "record damaged" in row["validation"]
    # the record's directory full: the smoke test's verdict is not written, and says so in one line
    record.unlink()
    saved = {p.name: p.read_bytes() for p in store.dir.iterdir()}
    for path in store.dir.iterdir():
        path.unlink()
    full_fs(store.dir)
    try:
        with pytest.raises(DiskFull) as info:
            smoke(outcome.tag)
        assert "no space left" in info.value.one_line() and "not counted as validated" in info.value.one_line()
        assert _left(store.dir) == []
    finally:
        subprocess.run(["umount", "-l", str(store.dir)], check=False)
        for key, data in saved.items():
            (store.dir / key).write_bytes(data)
    report = smoke(outcome.tag)  # validated again: the record rewritten
    assert report.passed and store.get(outcome.image_id) is not None
    assert run(outcome.tag, command=["true"]) == 0


def test_run_as_root_from_root_and_home_warns_and_mounts_nothing(built: tuple[str, BuildOutcome],
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    if os.geteuid() != 0:
        unavailable("this test is about running envgen as root: run it as root")
    _, outcome = built
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for here, said in (("/", "the current directory is /"), (str(home), f"your home {home}")):
        monkeypatch.chdir(here)
        out: list[str] = []
        code = run(outcome.tag, command=["sh", "-c", "id -u; ls /workspace 2>/dev/null | head -3; pwd"],
                   out=out.append)
        text = "".join(out)
        assert code == 0, text
        assert "envgen runs as root here: the container runs as the image's own user" in text
        assert said in text and "pass --workdir DIR" in text, text
        uid = [ln for ln in text.splitlines() if ln.strip().isdigit()]
        assert uid and uid[0] != "0", text  # the image's user, not root
        assert "bin" not in text.split() and "etc" not in text.split()  # the host root is not in /workspace
    monkeypatch.chdir(tmp_path)
    out = []
    assert run(outcome.tag, command=["id", "-u"], out=out.append, as_root=True) == 0
    assert out[-1].strip() == "0" and "warning" not in "".join(out)  # asked for: root, tmp_path mounted
