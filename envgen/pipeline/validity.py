"""Whether an image is validated: a trusted key's signed statement names exactly its digest
(``pipeline/attest.py``); and the signing of a probe's pass. Labels and validation records alone validate
nothing: a record of an envgen before the signatures reads "validated (unsigned, from its record)"."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envgen.errors import ImageNotValidated
from envgen.pipeline.attest import AttestationStore, Verdict, predicate, sign, statement, verify
from envgen.pipeline.keys import signing_key, trusted_keys
from envgen.pipeline.state import Validation, ValidationStore
from envgen.vocabulary import LABEL_FREEZE_SHA256, LABEL_PROFILE_HASH

if TYPE_CHECKING:
    from docker import DockerClient

    from envgen.docker import ImageSummary

UNSIGNED = "validated by an envgen before signed validations (unsigned, from its record)"


def sign_pass(client: DockerClient, state_dir: Path, validation: Validation,
              freeze_sha256: str | None = None) -> dict[str, Any] | None:
    """Sign a passing validation of an image envgen built (its statement names the image's digest) and keep the
    envelope in the local state; None for a failure or an image envgen did not build."""
    from envgen.docker import inspect_image

    if not validation.passed or validation.origin != "built":
        return None
    image = inspect_image(client, validation.image_id)
    if image is None:
        return None
    labels = image.labels
    frozen = freeze_sha256 or labels.get(LABEL_FREEZE_SHA256) or ""
    facts = predicate(profile=validation.profile, profile_hash=labels.get(LABEL_PROFILE_HASH, ""),
                      content_hash=validation.content_hash, freeze_sha256=frozen, report=validation.report,
                      tier=validation.tier, validated_at=validation.checked_at)
    key = signing_key(state_dir)
    envelope = sign(statement(image.id, image.layers, facts), key.private, key.keyid)
    AttestationStore(state_dir).add(image.id, [envelope])
    return envelope


def image_verdict(state_dir: Path, image: ImageSummary) -> Verdict:
    """What this host's trusted keys say of the image's known statements; a record without any says so."""
    store = AttestationStore(state_dir)
    envelopes = store.get(image.id)
    damaged = store.damaged(image.id) if not envelopes else None
    if damaged is not None:
        return Verdict(False, reason=f"its signed validations file {damaged} is damaged (not a JSON list); "
                                     "`envgen smoke` on this host signs the image again")
    if not envelopes:
        record = ValidationStore(state_dir).get(image.id)
        return Verdict(False, reason=UNSIGNED if record is not None and record.passed
                       else "no signed validation names its digest")
    return verified(state_dir, envelopes, image.id, image.layers)


def verified(state_dir: Path, envelopes: list[dict[str, Any]], image_id: str, layers: Sequence[str]) -> Verdict:
    """``verify(envelopes, trusted_keys(state_dir), image_id, layers)``, kept in the state directory
    (``verified/``) under a key over exactly what decides it: the envelopes, the bytes of every trusted key's file,
    the image ID and its layers' diff IDs, the code of ``attest.py`` and ``keys.py`` (and envgen's version) and
    cryptography's version. A changed statement, a key trusted or untrusted, another image or other code gives
    another key, so the signatures are checked again (importing ``cryptography``); an entry is only ever a verdict
    already reached on identical inputs. It sits beside the trusted keys and the envelopes: whoever could write it
    could trust a key of their own."""
    import json

    from envgen.cache import Store, package_file
    from envgen.pipeline import attest, keys

    folder = keys.key_dir(state_dir) / keys.TRUSTED
    trusted = [part for path in (sorted(folder.glob("*.pub")) if folder.is_dir() else [])
               for part in (path.name, _bytes(path))]
    store = Store(Path(state_dir) / "verified", "verdict-", codec="json")
    code = [*(_bytes(Path(module.__file__ or "")) for module in (attest, keys)),
            package_file("cryptography", "__about__.py")]  # the verifier's version, found without importing it
    key = store.key(json.dumps(envelopes, sort_keys=True), f"{len(trusted)} trusted", *trusted, image_id,
                    f"{len(layers)} layers", *layers, *code)
    kept = store.get(key)
    if isinstance(kept, dict) and isinstance(kept.get("validated"), bool):
        return Verdict(kept["validated"], str(kept.get("reason", "")), str(kept.get("keyid", "")),
                       dict(kept.get("predicate") or {}))
    verdict = verify(envelopes, trusted_keys(state_dir), image_id, layers)
    store.put(key, {"validated": verdict.validated, "reason": verdict.reason, "keyid": verdict.keyid,
                    "predicate": verdict.predicate})
    return verdict


def _bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b"unreadable"


def require_validated(state_dir: Path, image: ImageSummary, name: str, target: str, what: str) -> Verdict:
    """The image's verdict, or ImageNotValidated naming why (``what``: "pushed", "bundled")."""
    verdict = image_verdict(state_dir, image)
    if not verdict.validated:
        raise ImageNotValidated(f"{name} ({image.id[:19]}) is not validated, so it is not {what}: {verdict.reason}",
                                fix=f"run `envgen smoke {target}` on this host to validate and sign it, or trust "
                                    "the key that signed it (`envgen key trust FILE`)")
    return verdict

