"""A registry the way users have it (issue #12): Debian's `docker-registry` with TLS (a CA the tests make,
trusted by the engine through ``/etc/docker/certs.d/HOST:PORT/ca.crt``) and htpasswd (bcrypt) auth.

The engine treats every address in 127.0.0.0/8 as an insecure registry by default (``Insecure
Registries: 127.0.0.0/8`` in `docker info`): for those it skips certificate checks and falls back to
plain HTTP, so a registry on 127.0.0.1 can never show a certificate problem. These registries listen on
the IPv6 loopback address ``::1`` under a name that resolves to it alone (``LOOPBACK_NAME``, an
``/etc/hosts`` line scripts/host-setup writes): the engine resolves the name, finds no address in its
insecure ranges, and treats the registry as a secure one, like GHCR or a company Harbor, with full
certificate checks; the traffic never leaves the loopback interface. (The engine's 20.10 reference
parser refuses a bare ``[::1]:PORT`` in an image name, hence the name.)

Certificates: ``cryptography``; password hashes: ``bcrypt`` (both in the test extra of pyproject.toml);
the registry binary: Debian's ``docker-registry`` (scripts/host-setup installs it).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import ipaddress
import shutil
import socket
import ssl
import subprocess
import threading
import time
import urllib.error
import urllib.request
from base64 import b64encode
from dataclasses import dataclass, field
from pathlib import Path

CERTS_D = Path("/etc/docker/certs.d")
REGISTRY_BIN = "/usr/bin/docker-registry"


LOOPBACK_NAME = "envgen-tls-registry.test"  # scripts/host-setup: "::1 envgen-tls-registry.test" in /etc/hosts


def loopback_name() -> str | None:
    """``LOOPBACK_NAME`` when it resolves to ::1 and nothing else (so the engine checks certificates)."""
    try:
        found = {info[4][0] for info in socket.getaddrinfo(LOOPBACK_NAME, None)}
    except OSError:
        return None
    return LOOPBACK_NAME if found == {"::1"} else None


def free_port(host: str) -> int:
    """A port nobody listens on, outside the range of the plain registry on :5000."""
    with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port = int(sock.getsockname()[1])
    return port if port != 5000 else free_port(host)


@dataclass(frozen=True)
class Pki:
    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes


def _name(common: str):  # type: ignore[no-untyped-def]
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def make_pki(ip: str, *, expired: bool = False) -> Pki:
    """A CA and a server certificate for the name ``ip`` (and ::1) signed by it (valid now, or expired
    yesterday)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    now = dt.datetime.now(dt.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (x509.CertificateBuilder().subject_name(_name("envgen test CA")).issuer_name(_name("envgen test CA"))
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - dt.timedelta(days=30)).not_valid_after(now + dt.timedelta(days=30))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    start, end = (now - dt.timedelta(days=10), now - dt.timedelta(days=1)) if expired else \
        (now - dt.timedelta(hours=1), now + dt.timedelta(days=2))
    cert = (x509.CertificateBuilder().subject_name(_name(ip)).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(start).not_valid_after(end)
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(ip),
                                                        x509.IPAddress(ipaddress.ip_address("::1"))]), critical=False)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    return Pki(ca.public_bytes(pem), cert.public_bytes(pem),
               key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))


def htpasswd_line(user: str, password: str) -> str:
    import bcrypt

    return f"{user}:{bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=10)).decode()}\n"


@dataclass
class Registry:
    """One running `docker-registry serve` with TLS and htpasswd auth."""

    host: str
    port: int
    root: Path
    ca_pem: bytes
    process: subprocess.Popen[bytes] | None = None
    trusted_dirs: list[Path] = field(default_factory=list)

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def start(self, timeout_s: float = 20.0) -> None:
        log = open(self.root / "registry.log", "ab")  # noqa: SIM115 - the process keeps it
        self.process = subprocess.Popen([REGISTRY_BIN, "serve", str(self.root / "config.yml")],
                                        stdout=log, stderr=log, stdin=subprocess.DEVNULL)
        log.close()
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"docker-registry exited: {(self.root / 'registry.log').read_text()[-2000:]}")
            if self.v2_status() in (200, 401):
                return
            time.sleep(0.2)
        raise RuntimeError(f"docker-registry on {self.address} did not answer within {timeout_s}s")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()

    def _context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cadata=self.ca_pem.decode())
        context.check_hostname = False  # the certificate names the IP; some tests use an expired one
        context.verify_mode = ssl.CERT_NONE
        return context

    def request(self, path: str, user: str | None = None, password: str | None = None,
                method: str = "GET") -> tuple[int, bytes]:
        req = urllib.request.Request(f"https://{self.address}{path}", method=method)
        if user is not None:
            req.add_header("Authorization", "Basic " + b64encode(f"{user}:{password}".encode()).decode())
        req.add_header("Accept", "application/vnd.docker.distribution.manifest.v2+json")
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}),
                                             urllib.request.HTTPSHandler(context=self._context()))
        try:
            with opener.open(req, timeout=5) as response:
                return int(response.status), response.read()
        except urllib.error.HTTPError as exc:
            return int(exc.code), exc.read()

    def v2_status(self) -> int | None:
        try:
            return self.request("/v2/")[0]
        except OSError:
            return None


def write_registry(root: Path, host: str, port: int, pki: Pki, htpasswd: str) -> Registry:
    root.mkdir(parents=True, exist_ok=True)
    (root / "ca.crt").write_bytes(pki.ca_pem)
    (root / "server.crt").write_bytes(pki.cert_pem)
    (root / "server.key").write_bytes(pki.key_pem)
    (root / "htpasswd").write_text(htpasswd, encoding="utf-8")
    (root / "config.yml").write_text(f"""\
# envgen test registry: TLS with a test CA, htpasswd (bcrypt) auth, its own storage.
version: 0.1
log:
  level: info
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: {root / 'storage'}
  delete:
    enabled: true
http:
  addr: {host}:{port}
  tls:
    certificate: {root / 'server.crt'}
    key: {root / 'server.key'}
auth:
  htpasswd:
    realm: envgen-test
    path: {root / 'htpasswd'}
""", encoding="utf-8")
    return Registry(host, port, root, pki.ca_pem)


def trust(address: str, ca_pem: bytes) -> Path:
    """Let the engine trust ``ca_pem`` for ``address`` (read on every push/pull; no restart)."""
    directory = CERTS_D / address
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "ca.crt").write_bytes(ca_pem)
    return directory


def untrust(directory: Path) -> None:
    if directory.parent == CERTS_D:
        shutil.rmtree(directory, ignore_errors=True)


class DyingProxy:
    """A TCP forwarder in front of a registry that kills the registry after ``limit`` bytes went up:
    a registry that dies in the middle of a push (TLS passes through untouched)."""

    def __init__(self, host: str, registry: Registry, limit: int) -> None:
        self.registry, self.limit, self.sent = registry, limit, 0
        self.listener = socket.create_server((host, 0), family=socket.AF_INET6)
        self.port = int(self.listener.getsockname()[1])
        self.host = host
        self.died = threading.Event()
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def _accept(self) -> None:
        while not self.died.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection((self.registry.host, self.registry.port), timeout=5)
            except OSError:
                client.close()
                continue
            upstream.settimeout(None)
            self._sockets += [client, upstream]
            threading.Thread(target=self._pipe, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, False), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket, up: bool) -> None:
        with contextlib.suppress(OSError):
            while chunk := src.recv(65536):
                if up:
                    with self._lock:
                        self.sent += len(chunk)
                        if self.sent > self.limit and not self.died.is_set():
                            self.die()
                            return
                dst.sendall(chunk)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    def die(self) -> None:
        self.died.set()
        self.registry.kill()
        with contextlib.suppress(OSError):
            self.listener.close()
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.close()

    def close(self) -> None:
        self.died.set()
        with contextlib.suppress(OSError):
            self.listener.close()
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.close()
