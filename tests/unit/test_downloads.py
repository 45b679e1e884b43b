"""Issue 38 item 7: before any download, what the build needs. ``render.downloads`` lists the indexes and downloads
of a profile's build (PyTorch's index of a +cpu/+cuXXX build, micromamba, conda channels, the package index) with
the mirrors applied; `envgen check` states it offline; ``pipeline.fetch`` tries each host once (a real refused port
and a real local HTTP server here), keeps the answer briefly, and a build that cannot fetch stops with one line."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from envgen.cli import app
from envgen.errors import BuildFailed
from envgen.kb import KnowledgeBase
from envgen.pipeline.fetch import blocked, ensure_fetchable, try_url
from envgen.plan.image import plan_image
from envgen.profile import load_profile
from envgen.profile.model import Mirrors
from envgen.render.downloads import PYPI, downloads

REFUSED = "http://127.0.0.1:9"  # the discard port: nothing listens, the connection is refused at once

HEAD = """\
name: d
base: debian:bookworm-slim
local_base: true
python: "3.11"
gpu: {required: false}
"""


def _plan(tmp_path: Path, kb: KnowledgeBase, body: str):  # type: ignore[no-untyped-def]
    path = tmp_path / "d.yaml"
    path.write_text(HEAD + body, encoding="utf-8")
    return plan_image(load_profile(str(path)), kb)


@pytest.fixture
def server() -> Iterator[str]:
    """A real HTTP server on this host, answering every HEAD with 404 (an answer is an answer)."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_a_cpu_torch_build_needs_pytorchs_index_and_pypi(tmp_path: Path, kb: KnowledgeBase) -> None:
    plan = _plan(tmp_path, kb, 'installer: pip\nframeworks: {pytorch: "2.12.0+cpu"}\n')
    found = downloads(plan, plan.profile.mirrors)
    assert [(d.what, d.url) for d in found] == [
        ("PyTorch's index (torch==2.12.0+cpu)", "https://download.pytorch.org/whl/cpu"), ("PyPI", PYPI)]
    mirrored = downloads(plan, Mirrors(pytorch_wheels="https://mirror.example/torch",
                                       pip_index_url="https://mirror.example/simple"))
    assert [d.url for d in mirrored] == ["https://mirror.example/torch/cpu", "https://mirror.example/simple"]


def test_a_wheelhouse_holding_the_torch_wheel_drops_its_index(tmp_path: Path, kb: KnowledgeBase) -> None:
    plan = _plan(tmp_path, kb, 'installer: pip\nframeworks: {pytorch: "2.12.0+cpu"}\n')
    house = tmp_path / "wheels"
    house.mkdir()
    (house / "torch-2.12.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"")
    assert [d.what for d in downloads(plan, plan.profile.mirrors, house)] == ["PyPI"]


def test_lines_the_base_holds_fetch_nothing(tmp_path: Path, kb: KnowledgeBase) -> None:
    """Found on the H200 (docs/validation/2026-12-04-h200-adopt): a venv adopted with --base IMAGE has every
    packages.pip line under base_provides, so its build installs nothing, yet it was stopped for an unreachable PyPI."""
    held = ('base_provides: {python: /opt/env/bin/python3, packages: {six: "1.17.0"}}\n'
            'packages: {pip: ["six==1.17.0"]}\n')
    assert downloads(_plan(tmp_path, kb, "installer: pip\n" + held), Mirrors()) == []
    more = _plan(tmp_path, kb, "installer: pip\n" + held.replace('["six==1.17.0"]', '["six==1.17.0", "idna==3.10"]'))
    assert [d.what for d in downloads(more, Mirrors())] == ["PyPI"]


def test_a_conda_build_needs_micromamba_and_its_channels(tmp_path: Path, kb: KnowledgeBase) -> None:
    plan = _plan(tmp_path, kb, "installer: conda\nchannels: [conda-forge, nvidia]\npackages: {conda: [numpy=1.26.4]}\n")
    found = downloads(plan, Mirrors(conda_channels={"nvidia": "https://mirror.example/nvidia"}))
    assert [d.what for d in found][:3] == ["micromamba", "conda channel conda-forge", "conda channel nvidia"]
    assert found[0].url.startswith("https://github.com/mamba-org/micromamba-releases/")
    assert [d.url for d in found[1:3]] == ["https://conda.anaconda.org/conda-forge", "https://mirror.example/nvidia"]


def test_check_states_what_the_build_downloads_without_trying(tmp_path: Path) -> None:
    (tmp_path / "d.yaml").write_text(HEAD + 'installer: pip\nframeworks: {pytorch: "2.12.0+cpu"}\n')
    started = time.monotonic()
    result = CliRunner().invoke(app, ["check", str(tmp_path / "d.yaml")])
    line = next(x for x in result.output.splitlines() if x.startswith("the build downloads from:"))
    assert "PyTorch's index (torch==2.12.0+cpu) https://download.pytorch.org/whl/cpu" in line, line
    assert f"not tried here: `envgen doctor --profile {tmp_path / 'd.yaml'}` tries each" in line, line
    assert "mirrors.pytorch_wheels" in line
    assert time.monotonic() - started < 10


def test_a_refused_host_is_named_and_an_answering_one_is_not(tmp_path: Path, server: str,
                                                              kb: KnowledgeBase) -> None:
    assert try_url(f"{server}/simple/") is None  # 404 from a real server: reached
    assert try_url(f"{REFUSED}/whl/cpu") == "Connection refused"
    plan = _plan(tmp_path, kb, 'installer: pip\nframeworks: {pytorch: "2.12.0+cpu"}\n')
    found = downloads(plan, Mirrors(pytorch_wheels=f"{REFUSED}/whl", pip_index_url=f"{server}/simple"))
    asked: list[str] = []

    def probe(url: str) -> str | None:
        asked.append(url)
        return try_url(url)

    state = tmp_path / "state"
    assert [(d.url, why) for d, why in blocked(found, state, probe)] == [(f"{REFUSED}/whl/cpu", "Connection refused")]
    assert blocked(found, state, probe) and len(asked) == 2  # the second time from the kept answers


def test_a_build_that_cannot_fetch_stops_at_once_naming_the_route(tmp_path: Path, server: str,
                                                                   kb: KnowledgeBase) -> None:
    plan = _plan(tmp_path, kb, 'installer: pip\nframeworks: {pytorch: "2.12.0+cpu"}\n')
    found = downloads(plan, Mirrors(pytorch_wheels=f"{REFUSED}/whl", pip_index_url=f"{server}/simple"))
    said: list[str] = []
    started = time.monotonic()
    with pytest.raises(BuildFailed) as info:
        ensure_fetchable(found, tmp_path / "state", wheelhouse=None, offline=False, echo=said.append)
    assert time.monotonic() - started < 5
    text = info.value.one_line()
    assert f"PyTorch's index (torch==2.12.0+cpu) {REFUSED}/whl/cpu (Connection refused)" in text, text
    assert "mirrors.pytorch_wheels" in text and "--wheelhouse DIR --offline" in text, text
    house = tmp_path / "wheels"
    house.mkdir()
    ensure_fetchable(found, tmp_path / "state", wheelhouse=house, offline=True, echo=said.append)  # all pip's
    unreached = downloads(plan, Mirrors(pip_index_url=f"{REFUSED}/simple"), house)[-1:]
    ensure_fetchable(unreached, tmp_path / "state2", wheelhouse=house, offline=False, echo=said.append)
    assert said and "the wheelhouse" in said[0] and "--offline" in said[0], said


def test_the_builds_proxy_is_the_one_tried(server: str) -> None:
    """mirrors.http_proxy reaches for the build what this host cannot resolve: the probe asks through it (here a
    real local HTTP server standing as the proxy; it answers, so the host counts as reached)."""
    from envgen.pipeline.fetch import probe_for

    url = "http://envgen-no-such-host.invalid/simple/"
    assert try_url(url) is not None
    assert probe_for(server, None)(url) is None
    assert probe_for(None, None) is try_url
