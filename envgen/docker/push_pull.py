"""Push and pull through the SDK, with RegistryError naming the cause: registry down, unknown image, auth."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from envgen.docker.images import split_ref
from envgen.errors import RegistryError
from envgen.imageref import parse_ref, registry_host

if TYPE_CHECKING:
    from docker import DockerClient

StatusCallback = Callable[[str], None]


def registry_of(ref: str) -> str:
    """The registry host a reference points at ("docker.io" when the first part is not a host)."""
    return registry_host(ref) or "docker.io"


def explain(ref: str, action: str, detail: str) -> RegistryError:
    """One RegistryError for an engine/registry message, with a fix where the cause is clear."""
    registry = registry_of(ref)
    text = detail.lower()
    one = " ".join(detail.split())
    if "x509:" in text or ("certificate" in text and "tls" in text):
        return _certificate_error(ref, action, registry, text, one)
    if "http response to https client" in text:  # Podman: plain-HTTP registries only when listed as insecure
        return RegistryError(
            f"cannot {action} {ref}: the registry {registry} speaks plain HTTP and the engine asked for HTTPS",
            fix=f"mark it insecure: [[registry]] location=\"{registry}\" insecure=true in a file under "
            "/etc/containers/registries.conf.d/ (Podman), or in daemon.json insecure-registries (Docker)",
            cause="unreachable")
    if any(s in text for s in ("connection refused", "no such host", "i/o timeout", "network is unreachable",
                               "connection reset", "unexpected eof", "server misbehaving")):
        fix = "check the registry address and the network"
        if registry.startswith(("localhost", "127.0.0.1")):
            fix = "start the registry (scripts/host-setup starts one on localhost:5000)"
        return RegistryError(f"cannot {action} {ref}: the registry {registry} is not reachable ({one})",
                             fix=fix, cause="unreachable")
    if any(s in text for s in ("unauthorized", "authentication required", "denied", "no basic auth")):
        return RegistryError(f"cannot {action} {ref}: the registry {registry} refused access ({one})",
                             fix=f"log in first: docker login {registry}", cause="denied")
    if any(s in text for s in ("does not exist locally", "no such image", "an image does not exist",
                               "image not known", "tag does not exist:")):  # Podman's, Docker 26 containerd store's
        return RegistryError(f"cannot {action} {ref}: there is no local image with that name",
                             fix="build or tag it first", cause="local")
    if any(s in text for s in ("manifest unknown", "not found", "repository name not known",
                               "name unknown", "does not exist")):
        return RegistryError(f"cannot {action} {ref}: {registry} has no such image ({one})",
                             fix="check the name and tag, or push it first", cause="missing")
    return RegistryError(f"cannot {action} {ref}: {one}")


def _certificate_error(ref: str, action: str, registry: str, text: str, one: str) -> RegistryError:
    """A TLS certificate problem, named: expired, unknown authority, wrong name."""
    trust = f"/etc/docker/certs.d/{registry}/ca.crt"
    if "expired" in text or "not yet valid" in text:
        problem, fix = "has expired or is not yet valid", "renew the registry's certificate, or correct the clock"
    elif "unknown authority" in text:
        problem = "is signed by an authority this engine does not trust"
        fix = f"put the registry's CA certificate in {trust} (no restart needed)"
    elif "valid for" in text or "doesn't contain any ip sans" in text or "not valid for any names" in text:
        problem, fix = "does not name this address", f"use the name the certificate was issued for, not {registry}"
    else:
        problem, fix = "was refused", f"check the registry's certificate and {trust}"
    return RegistryError(f"cannot {action} {ref}: the TLS certificate of {registry} {problem} ({one})", fix=fix)


# "1: digest: sha256:f8b4… size: 429", the status line of a finished push
_STATUS_DIGEST = re.compile(r"digest: (sha256:[0-9a-f]{64}) size: \d+")


def _consume(ref: str, action: str, events: Iterable[dict[str, Any]],
             on_status: StatusCallback | None) -> dict[str, Any]:
    aux: dict[str, Any] = {}
    error: str | None = None
    for event in events:  # read to the end even after an error, so the engine closes the stream
        if error is not None:
            continue
        if "error" in event or "errorDetail" in event:
            error = str(event.get("error") or (event.get("errorDetail") or {}).get("message", ""))
            continue
        if isinstance(event.get("aux"), dict):
            aux.update(event["aux"])
        digest = _STATUS_DIGEST.search(str(event.get("status") or ""))
        if digest:  # Docker also sends it as aux; Podman (4.3) only in this status line
            aux.setdefault("Digest", digest.group(1))
        if on_status and event.get("status"):
            layer = f"{event['id']}: " if event.get("id") else ""
            on_status(f"{layer}{event['status']}")
    if error is not None:
        raise explain(ref, action, error)
    return aux


def probe_image(client: DockerClient, ref: str) -> None:
    """Ask ``ref``'s registry for its manifest through the engine (nothing is downloaded); RegistryError
    (``explain``) when the registry cannot answer, has no such image or refuses access."""
    with _engine_errors(ref, "fetch"):
        client.api.inspect_distribution(ref)


@contextlib.contextmanager
def _engine_errors(ref: str, action: str) -> Iterator[None]:
    """The engine's errors while it talks to ``ref``'s registry as one RegistryError (``explain``)."""
    from docker.errors import APIError, DockerException

    try:
        yield
    except RegistryError:
        raise
    except APIError as exc:
        raise explain(ref, action, str(exc.explanation or exc)) from None
    except (DockerException, OSError) as exc:
        raise explain(ref, action, str(exc)) from None


def push_image(client: DockerClient, ref: str, *, auth_config: Mapping[str, str] | None = None,
               on_status: StatusCallback | None = None) -> str:
    """Push ``ref`` (``registry/repo:tag``); returns the manifest digest ("sha256:...")."""
    repo, tag = split_ref(ref)
    with _engine_errors(ref, "push"):
        events = client.api.push(repo, tag=tag, stream=True, decode=True,
                                 auth_config=dict(auth_config) if auth_config else None)
        aux = _consume(ref, "push", events, on_status)
    digest = aux.get("Digest")
    if not isinstance(digest, str) or not digest.startswith("sha256:"):
        raise RegistryError(f"pushed {ref}, but the registry returned no digest")
    return digest


def pull_image(client: DockerClient, ref: str, *, auth_config: Mapping[str, str] | None = None,
               on_status: StatusCallback | None = None, platform: str | None = None) -> str:
    """Pull ``ref`` (by tag, or by digest: ``name[:tag]@sha256:...``); returns the local image ID. ``platform``:
    which image of a manifest list (default: the engine's, the host's platform)."""
    parsed = parse_ref(ref)
    if parsed.digest:  # the engine pulls repository + digest; a tag beside the digest is informative only
        repo, tag, local = parsed.name, parsed.digest, f"{parsed.name}@{parsed.digest}"
    else:
        (repo, tag), local = split_ref(ref), ref
    with _engine_errors(ref, "pull"):
        events = client.api.pull(repo, tag=tag, stream=True, decode=True, platform=platform,
                                 auth_config=dict(auth_config) if auth_config else None)
        _consume(ref, "pull", events, on_status)
        image_id = client.api.inspect_image(local)["Id"]
    return str(image_id)
