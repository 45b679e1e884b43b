"""The Requires-Dist refresh tool (tools.kbrefresh.requires) on recorded PyPI inputs: the simple-index entries
and the core-metadata files of tensorflow 2.15.1 and torch 2.1.2 (tests/fixtures/pypi/, fetched from PyPI by
the tool itself), and the wheel range reader against a real zip served over loopback HTTP."""

from __future__ import annotations

import hashlib
import http.server
import io
import json
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from envgen.kb import load_kb
from tools.kbrefresh import requires, wheel_stream

PYPI = Path(__file__).resolve().parents[1] / "fixtures" / "pypi"
TF_META = PYPI / "tensorflow-2.15.1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl.metadata"
TORCH_META = PYPI / "torch-2.1.2-cp311-cp311-manylinux1_x86_64.whl.metadata"


def _index(name: str) -> list[dict[str, object]]:
    files: list[dict[str, object]] = json.loads((PYPI / f"{name}.simple.json").read_text())["files"]
    return files


def _row(name: str, version: str, meta: Path) -> dict[str, object]:
    wheel, pythons = requires.pick_wheels(_index(f"{name}-{version}"), name, version)
    assert wheel["filename"] == meta.name.removesuffix(".metadata")
    return requires.row(name, version, str(wheel["url"]), str(wheel["hashes"]["sha256"]),  # type: ignore[index]
                        meta.read_text(), pythons)


def test_tensorflow_and_cuda_pins_and_ranges() -> None:
    row = _row("tensorflow", "2.15.1", TF_META)
    assert row["python"] == ["3.9", "3.10", "3.11"]
    reqs = {(r["name"], r.get("extra", "")): r.get("spec", "") for r in row["requires"]}  # type: ignore[attr-defined]
    assert reqs[("numpy", "")] == "<2.0.0,>=1.23.5"
    assert reqs[("protobuf", "")].endswith("<5.0.0dev,>=3.20.3")
    assert reqs[("nvidia-cudnn-cu12", "and-cuda")] == "==8.9.4.25"
    assert reqs[("nvidia-nccl-cu12", "and-cuda")] == "==2.16.5"
    assert "build" not in row


def test_torch_pins_name_their_cuda_build() -> None:
    row = _row("torch", "2.1.2", TORCH_META)
    assert row["build"] == "cu121"  # from nvidia-cuda-runtime-cu12==12.1.105, not typed
    reqs = {r["name"]: r.get("spec", "") for r in row["requires"]}  # type: ignore[attr-defined]
    assert reqs["nvidia-cudnn-cu12"] == "==8.9.2.26" and reqs["triton"] == "==2.1.0"


def test_the_knowledge_base_rows_are_the_tools_output() -> None:
    """framework_requires.yaml holds exactly what the tool makes of the recorded metadata: never typed by hand."""
    kb = load_kb()
    for name, version, meta in (("tensorflow", "2.15.1", TF_META), ("torch", "2.1.2", TORCH_META)):
        made = _row(name, version, meta)
        stored = kb.requires_of(name, version, str(made.get("build")) if made.get("build") else None)
        assert stored is not None
        assert stored.model_dump(mode="json", exclude_defaults=True, exclude={"requires"}) | {
            "requires": [r.as_dict() for r in stored.requires]} == made


def test_releases_of_a_specifier() -> None:
    from packaging.requirements import Requirement

    assert requires.releases(_index("torch-2.1.2"), Requirement("torch>=2.1")) == ["2.1.2"]
    assert requires.releases(_index("torch-2.1.2"), Requirement("torch<2.1")) == []


def test_merge_replaces_rows_of_the_same_key(tmp_path: Path) -> None:
    target = tmp_path / "framework_requires.yaml"
    old = _row("torch", "2.1.2", TORCH_META) | {"requires": []}
    target.write_text(yaml.safe_dump({"framework_requires": [old]}))
    text = requires.merge(target, [_row("tensorflow", "2.15.1", TF_META), _row("torch", "2.1.2", TORCH_META)])
    rows = yaml.safe_load(text)["framework_requires"]
    assert [(r["distribution"], r["version"]) for r in rows] == [("tensorflow", "2.15.1"), ("torch", "2.1.2")]
    assert rows[1]["requires"]
    assert text.startswith("# Frameworks' own dependency pins")


def test_main_reads_a_saved_metadata_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = "https://files.pythonhosted.org/packages/x/" + TF_META.name.removesuffix(".metadata")
    assert requires.main(["--metadata", str(TF_META), "--wheel", f"{url}#sha256=ab12", "--python", "3.11"]) == 0
    rows = yaml.safe_load(capsys.readouterr().out)["framework_requires"]
    assert rows[0]["version"] == "2.15.1" and "sha256 ab12" in rows[0]["source"]


class _Ranges(http.server.BaseHTTPRequestHandler):
    """Serves one file, honouring single byte-range requests, 404 for anything else (no PEP 658 file)."""

    body = b""

    def do_HEAD(self) -> None:  # noqa: N802 (http.server's name)
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        if not self.path.endswith(".whl"):
            self.send_error(404)
            return
        if "Range" not in self.headers:  # the whole file (wheel_stream's one pass)
            self.do_HEAD()
            self.wfile.write(self.body)
            return
        start, _, end = self.headers["Range"].removeprefix("bytes=").partition("-")
        chunk = self.body[int(start): int(end) + 1]
        self.send_response(206)
        self.send_header("Content-Length", str(len(chunk)))
        self.end_headers()
        self.wfile.write(chunk)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def served_wheel() -> Iterator[tuple[str, int]]:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as wheel:
        wheel.writestr("tensorflow/__init__.py", b"#" * 200_000)
        wheel.writestr("tensorflow-2.15.1.dist-info/METADATA", TF_META.read_bytes())
    _Ranges.body = buffer.getvalue()
    server = http.server.HTTPServer(("127.0.0.1", 0), _Ranges)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/tensorflow-2.15.1-py3-none-any.whl", len(_Ranges.body)
    finally:
        server.shutdown()
        server.server_close()


def test_metadata_read_out_of_the_wheel_by_ranges(served_wheel: tuple[str, int]) -> None:
    url, size = served_wheel
    assert requires.wheel_metadata(url, size) == TF_META.read_text()


def _streamed(source: str) -> tuple[wheel_stream.StreamResult, dict[str, bytes]]:
    got: dict[str, bytes] = {}
    result = wheel_stream.stream(source, lambda name: name.endswith((".py", "METADATA")),
                                 lambda name, chunk: got.update({name: got.get(name, b"") + chunk}))
    return result, got


def test_a_served_wheel_streams_in_one_pass(served_wheel: tuple[str, int]) -> None:
    """The central directory by range requests (zipfile), the body in one GET: the whole file's sha256 and each
    chosen member's bytes, as zipfile reads them."""
    url, size = served_wheel
    result, got = _streamed(url)
    with zipfile.ZipFile(io.BytesIO(_Ranges.body)) as wheel:
        assert got == {name: wheel.read(name) for name in wheel.namelist()}
    assert (result.sha256, result.size, result.read_bytes) == (hashlib.sha256(_Ranges.body).hexdigest(), size, size)


def test_a_zip64_wheel_streams_like_any_other(tmp_path: Path) -> None:
    wheel_path = tmp_path / "big-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel_path, "w", zipfile.ZIP_DEFLATED) as wheel:
        for index in range(3):
            with wheel.open(f"big/part{index}.py", "w", force_zip64=True) as member:
                member.write(f"# part {index}\n".encode() * 5000)
        wheel.writestr("big/data.bin", b"\0" * 1000)  # not chosen: skipped, still hashed
    result, got = _streamed(str(wheel_path))
    with zipfile.ZipFile(wheel_path) as wheel:
        assert got == {name: wheel.read(name) for name in wheel.namelist() if name.endswith(".py")}
    assert result.sha256 == hashlib.sha256(wheel_path.read_bytes()).hexdigest()
    assert result.members == [f"big/part{index}.py" for index in range(3)]


# recorded from https://pypi.org/simple/jax/ (PEP 691 JSON, 2026-12-01): jax 0.4.26 has a pure-Python wheel only
JAX = [{"filename": "jax-0.4.26-py3-none-any.whl", "requires-python": ">=3.9", "yanked": False,
        "url": "https://files.pythonhosted.org/packages/dc/d9/f387d9dfb2cf00f814b24e0f8bf6f4c68ae01870994dc436993fadd73563/"
               "jax-0.4.26-py3-none-any.whl"},
       {"filename": "jax-0.4.26.tar.gz", "requires-python": ">=3.9", "yanked": False}]


def test_a_release_without_a_cpython_wheel_takes_its_pure_wheel() -> None:
    from packaging.requirements import Requirement

    wheel, pythons = requires.pick_wheels(JAX, "jax", "0.4.26")
    assert wheel["filename"] == "jax-0.4.26-py3-none-any.whl"
    assert pythons == ["3.9", "3.10", "3.11", "3.12", "3.13", "3.14"]  # its Requires-Python, up to 3.14
    assert requires.releases(JAX, Requirement("jax>=0.4")) == ["0.4.26"]
