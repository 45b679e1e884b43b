"""Conda locks against a local channel: real package archives written by conda-package-handling
(`.conda` and `.tar.bz2`), the channel indexed by py-rattler, solved by py-rattler, written as an
`@EXPLICIT` list, read back, and installed by py-rattler from the solved records into a prefix.
No public conda channel is reachable here: this is the whole conda path that can run. About 2 s."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

# py-rattler and conda-package-handling are test dependencies (pyproject.toml): one missing is a broken install,
# an error here, never a silent skip (issue #34).
import conda_package_handling.api as cph
import pytest
import rattler

from envgen.errors import InputError
from envgen.lock.lock_conda import explicit_text, solve
from envgen.plan.condalock import EXPLICIT, parse_explicit
from envgen.plan.image import plan_image

PACKAGES = [
    # name, version, depends, archive format
    ("envgen-demo-app", "1.2.0", ["envgen-demo-lib >=2,<3"], ".conda"),
    ("envgen-demo-lib", "2.1.0", [], ".tar.bz2"),
    ("envgen-demo-lib", "2.0.0", [], ".tar.bz2"),
    ("envgen-demo-lib", "3.0.0", [], ".conda"),  # too new for the app: the solver must not take it
]


def _package(channel: Path, work: Path, name: str, version: str, depends: list[str], ext: str) -> Path:
    root = work / f"{name}-{version}"
    payload = f"share/{name}/VERSION"
    (root / "info").mkdir(parents=True)
    (root / payload).parent.mkdir(parents=True)
    (root / payload).write_text(version + "\n")
    index = {"name": name, "version": version, "build": "0", "build_number": 0, "depends": depends,
             "noarch": "generic", "subdir": "noarch", "license": "MIT", "timestamp": 1700000000000}
    (root / "info" / "index.json").write_text(json.dumps(index))
    (root / "info" / "files").write_text(payload + "\n")
    digest = hashlib.sha256((root / payload).read_bytes()).hexdigest()
    paths = {"paths_version": 1, "paths": [{"_path": payload, "path_type": "hardlink", "sha256": digest,
                                            "size_in_bytes": (root / payload).stat().st_size}]}
    (root / "info" / "paths.json").write_text(json.dumps(paths))
    out = channel / "noarch"
    out.mkdir(parents=True, exist_ok=True)
    cph.create(str(root), ["info/index.json", "info/files", "info/paths.json", payload],
               f"{name}-{version}-0{ext}", out_folder=str(out))
    return out / f"{name}-{version}-0{ext}"


@pytest.fixture(scope="module")
def channel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("conda")
    channel, work = base / "channel", base / "work"
    for name, version, depends, ext in PACKAGES:
        _package(channel, work, name, version, depends, ext)
    (channel / "linux-64").mkdir()
    asyncio.run(rattler.index.index_fs(channel))
    assert (channel / "noarch" / "repodata.json").is_file()
    return channel


def test_solve_writes_an_explicit_list_that_reads_back_with_real_hashes(channel: Path) -> None:
    pins = solve(["envgen-demo-app"], [channel.as_uri()], glibc="2.36")
    assert [(p.name, p.version) for p in pins] == [("envgen-demo-app", "1.2.0"), ("envgen-demo-lib", "2.1.0")]
    text = explicit_text(pins, header=["envgen conda lock for the test channel"])
    assert text.splitlines()[1] == EXPLICIT
    assert explicit_text(pins) == explicit_text(tuple(reversed(pins)))  # deterministic
    entries = parse_explicit(text)
    assert len(entries) == 2
    for url, md5, sha in entries:
        archive = Path(url.removeprefix("file://"))
        data = archive.read_bytes()
        assert hashlib.md5(data).hexdigest() == md5 and hashlib.sha256(data).hexdigest() == sha
    assert {Path(u).name for u, _, _ in entries} == {"envgen-demo-app-1.2.0-0.conda", "envgen-demo-lib-2.1.0-0.tar.bz2"}


def test_the_solved_records_install_into_a_prefix(channel: Path, tmp_path: Path) -> None:
    records = asyncio.run(rattler.solve(sources=[rattler.Channel(channel.as_uri())], specs=["envgen-demo-app"],
                                        platforms=["linux-64", "noarch"]))
    prefix = tmp_path / "env"
    asyncio.run(rattler.install(records, prefix, cache_dir=tmp_path / "pkgs", show_progress=False))
    assert (prefix / "share" / "envgen-demo-lib" / "VERSION").read_text() == "2.1.0\n"
    assert (prefix / "share" / "envgen-demo-app" / "VERSION").read_text() == "1.2.0\n"


def test_an_unsolvable_spec_and_a_bad_list_are_one_line_errors(channel: Path) -> None:
    with pytest.raises(InputError, match="conda solve of envgen-demo-app >=9 on .* failed"):
        solve(["envgen-demo-app >=9"], [channel.as_uri()])
    with pytest.raises(InputError, match="is not a 'URL#md5' line"):
        parse_explicit(f"{EXPLICIT}\nhttps://example/x-1-0.conda --insecure\n")
    with pytest.raises(InputError, match="no @EXPLICIT line"):
        parse_explicit("# nothing\n")


CONDA_PROFILE = """\
name: condalocked
description: conda lock test profile
base: debian:bookworm-slim
installer: conda
python: "3.11"
channels: [demo]
gpu: {required: false}
packages:
  conda: [envgen-demo-app=1.2.0]
"""


def test_envgen_lock_writes_the_explicit_list_and_the_render_installs_it(channel: Path, tmp_path: Path) -> None:
    """The CLI path for conda profiles: python and pip come from the channel too, so the test channel gets
    stand-ins with those names; the render then installs the explicit list, and a changed pin is stale."""
    from typer.testing import CliRunner

    from envgen.cli import app
    from envgen.kb import load_kb
    from envgen.plan.installers.conda import tools
    from envgen.profile import load_profile
    from envgen.render.core import render_in_memory

    conda_pip = str(tools()["conda_pip"]["version"])
    work = tmp_path / "work"
    for name, version in (("python", "3.11"), ("pip", conda_pip)):
        _package(channel, work, name, version, [], ".conda")
    asyncio.run(rattler.index.index_fs(channel, force=True))
    (tmp_path / "condalocked.yaml").write_text(CONDA_PROFILE)
    result = CliRunner().invoke(app, ["lock", str(tmp_path / "condalocked.yaml"), "--conda-channel",
                                      f"demo={channel.as_uri()}"])
    assert result.exit_code == 0, result.output
    assert "4 conda package(s)" in result.output
    text = (tmp_path / "condalocked.conda.txt").read_text()
    assert "envgen-demo-lib-2.1.0-0.tar.bz2#" in text and "# channels: demo" in text
    files = render_in_memory(plan_image(load_profile(str(tmp_path / "condalocked.yaml")), load_kb())).files
    assert files["environment.lock.txt"].decode() == text
    assert b"sh /opt/envgen/sh/conda-env.sh environment.lock.txt" in files["Dockerfile"]
    script = files["envgen/sh/conda-env.sh"]
    assert b'micromamba create --yes --prefix /opt/env --rc-file condarc --file "$file"' in script
    (tmp_path / "condalocked.yaml").write_text(CONDA_PROFILE.replace("envgen-demo-app=1.2.0",
                                                                     "envgen-demo-app=1.3.0"))
    with pytest.raises(InputError, match="was made for conda packages .*envgen-demo-app==1.2.0"):
        render_in_memory(plan_image(load_profile(str(tmp_path / "condalocked.yaml")), load_kb()))
    bad = CliRunner().invoke(app, ["lock", str(tmp_path / "condalocked.yaml"), "--conda-channel", "demo"])
    assert bad.exit_code != 0 and "is not NAME=URL" in bad.output
