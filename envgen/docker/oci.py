"""Attestations beside an image in its registry, through the distribution API (the engine has no call for them).

Stored as cosign stores them: an OCI manifest whose layers are DSSE envelopes
(``application/vnd.dsse.envelope.v1+json``), with ``subject`` naming the image's manifest, pushed by digest; where
the registry does not answer with ``OCI-Subject`` (no OCI 1.1 referrers API, Debian's docker-registry 2.8 among
them) it is also tagged ``sha256-<hex>.att``, cosign's tag scheme. Read back through the referrers API, else that
tag. Plain HTTP for a loopback registry (as the engine does), HTTPS otherwise with ``/etc/docker/certs.d/HOST/ca.crt``
where it exists; the engine's login (``$DOCKER_CONFIG/config.json`` ``auths``) by Basic auth or a bearer token.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import json
import os
import socket
import ssl
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envgen.errors import RegistryError
from envgen.imageref import parse_ref, registry_host

DSSE_MEDIA_TYPE = "application/vnd.dsse.envelope.v1+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
EMPTY_CONFIG = "application/vnd.oci.empty.v1+json"
MANIFEST_TYPES = ", ".join(("application/vnd.docker.distribution.manifest.v2+json", OCI_MANIFEST,
                            "application/vnd.oci.image.index.v1+json",
                            "application/vnd.docker.distribution.manifest.list.v2+json"))
TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Repository:
    host: str
    name: str  # the repository path inside the registry

    @classmethod
    def of(cls, ref: str) -> Repository:
        host = registry_host(ref)
        if not host:
            raise RegistryError(f"{ref} names no registry host", fix="give HOST[:PORT]/NAME")
        return cls(host, parse_ref(ref).name[len(host) + 1:])

    @property
    def hostname(self) -> str:
        return self.host.rsplit(":", 1)[0].strip("[]") if not self.host.endswith("]") else self.host.strip("[]")

    @property
    def base(self) -> str:
        """Plain HTTP where the engine speaks it by default (127.0.0.0/8, localhost), HTTPS elsewhere."""
        plain = self.hostname == "localhost" or self.hostname.startswith("127.")
        return f"{'http' if plain else 'https'}://{self.host}/v2/{self.name}"

    @property
    def loopback(self) -> bool:
        try:
            found = {str(info[4][0]) for info in socket.getaddrinfo(self.hostname, None)}
        except OSError:
            return False
        return bool(found) and all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in found)


def _credentials(host: str) -> str | None:
    """The engine's stored login for ``host`` (``user:password``), if any."""
    folder = Path(os.environ.get("DOCKER_CONFIG") or Path.home() / ".docker")
    try:
        auths = json.loads((folder / "config.json").read_text(encoding="utf-8")).get("auths") or {}
        encoded = (auths.get(host) or auths.get(f"https://{host}") or {}).get("auth")
        return base64.b64decode(encoded).decode() if encoded else None
    except (OSError, ValueError, AttributeError):
        return None


class Client:
    """One repository's distribution API, with the engine's TLS trust and login."""

    def __init__(self, repo: Repository) -> None:
        self.repo = repo
        ca = Path("/etc/docker/certs.d") / repo.host / "ca.crt"
        self.tls = ssl.create_default_context()
        if ca.is_file():
            self.tls.load_verify_locations(cafile=str(ca))
        self.auth: str | None = None
        # a registry on this machine is reached directly (the engine does too), never through a proxy
        handlers: list[urllib.request.BaseHandler] = [urllib.request.HTTPSHandler(context=self.tls)]
        if repo.loopback:
            handlers.append(urllib.request.ProxyHandler({}))
        self.opener = urllib.request.build_opener(*handlers)

    def request(self, method: str, url: str, body: bytes | None = None,
                headers: Mapping[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
        for attempt in range(2):
            sent = dict(headers or {})
            if self.auth:
                sent["Authorization"] = self.auth
            request = urllib.request.Request(url, data=body, method=method, headers=sent)
            try:
                with self.opener.open(request, timeout=TIMEOUT_S) as answer:
                    return answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read()
            except urllib.error.HTTPError as exc:
                if exc.code == 401 and attempt == 0 and self._login(exc.headers.get("WWW-Authenticate", "")):
                    continue
                if exc.code in (401, 403):
                    break
                return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()
            except (urllib.error.URLError, OSError) as exc:
                raise RegistryError(f"cannot reach the registry {self.repo.host} for attestations ({exc})",
                                    fix="check the registry address and the network", cause="unreachable") from None
        raise RegistryError(f"the registry {self.repo.host} refused access to {self.repo.name} (its manifests and "
                            "signed validations)",
                            fix=f"log in first: docker login {self.repo.host}", cause="denied")

    def _login(self, challenge: str) -> bool:
        creds = _credentials(self.repo.host)
        scheme, _, params = challenge.partition(" ")
        if scheme.lower() == "basic" and creds:
            self.auth = "Basic " + base64.b64encode(creds.encode()).decode()
            return True
        if scheme.lower() != "bearer":
            return False
        fields = dict(part.split("=", 1) for part in params.replace('"', "").split(",") if "=" in part)
        query = urllib.parse.urlencode({k: v for k, v in fields.items() if k in ("service", "scope")}
                                       | {"scope": f"repository:{self.repo.name}:pull,push"})
        headers = {"Authorization": "Basic " + base64.b64encode(creds.encode()).decode()} if creds else {}
        try:
            request = urllib.request.Request(f"{fields.get('realm', '')}?{query}", headers=headers)
            with self.opener.open(request, timeout=TIMEOUT_S) as answer:
                token = json.loads(answer.read())
        except (urllib.error.URLError, OSError, ValueError):
            return False
        self.auth = "Bearer " + str(token.get("token") or token.get("access_token") or "")
        return True

    def put_blob(self, data: bytes) -> str:
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        status, headers, _ = self.request("POST", f"{self.repo.base}/blobs/uploads/")
        location = headers.get("location", "")
        if status != 202 or not location:
            raise self._refused("upload a blob", status)
        location = urllib.parse.urljoin(self.repo.base, location)
        joiner = "&" if "?" in location else "?"
        status, _, _ = self.request("PUT", f"{location}{joiner}digest={digest}", data,
                                    {"Content-Type": "application/octet-stream"})
        if status != 201:
            raise self._refused("upload a blob", status)
        return digest

    def manifest(self, reference: str) -> tuple[str, bytes] | None:
        """(digest, body) of a manifest by tag or digest; None when the registry has none."""
        status, headers, body = self.request("GET", f"{self.repo.base}/manifests/{reference}",
                                             headers={"Accept": MANIFEST_TYPES})
        if status == 404:
            return None
        if status != 200:
            raise self._refused(f"read the manifest {reference}", status)
        return headers.get("docker-content-digest") or "sha256:" + hashlib.sha256(body).hexdigest(), body

    def _refused(self, action: str, status: int) -> RegistryError:
        return RegistryError(f"the registry {self.repo.host} answered {status} when envgen tried to {action} "
                             f"of {self.repo.name}'s attestation", fix="check the registry and the login")


def attestation_tag(digest: str) -> str:
    return digest.replace(":", "-") + ".att"


def push_attestation(ref: str, subject_digest: str, subject: bytes, envelope: bytes, predicate_type: str) -> str:
    """Store ``envelope`` beside the image ``ref`` whose manifest (``subject``, digest ``subject_digest``) it is
    about, its layer annotated as cosign annotates one (an empty ``dev.cosignproject.cosign/signature``: the
    signature is inside the envelope, and the ``predicateType``); returns where it went (``name@digest`` or
    ``name:sha256-….att``)."""
    client = Client(Repository.of(ref))
    config_digest = client.put_blob(b"{}")
    layers = [{"mediaType": DSSE_MEDIA_TYPE, "digest": client.put_blob(envelope), "size": len(envelope),
               "annotations": {"dev.cosignproject.cosign/signature": "", "predicateType": predicate_type}}]
    previous = client.manifest(attestation_tag(subject_digest))
    if previous is not None:  # cosign's tag holds every attestation of the digest: keep the others
        kept = json.loads(previous[1]).get("layers") or []
        layers = [*[layer for layer in kept if layer.get("digest") != layers[0]["digest"]], *layers]
    media = json.loads(subject).get("mediaType") or "application/vnd.docker.distribution.manifest.v2+json"
    document = {"schemaVersion": 2, "mediaType": OCI_MANIFEST, "artifactType": DSSE_MEDIA_TYPE,
                "config": {"mediaType": EMPTY_CONFIG, "digest": config_digest, "size": 2}, "layers": layers,
                "subject": {"mediaType": media, "digest": subject_digest, "size": len(subject)}}
    body = json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
    digest = "sha256:" + hashlib.sha256(body).hexdigest()
    status, headers, _ = client.request("PUT", f"{client.repo.base}/manifests/{digest}", body,
                                        {"Content-Type": OCI_MANIFEST})
    if status != 201:
        raise client._refused("store the manifest", status)
    if headers.get("oci-subject") == subject_digest:
        return f"{client.repo.host}/{client.repo.name}@{digest}"
    tag = attestation_tag(subject_digest)
    status, _, _ = client.request("PUT", f"{client.repo.base}/manifests/{tag}", body, {"Content-Type": OCI_MANIFEST})
    if status != 201:
        raise client._refused("tag the manifest", status)
    return f"{client.repo.host}/{client.repo.name}:{tag}"


def _envelopes(client: Client, manifest: bytes) -> list[dict[str, Any]]:
    found = []
    for layer in json.loads(manifest).get("layers") or []:
        if layer.get("mediaType") != DSSE_MEDIA_TYPE:
            continue
        status, _, blob = client.request("GET", f"{client.repo.base}/blobs/{layer.get('digest')}")
        if status == 200 and hashlib.sha256(blob).hexdigest() == str(layer.get("digest")).split(":")[-1]:
            try:
                found.append(json.loads(blob))
            except ValueError:
                continue
    return found


def fetch_attestations(ref: str, subject_digest: str) -> list[dict[str, Any]]:
    """The envelopes stored beside ``ref``'s manifest ``subject_digest``: its referrers, else cosign's tag."""
    client = Client(Repository.of(ref))
    manifests: list[bytes] = []
    status, _, body = client.request("GET", f"{client.repo.base}/referrers/{subject_digest}",
                                     headers={"Accept": "application/vnd.oci.image.index.v1+json"})
    if status == 200:
        for entry in json.loads(body).get("manifests") or []:
            found = client.manifest(str(entry.get("digest")))
            if found is not None:
                manifests.append(found[1])
    tagged = client.manifest(attestation_tag(subject_digest))
    if tagged is not None:
        manifests.append(tagged[1])
    return [envelope for manifest in manifests for envelope in _envelopes(client, manifest)]


def image_manifest(ref: str) -> tuple[str, bytes]:
    """(digest, body) of the manifest ``ref``'s tag names now."""
    parsed = parse_ref(ref)
    client = Client(Repository.of(ref))
    found = client.manifest(parsed.digest or parsed.tag or "latest")
    if found is None:
        raise RegistryError(f"{client.repo.host} has no image {ref}", fix="check the name, or push it first",
                            cause="missing")
    return found
