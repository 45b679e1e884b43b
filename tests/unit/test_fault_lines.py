"""Faults that end in one line (issue #40): a damaged cached check verdict is judged again with a note (it crashed
every `envgen render`); `extends:` reads profiles only and never echoes a file it could not parse (it printed
/etc/shadow line by line); a bundle whose image config is not JSON is a damaged bundle, not a traceback. Real files
and the real CLI (a subprocess), no Docker."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from envgen.errors import BundleError, ProfileError
from envgen.pipeline.bundle import _bad
from envgen.pipeline.bundle_trust import archive_facts
from envgen.profile import load_profile

REPO = Path(__file__).resolve().parents[2]


def _envgen(*args: str, cache: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ENVGEN_CACHE_DIR": str(cache), "PYTHONPATH": str(REPO),
           "ENVGEN_CONFIG": str(cwd / "config.yaml")}
    return subprocess.run([sys.executable, "-m", "envgen", *args], capture_output=True, text=True, env=env, cwd=cwd,
                          check=False)


@pytest.mark.parametrize("damage", [b'{"broken', b"[1, 2]", b"\xff\xfe", b'[{"code": "x"}]'])
def test_a_damaged_verdict_cache_is_judged_again(tmp_path: Path, damage: bytes) -> None:
    (tmp_path / "config.yaml").write_text(f"state_dir: {tmp_path / 'state'}\n", encoding="utf-8")
    cache = tmp_path / "cache"
    first = _envgen("render", "cpu-minimal", "-o", "out", cache=cache, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    [verdict] = cache.glob("verdict-*.json")
    verdict.write_bytes(damage)
    again = _envgen("render", "cpu-minimal", "-o", "out", cache=cache, cwd=tmp_path)
    assert again.returncode == 0 and "Traceback" not in again.stderr, again.stderr
    assert f"note: the cached check verdict {verdict} could not be read" in again.stderr
    assert isinstance(json.loads(verdict.read_text(encoding="utf-8")), list)  # rewritten
    assert again.stdout == first.stdout


def _profile(directory: Path, name: str, extends: str) -> Path:
    path = directory / f"{name}.yaml"
    path.write_text(f"name: {name}\nextends: {extends}\n", encoding="utf-8")
    return path


def test_extends_reads_only_profiles_and_never_echoes_a_file(tmp_path: Path) -> None:
    secret = tmp_path / "shadow"
    secret.write_text("root:$y$SECRET-HASH:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n", encoding="utf-8")
    broken = tmp_path / "broken.yaml"
    broken.write_text("SECRET-KEY: [unclosed\n  x: 'y\n", encoding="utf-8")
    listed = tmp_path / "listed.yaml"
    listed.write_text("- SECRET-ITEM\n", encoding="utf-8")
    (tmp_path / "link.yaml").symlink_to(secret)
    cases = {"/etc/shadow": "which is no profile", str(secret): "which is no profile",
             "./link.yaml": "which is no profile", "./broken.yaml": "does not read as a profile",
             "./listed.yaml": "does not read as a profile"}
    for i, (target, words) in enumerate(cases.items()):
        with pytest.raises(ProfileError) as info:
            load_profile(_profile(tmp_path, f"child{i}", target))
        line = info.value.one_line()
        assert words in line and "SECRET" not in line and "root:" not in line and not info.value.more, line
        assert "\n" not in line


def test_extends_of_a_profile_still_works(tmp_path: Path) -> None:
    parent = tmp_path / "parent.yaml"
    parent.write_text((REPO / "profiles" / "cpu-minimal.yaml").read_text(encoding="utf-8")
                      .replace("name: cpu-minimal", "name: parent"), encoding="utf-8")
    assert load_profile(_profile(tmp_path, "child", "./parent.yaml")).name == "child"


def _save_archive(path: Path, config: bytes) -> Path:
    with tarfile.open(path, "w") as tar:
        for name, data in (("manifest.json", json.dumps([{"Config": "blobs/cfg"}]).encode()), ("blobs/cfg", config)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize("config", [b"not json at all", b"[1, 2]", b'{"config": {"Labels": [1]}}', b"\xff"])
def test_a_bundle_whose_image_config_is_not_json_is_one_line(tmp_path: Path, config: bytes) -> None:
    archive = _save_archive(tmp_path / "image.tar", config)
    with pytest.raises(BundleError) as info:
        archive_facts(archive, lambda what: _bad(tmp_path / "x.envgen", what))
    line = info.value.one_line()
    assert "image config" in line and "nothing was loaded" in line and "\n" not in line, line


def test_a_readable_image_config_gives_its_labels(tmp_path: Path) -> None:
    archive = _save_archive(tmp_path / "image.tar", b'{"config": {"Labels": {"a": "b"}}}')
    facts = archive_facts(archive, lambda what: _bad(tmp_path / "x.envgen", what))
    assert facts.image_id.startswith("sha256:") and facts.labels == {"a": "b"}


@pytest.mark.parametrize("name, taken", [("root", True), ("www-data", True), ("backup", True), ("alice", False)])
def test_a_user_name_the_base_holds_is_a_check_error(tmp_path: Path, name: str, taken: bool) -> None:
    from envgen.check import check_profile
    from envgen.kb import load_kb

    text = (REPO / "profiles" / "cpu-minimal.yaml").read_text(encoding="utf-8")
    path = tmp_path / "cpu-minimal.yaml"
    path.write_text(text + f"user: {{name: {name!r}}}\n", encoding="utf-8")
    kb = load_kb()
    found = [f for f in check_profile(load_profile(path), kb) if f.code == "user-name-taken"]
    assert bool(found) is taken
    if taken:
        assert found[0].severity == "error" and repr(name) in found[0].message and "recorded run" in found[0].source


def test_a_bake_export_keeps_the_login_out_of_its_folder(tmp_path: Path) -> None:
    """`envgen export --format bake` writes contexts: the netrc of a login in the user's mirrors goes to the state
    directory (named by the bake file's secret), never into the export folder."""
    token = "tok-4d1b0e"
    (tmp_path / "config.yaml").write_text(
        f"state_dir: {tmp_path / 'state'}\nmirrors: {{pip_extra_index_urls: ['https://bob:{token}@idx.example/s/']}}\n",
        encoding="utf-8")
    done = _envgen("export", "cpu-minimal", "--format", "bake", "-o", "out", cache=tmp_path / "cache", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    held = [p for p in (tmp_path / "out").rglob("*") if p.is_file() and token.encode() in p.read_bytes()]
    assert held == [] and token not in done.stdout + done.stderr
    bake = next((tmp_path / "out").rglob("docker-bake.hcl")).read_text(encoding="utf-8")
    assert f"id=netrc,src={tmp_path / 'state' / 'secrets'}" in bake
    assert token in next((tmp_path / "state" / "secrets").iterdir()).read_text(encoding="utf-8")
