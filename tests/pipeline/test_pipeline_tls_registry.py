"""`envgen push`/`pull` against registries the way users have them (issue #12): TLS with a CA the tests
make (trusted through /etc/docker/certs.d/HOST:PORT/ca.crt) and htpasswd (bcrypt) auth, credentials
from `docker login` in a temporary DOCKER_CONFIG (the user's own Docker login is never read or written).
Also: a wrong password, an untrusted and an expired certificate, a registry that dies mid-push; and no
credential in any output, log, state record or image label.

Cost: one tiny build (BuildKit cache shared with the other pipeline tests), five registry processes
(< 1 s each to start), one push of the image (~100 MB through TLS on loopback) and one pull; about
1-2 minutes warm, most of it the build, the pull's smoke test and the engine's retries after the
registry died.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from base64 import b64encode
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from envgen.docker import inspect_image, remove_image
from envgen.errors import RegistryError
from envgen.pipeline.build import BuildOutcome, build
from envgen.pipeline.publish import remote_ref
from tests.conftest import session_namespace
from tests.pipeline.conftest import alias, minimal_profile
from tests.tlsregistry import (
    LOOPBACK_NAME,
    REGISTRY_BIN,
    DyingProxy,
    Registry,
    free_port,
    htpasswd_line,
    loopback_name,
    make_pki,
    trust,
    untrust,
    write_registry,
)

if TYPE_CHECKING:
    from docker import DockerClient

NAME = "pipe-tls"
USER = "envgen-tester"


@dataclass
class Setup:
    host: str
    password: str
    registry: Registry
    docker_config: Path
    tmp: Path
    outputs: list[str]
    trusted: list[Path]
    started: list[Registry]

    @property
    def secrets(self) -> list[str]:
        return [self.password, b64encode(f"{USER}:{self.password}".encode()).decode()]

    def new_registry(self, label: str, *, expired: bool = False, trusted: bool = True) -> Registry:
        pki = make_pki(self.host, expired=expired)
        registry = write_registry(self.tmp / label, self.host, free_port(self.host), pki,
                                  htpasswd_line(USER, self.password))
        registry.start()
        self.started.append(registry)
        if trusted:
            self.trusted.append(trust(registry.address, pki.ca_pem))
        return registry

    def envgen(self, *args: str, docker_config: Path | None = None,
               timeout: float = 600) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "DOCKER_CONFIG": str(docker_config or self.docker_config)}
        proc = subprocess.run([sys.executable, "-m", "envgen", *args], capture_output=True, text=True, env=env,
                              timeout=timeout)
        self.outputs += [proc.stdout, proc.stderr]
        return proc

    def login(self, address: str) -> None:
        proc = subprocess.run(["docker", "login", address, "--username", USER, "--password-stdin"],
                              input=self.password, capture_output=True, text=True, timeout=60,
                              env={**os.environ, "DOCKER_CONFIG": str(self.docker_config)})
        assert proc.returncode == 0, proc.stderr


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory, docker_client: DockerClient,
          unavailable: Callable[[str], None]) -> Iterator[Setup]:
    if os.geteuid() != 0:
        unavailable("the TLS registry tests write /etc/docker/certs.d: run them as root")
    if not Path(REGISTRY_BIN).is_file():
        unavailable(f"{REGISTRY_BIN} missing (Debian's docker-registry; scripts/host-setup installs it)")
    host = loopback_name()
    if host is None:
        unavailable(f"{LOOPBACK_NAME} does not resolve to ::1 alone: scripts/host-setup writes it into /etc/hosts")
    assert host is not None
    tmp = tmp_path_factory.mktemp("tls-registry")
    docker_config = tmp / "docker-config"
    docker_config.mkdir()
    pki = make_pki(host)
    password = f"pw-{uuid.uuid4().hex}"
    registry = write_registry(tmp / "main", host, free_port(host), pki, htpasswd_line(USER, password))
    state = Setup(host, password, registry, docker_config, tmp, [], [trust(registry.address, pki.ca_pem)], [])
    registry.start()
    state.started.append(registry)
    try:
        state.login(registry.address)
        yield state
    finally:
        for running in state.started:
            running.stop()
            shutil.rmtree(running.root / "storage", ignore_errors=True)  # the pushed layers: ~100 MB each
        for directory in state.trusted:
            untrust(directory)


@pytest.fixture(scope="module")
def built(setup: Setup, envgen_home: Path, write_profile: Callable[[str, str], str],
          cleanup_tags: list[str]) -> BuildOutcome:
    write_profile(NAME, minimal_profile('"six==1.16.0"'))
    outcome = build(NAME)
    cleanup_tags += [outcome.tag, alias(NAME)]
    assert outcome.validated
    return outcome


def _repo(setup: Setup, registry: Registry, suffix: str = "") -> str:
    return f"{registry.address}/{session_namespace()}{suffix}"


def _one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == RegistryError.exit_code == 8, proc.stdout + proc.stderr  # a registry's refusal
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


def test_docker_login_credentials_push_and_pull(setup: Setup, built: BuildOutcome,
                                                docker_client: DockerClient) -> None:
    config = json.loads((setup.docker_config / "config.json").read_text())
    assert setup.registry.address in config["auths"]  # the credentials live in Docker's config, not envgen's
    repo = _repo(setup, setup.registry)
    proc = setup.envgen("push", NAME, "--registry", repo)
    assert proc.returncode == 0, proc.stderr
    remote = remote_ref(repo, built.tag)
    assert f"pushed {remote}@sha256:" in proc.stdout
    path = remote.split("/", 1)[1].rsplit(":", 1)[0]
    status, body = setup.registry.request(f"/v2/{path}/tags/list", USER, setup.password)
    assert status == 200 and built.tag.rsplit(":", 1)[1] in json.loads(body)["tags"]
    assert setup.registry.request(f"/v2/{path}/tags/list")[0] == 401  # anonymous: refused
    for tag in (built.tag, alias(NAME), remote):
        remove_image(docker_client, tag, force=True)
    assert inspect_image(docker_client, built.tag) is None
    # Without the login, the pull is refused with one line; with it, it works.
    empty = setup.tmp / "no-login"
    empty.mkdir(exist_ok=True)
    refused = _one_line_error(setup.envgen("pull", NAME, "--registry", repo, docker_config=empty))
    assert "refused access" in refused and f"docker login {setup.registry.address}" in refused
    proc = setup.envgen("pull", NAME, "--registry", repo)
    assert proc.returncode == 0, proc.stderr
    assert "smoke test on this host: pass" in proc.stdout and f"tagged {built.tag}" in proc.stdout


def test_wrong_password_is_one_line_and_leaves_no_tag(setup: Setup, built: BuildOutcome,
                                                      docker_client: DockerClient) -> None:
    # As after a password change: Docker's config still holds the old password.
    stale = setup.tmp / "stale-login"
    stale.mkdir(exist_ok=True)
    wrong = f"wrong-{uuid.uuid4().hex}"
    auth = b64encode(f"{USER}:{wrong}".encode()).decode()
    (stale / "config.json").write_text(json.dumps({"auths": {setup.registry.address: {"auth": auth}}}))
    repo = _repo(setup, setup.registry, "-wrong")
    line = _one_line_error(setup.envgen("push", NAME, "--registry", repo, docker_config=stale))
    assert "refused access" in line and f"docker login {setup.registry.address}" in line
    assert wrong not in line and auth not in line
    assert inspect_image(docker_client, remote_ref(repo, built.tag)) is None
    path = remote_ref(repo, built.tag).split("/", 1)[1].rsplit(":", 1)[0]
    assert setup.registry.request(f"/v2/{path}/tags/list", USER, setup.password)[0] == 404


@pytest.mark.parametrize(("label", "expired", "trusted", "problem"), [
    ("untrusted", False, False, "is signed by an authority this engine does not trust"),
    ("expired", True, True, "has expired or is not yet valid"),
])
def test_certificate_problems_are_named(setup: Setup, built: BuildOutcome, docker_client: DockerClient,
                                        label: str, expired: bool, trusted: bool, problem: str) -> None:
    registry = setup.new_registry(label, expired=expired, trusted=trusted)
    repo = _repo(setup, registry)
    line = _one_line_error(setup.envgen("push", NAME, "--registry", repo))
    assert f"the TLS certificate of {registry.address} {problem}" in line and "x509" in line, line
    assert inspect_image(docker_client, remote_ref(repo, built.tag)) is None


def test_registry_dying_mid_push_publishes_nothing(setup: Setup, built: BuildOutcome, envgen_home: Path,
                                                   docker_client: DockerClient) -> None:
    registry = setup.new_registry("dying")
    proxy = DyingProxy(setup.host, registry, limit=4 << 20)  # dies after 4 MiB of the upload
    pki_ca = (registry.root / "ca.crt").read_bytes()
    setup.trusted.append(trust(proxy.address, pki_ca))
    try:
        setup.login(proxy.address)
        repo = f"{proxy.address}/{session_namespace()}"
        line = _one_line_error(setup.envgen("push", NAME, "--registry", repo, timeout=300))
    finally:
        proxy.close()
    assert proxy.died.is_set(), "the registry should have died during the push"
    assert f"cannot push {remote_ref(repo, built.tag)}" in line
    assert inspect_image(docker_client, remote_ref(repo, built.tag)) is None
    # Nothing is recorded as pushed, and the registry, back up, has no such tag.
    state_files = [p for p in (envgen_home / "state").rglob("*") if p.is_file()]
    assert not [p for p in state_files if proxy.address in p.read_text(errors="replace")]
    registry.start()
    path = f"{session_namespace()}/{NAME}"
    status, _ = registry.request(f"/v2/{path}/manifests/{built.tag.rsplit(':', 1)[1]}", USER, setup.password)
    assert status == 404


def test_no_credential_in_outputs_logs_state_or_labels(setup: Setup, built: BuildOutcome, envgen_home: Path,
                                                       docker_client: DockerClient) -> None:
    assert setup.outputs, "run with the other tests of this module"
    texts = list(setup.outputs)
    texts += [p.read_text(errors="replace") for p in (envgen_home / "state").rglob("*") if p.is_file()]
    for image in docker_client.images.list():
        if any(t.split("/", 1)[-1].startswith(session_namespace() + "/") or t.startswith(session_namespace() + "/")
               for t in image.tags):
            texts.append(json.dumps(image.labels))
            texts.append(json.dumps(image.attrs.get("Config", {}).get("Env")))
    for secret in setup.secrets:
        leaks = [text[:200] for text in texts if secret in text]
        assert not leaks, f"a credential leaked: {leaks}"
