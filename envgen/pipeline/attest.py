"""A validation as a signed statement about a digest: an in-toto Statement v1 in a DSSE envelope, signed with the
user's ed25519 key (``pipeline/keys.py``), the format cosign's ``attest --type`` writes.

Subject: the image's config digest (its image ID, which covers its layers' diff IDs) and each layer's diff ID;
once pushed, the registry's manifest digest too. Predicate (``PREDICATE_TYPE``): the profile and its hashes, the
resolved packages' sha256 (the lock as built), the probe's report and tier, the host's GPUs and driver as the probe
saw them, envgen's version. An image is validated only where a trusted key's statement names exactly its digest
(``verify``); labels say what an image claims, never that it passed.

Local copies: ``<state_dir>/attestations/<image-id>.json``, the list of envelopes known for that image (signed
here, pulled from a registry, or loaded from a bundle).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envgen import __version__
from envgen.files import write_atomically

PAYLOAD_TYPE = "application/vnd.in-toto+json"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://envgen.dev/attestations/validation/v1"
CONFIG_SUBJECT = "image-config"  # the subject named by the image ID
LAYER_SUBJECT = "layer/"  # + index: a layer's diff ID


def pae(payload_type: str, body: bytes) -> bytes:
    """DSSE's pre-authentication encoding: what a signature covers."""
    kind = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(body), body)


def _hex(digest: str) -> str:
    return digest.split(":", 1)[1] if digest.startswith("sha256:") else digest


def subjects(image_id: str, layers: Sequence[str], named: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The statement's subject: the config digest, each layer's diff ID, and ``named`` digests (a registry name
    and its manifest digest)."""
    found = [{"name": CONFIG_SUBJECT, "digest": {"sha256": _hex(image_id)}}]
    found += [{"name": f"{LAYER_SUBJECT}{i}", "digest": {"sha256": _hex(d)}} for i, d in enumerate(layers)]
    found += [{"name": name, "digest": {"sha256": _hex(d)}} for name, d in sorted((named or {}).items())]
    return found


def statement(image_id: str, layers: Sequence[str], predicate: Mapping[str, Any],
              named: Mapping[str, str] | None = None) -> dict[str, Any]:
    return {"_type": STATEMENT_TYPE, "subject": subjects(image_id, layers, named),
            "predicateType": PREDICATE_TYPE, "predicate": dict(predicate)}


def predicate(*, profile: str, profile_hash: str, content_hash: str, freeze_sha256: str, report: Mapping[str, Any],
              tier: str, validated_at: str) -> dict[str, Any]:
    gpus = [{k: g.get(k) for k in ("name", "compute_capability") if k in g}
            for g in report.get("gpus") or [] if isinstance(g, dict)]
    return {"profile": profile, "profile_hash": profile_hash, "content_hash": content_hash,
            "lock": {"freeze_sha256": freeze_sha256}, "tier": tier, "mode": report.get("mode", ""),
            "host": {"gpus": gpus, "driver": report.get("driver")}, "report": dict(report),
            "envgen_version": __version__, "validated_at": validated_at}


def sign(document: Mapping[str, Any], private: Any, keyid: str) -> dict[str, Any]:
    """``document`` (a Statement) in a DSSE envelope signed by ``private`` (an Ed25519PrivateKey)."""
    body = json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
    signature = private.sign(pae(PAYLOAD_TYPE, body))
    return {"payloadType": PAYLOAD_TYPE, "payload": base64.b64encode(body).decode(),
            "signatures": [{"keyid": keyid, "sig": base64.b64encode(signature).decode()}]}


@dataclass(frozen=True)
class Verdict:
    """What the envelopes known for an image prove. ``validated``: a trusted key's statement names exactly this
    image; ``reason``: why not, in words; ``keyid``/``predicate``: the statement that validates it."""

    validated: bool
    reason: str = ""
    keyid: str = ""
    predicate: dict[str, Any] = field(default_factory=dict)

    @property
    def tier(self) -> str:
        return str(self.predicate.get("tier") or "")


def _verified_body(envelope: Mapping[str, Any], trusted: Mapping[str, Any]) -> tuple[str, bytes] | None:
    """(key id, payload) when a trusted key signed the envelope; None otherwise."""
    from cryptography.exceptions import InvalidSignature

    try:
        body = base64.b64decode(str(envelope["payload"]), validate=True)
        signed = pae(str(envelope["payloadType"]), body)
        signatures = list(envelope["signatures"])
    except (KeyError, TypeError, ValueError):
        return None
    for entry in signatures:
        for keyid, public in trusted.items():
            if isinstance(entry, dict) and entry.get("keyid") not in (None, "", keyid):
                continue
            try:
                public.verify(base64.b64decode(str(entry.get("sig", "")), validate=True), signed)
            except (InvalidSignature, ValueError, TypeError):
                continue
            return keyid, body
    return None


def _covers(document: Mapping[str, Any], image_id: str, layers: Sequence[str],
            named: Mapping[str, str]) -> bool:
    """Whether the statement's subject names exactly this image: its config digest, its layers in order, and the
    named digests asked for."""
    digests = {str(s.get("name")): str((s.get("digest") or {}).get("sha256"))
               for s in document.get("subject") or [] if isinstance(s, dict)}
    stated_layers = [digests[k] for k in sorted((k for k in digests if k.startswith(LAYER_SUBJECT)),
                                                key=lambda k: int(k[len(LAYER_SUBJECT):] or -1))]
    return (digests.get(CONFIG_SUBJECT) == _hex(image_id)
            and (not layers or stated_layers == [_hex(d) for d in layers])
            and all(digests.get(name) == _hex(d) for name, d in named.items()))


def verify(envelopes: Iterable[Mapping[str, Any]], trusted: Mapping[str, Any], image_id: str,
           layers: Sequence[str] = (), named: Mapping[str, str] | None = None) -> Verdict:
    """The first envelope signed by a trusted key whose statement names exactly ``image_id`` (with ``layers``
    and ``named`` digests where given), else why none does."""
    reasons: list[str] = []
    for envelope in envelopes:
        signed = _verified_body(envelope, trusted)
        if signed is None:
            ids = sorted({str(s.get("keyid", ""))[:12] for s in envelope.get("signatures") or []
                          if isinstance(s, dict)})
            reasons.append(f"signed by key {', '.join(ids) or '(none named)'}, which this host does not trust "
                           "(or the signature does not verify)")
            continue
        keyid, body = signed
        try:
            document = json.loads(body)
        except ValueError:
            reasons.append("a trusted key signed a payload that is not JSON")
            continue
        if (not isinstance(document, dict) or document.get("_type") != STATEMENT_TYPE
                or document.get("predicateType") != PREDICATE_TYPE):
            reasons.append("a trusted key signed something other than an envgen validation")
            continue
        if not _covers(document, image_id, layers, named or {}):
            reasons.append(f"key {keyid[:12]}'s signature covers another digest, not {image_id[:19]}")
            continue
        return Verdict(True, keyid=keyid, predicate=dict(document.get("predicate") or {}))
    return Verdict(False, reason="; ".join(dict.fromkeys(reasons)) or "no signed validation names it")


def signed_statement(envelope: Mapping[str, Any]) -> dict[str, Any]:
    """The statement an envelope carries, unverified (to re-sign its predicate for a pushed digest)."""
    try:
        data = json.loads(base64.b64decode(str(envelope["payload"])))
    except (KeyError, TypeError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class AttestationStore:
    """The envelopes known for each image, ``<state_dir>/attestations/<image-id>.json``."""

    def __init__(self, state_dir: Path) -> None:
        self.dir = Path(state_dir) / "attestations"

    def _path(self, image_id: str) -> Path:
        return self.dir / (_hex(image_id) + ".json")

    def get(self, image_id: str) -> list[dict[str, Any]]:
        try:
            data = json.loads(self._path(image_id).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        return [e for e in data if isinstance(e, dict)] if isinstance(data, list) else []

    def damaged(self, image_id: str) -> Path | None:
        """The image's file when it is there but not a JSON list (cut by a full disk, edited by hand)."""
        path = self._path(image_id)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return path
        return None if isinstance(data, list) else path

    def add(self, image_id: str, envelopes: Iterable[Mapping[str, Any]]) -> None:
        known = self.get(image_id)
        for envelope in envelopes:
            if dict(envelope) not in known:
                known.append(dict(envelope))
        write_atomically(self._path(image_id), json.dumps(known, indent=2, sort_keys=True) + "\n")
