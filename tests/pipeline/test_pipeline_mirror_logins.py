"""A pip index that needs a login, for real: a small index served on 127.0.0.1 with HTTP basic auth (one wheel made
here, ``envgen-credtest``), named in a profile as ``http://USER:TOKEN@127.0.0.1:PORT/simple/``. Both builders
install the wheel through it, and then neither the image's history (`docker history --no-trunc`), its labels and
config, any file in any of its layers (`docker save`), the rendered context, the build log nor the printed command
holds the login. BuildKit gets the login as the netrc secret (the printed `docker build` line, run with
``--network host`` so that the build reaches the loopback index); the classic builder never gets it: the host
downloads the wheels with it. Cost here: ~2 min (two small builds, one smoke test)."""

from __future__ import annotations

import base64
import hashlib
import io
import secrets
import subprocess
import threading
import zipfile
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from typer.testing import CliRunner

from envgen.cli import app
from envgen.docker import inspect_image
from envgen.pipeline.build import build
from tests.pipeline.conftest import alias, minimal_profile

if TYPE_CHECKING:
    from docker import DockerClient

pytestmark = pytest.mark.docker

USER = f"alice-{secrets.token_hex(3)}"
TOKEN = f"tok-{secrets.token_hex(12)}"
WHEEL = "envgen_credtest-0.1-py3-none-any.whl"

PROFILE = minimal_profile('"envgen-credtest==0.1"') + 'mirrors:\n  pip_extra_index_urls: ["INDEX"]\n'


def _wheel() -> bytes:
    """A pure-Python wheel, RECORD and all (PEP 427)."""
    files = {"envgen_credtest/__init__.py": b"VALUE = 'credtest'\n",
             "envgen_credtest-0.1.dist-info/METADATA": b"Metadata-Version: 2.1\nName: envgen-credtest\nVersion: 0.1\n",
             "envgen_credtest-0.1.dist-info/WHEEL":
                 b"Wheel-Version: 1.0\nGenerator: envgen-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    files["envgen_credtest-0.1.dist-info/RECORD"] = ("\n".join([*record, "envgen_credtest-0.1.dist-info/RECORD,,"])
                                                     + "\n").encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return out.getvalue()


class _Index(BaseHTTPRequestHandler):
    wheel = b""
    seen: list[tuple[str, bool]]  # noqa: RUF012 (set per server)

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        expected = "Basic " + base64.b64encode(f"{USER}:{TOKEN}".encode()).decode()
        allowed = self.headers.get("Authorization") == expected
        self.seen.append((self.path, allowed))
        if not allowed:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="credtest"')
            self.end_headers()
            return
        sha = hashlib.sha256(self.wheel).hexdigest()
        pages = {"/simple/": b'<a href="envgen-credtest/">envgen-credtest</a>',
                 "/simple/envgen-credtest/": f'<a href="/files/{WHEEL}#sha256={sha}">{WHEEL}</a>'.encode(),
                 f"/files/{WHEEL}": self.wheel}
        body = pages.get(self.path)
        if body is None:
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream" if self.path.endswith(".whl") else "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture(scope="module")
def index() -> Iterator[tuple[str, list[tuple[str, bool]]]]:
    """(URL with the login, the requests the server saw: path and whether the login came with it)."""
    seen: list[tuple[str, bool]] = []
    handler = type("Index", (_Index,), {"wheel": _wheel(), "seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://{USER}:{TOKEN}@127.0.0.1:{server.server_address[1]}/simple/", seen
    server.shutdown()
    server.server_close()


def _holds_no_login(docker_client: DockerClient, tag: str, *texts: str) -> None:
    """Neither the history, the config and labels, any layer's files, nor ``texts`` hold the user or the token."""
    history = subprocess.run(["docker", "history", "--no-trunc", "--format", "{{.CreatedBy}}", tag],
                             capture_output=True, text=True, check=True).stdout
    assert "envgen-credtest" in history or "pip" in history  # the history is there to look at
    config = subprocess.run(["docker", "inspect", tag], capture_output=True, text=True, check=True).stdout
    archive = subprocess.run(["docker", "save", tag], capture_output=True, check=True).stdout
    assert len(archive) > 10_000_000  # every layer, uncompressed: file names and contents alike
    for secret in (TOKEN, USER):
        assert secret not in history, history
        assert secret not in config
        assert secret.encode() not in archive
        for text in texts:
            assert secret not in text
    image = inspect_image(docker_client, tag)
    assert image is not None and all(TOKEN not in v for v in image.labels.values())


def _tree_holds(root: Path, secret: str) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def test_check_warns_of_a_login_in_a_profile(index: tuple[str, list[tuple[str, bool]]], envgen_home: Path,
                                             write_profile: Callable[[str, str], str]) -> None:
    name = write_profile("login-check", PROFILE.replace("INDEX", index[0]))
    result = CliRunner().invoke(app, ["check", name])
    assert result.exit_code == 0, result.output
    assert "[mirror-login] mirrors.pip_extra_index_urls[0] holds a login (http://***@127.0.0.1" in result.output
    assert "config.yaml" in result.output and TOKEN not in result.output and USER not in result.output


def test_buildkit_gets_the_login_as_a_secret(index: tuple[str, list[tuple[str, bool]]], envgen_home: Path,
                                             write_profile: Callable[[str, str], str], tmp_path: Path,
                                             docker_client: DockerClient, cleanup_tags: list[str]) -> None:
    url, seen = index
    name = write_profile("login-buildkit", PROFILE.replace("INDEX", url))
    out = tmp_path / "context"
    rendered = CliRunner().invoke(app, ["render", name, "-o", str(out)])
    assert rendered.exit_code == 0, rendered.output
    line = next(ln for ln in rendered.output.splitlines() if ln.startswith("build it with: "))
    assert "--secret id=netrc,src=" in line and "PIP_EXTRA_INDEX_URL=http://127.0.0.1:" in line
    assert not _tree_holds(out, TOKEN) and not _tree_holds(out, USER)
    tag = line.split(" -t ", 1)[1].split()[0]
    cleanup_tags.append(tag)
    command = line.removeprefix("build it with: ").replace(" build ", " build --network host --progress=plain ", 1)
    seen.clear()
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (f"/files/{WHEEL}", True) in seen  # the wheel came through the login
    assert not any(allowed is False and path.endswith(".whl") for path, allowed in seen)
    ran = subprocess.run(["docker", "run", "--rm", tag, "/opt/env/bin/python", "-c",
                          "import envgen_credtest as m; print(m.VALUE)"], capture_output=True, text=True)
    assert ran.stdout.strip() == "credtest", ran.stderr
    _holds_no_login(docker_client, tag, rendered.output, done.stdout, done.stderr)


def test_classic_builder_never_gets_the_login(index: tuple[str, list[tuple[str, bool]]], envgen_home: Path,
                                              write_profile: Callable[[str, str], str],
                                              docker_client: DockerClient, cleanup_tags: list[str]) -> None:
    url, seen = index
    name = write_profile("login-classic", PROFILE.replace("INDEX", url))
    lines: list[str] = []
    seen.clear()
    outcome = build(name, builder="classic", echo=lines.append)
    cleanup_tags += [outcome.tag, alias(name)]
    assert outcome.validated, outcome.summary()
    assert (f"/files/{WHEEL}", True) in seen  # the host's download used the login
    state = envgen_home / "state"
    assert outcome.log_path is not None
    logs = "\n".join(p.read_text(errors="replace") for p in outcome.log_path.parent.glob("*.log"))
    assert "envgen-credtest" in logs or "envgen_credtest" in logs
    _holds_no_login(docker_client, outcome.tag, "\n".join(lines), outcome.summary(), logs)
    assert not _tree_holds(state / "contexts", TOKEN) and not _tree_holds(state / "contexts", USER)
    logins = list((state / "secrets").iterdir())
    assert logins and all(p.stat().st_mode & 0o077 == 0 for p in logins)  # the user's alone
