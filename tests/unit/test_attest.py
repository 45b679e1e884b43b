"""Signed validations (issue #40): an in-toto Statement v1 in a DSSE envelope signed with the user's ed25519 key,
verified by envgen and by an independent verifier (securesystemslib's DSSE, the in-toto project's library); each
forgery refused with its reason. No engine: the image digests here are made up."""

from __future__ import annotations

import base64
import io
import json
import stat
import tarfile
from pathlib import Path

import pytest

from envgen.errors import BundleError, InputError
from envgen.pipeline import attest, keys
from envgen.pipeline.bundle_trust import archive_facts, refuse_names

IMAGE = "sha256:" + "a" * 64
OTHER = "sha256:" + "b" * 64
LAYERS = ("sha256:" + "1" * 64, "sha256:" + "2" * 64)
MANIFEST = "sha256:" + "c" * 64


def _facts() -> dict[str, object]:
    report = {"mode": "cpu-only", "tier": "cpu", "status": "pass", "gpus": [], "driver": None}
    return attest.predicate(profile="rel-minimal", profile_hash="p" * 64, content_hash="h" * 64,
                            freeze_sha256="f" * 64, report=report, tier="cpu", validated_at="2026-12-03T00:00:00Z")


def _signed(state: Path, image: str = IMAGE, named: dict[str, str] | None = None) -> dict[str, object]:
    key = keys.signing_key(state)
    return attest.sign(attest.statement(image, LAYERS, _facts(), named), key.private, key.keyid)


def test_a_signed_statement_verifies_for_exactly_its_image(tmp_path: Path) -> None:
    envelope = _signed(tmp_path)
    trusted = keys.trusted_keys(tmp_path)
    verdict = attest.verify([envelope], trusted, IMAGE, LAYERS)
    assert verdict.validated and verdict.tier == "cpu" and verdict.predicate["profile"] == "rel-minimal"
    # another image, other layers, a manifest digest it does not name: each refused, saying why
    assert "covers another digest" in attest.verify([envelope], trusted, OTHER).reason
    assert not attest.verify([envelope], trusted, IMAGE, LAYERS[:1]).validated
    assert not attest.verify([envelope], trusted, IMAGE, (), {"image-manifest": MANIFEST}).validated
    pushed = _signed(tmp_path, named={"image-manifest": MANIFEST})
    assert attest.verify([pushed], trusted, IMAGE, (), {"image-manifest": MANIFEST}).validated


def test_an_untrusted_key_or_an_altered_payload_validates_nothing(tmp_path: Path) -> None:
    envelope = _signed(tmp_path / "ci")
    verdict = attest.verify([envelope], keys.trusted_keys(tmp_path / "laptop"), IMAGE, LAYERS)
    assert not verdict.validated and "does not trust" in verdict.reason
    # the statement rewritten to name another image, the signature kept
    statement = attest.signed_statement(envelope)
    statement["subject"][0]["digest"]["sha256"] = OTHER[7:]
    forged = {**envelope, "payload": base64.b64encode(json.dumps(statement).encode()).decode()}
    assert not attest.verify([forged], keys.trusted_keys(tmp_path / "ci"), OTHER).validated
    # once the CI's public key is trusted, the same envelope validates
    exported = tmp_path / "ci.pub"
    exported.write_text(keys.key_action("export", tmp_path / "ci") + "\n")
    keys.trust(tmp_path / "laptop", exported)
    assert attest.verify([envelope], keys.trusted_keys(tmp_path / "laptop"), IMAGE, LAYERS).validated


def test_an_independent_dsse_verifier_accepts_the_envelope(tmp_path: Path) -> None:
    """securesystemslib (the in-toto project's crypto library) verifies envgen's envelope: the DSSE encoding,
    the ed25519 signature and the in-toto Statement v1 it carries are the standard ones."""
    from securesystemslib import dsse
    from securesystemslib.signer import SSlibKey

    key = keys.signing_key(tmp_path)
    envelope = dsse.Envelope.from_dict(_signed(tmp_path))
    verifier = SSlibKey.from_crypto(key.private.public_key(), keyid=key.keyid)
    assert list(envelope.verify([verifier], 1)) == [key.keyid]
    statement = json.loads(envelope.payload)
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert statement["subject"][0] == {"name": "image-config", "digest": {"sha256": "a" * 64}}
    tampered = dsse.Envelope.from_dict({**_signed(tmp_path), "payloadType": "text/plain"})
    with pytest.raises(Exception, match="threshold"):
        tampered.verify([verifier], 1)


def test_the_signing_key_is_private_and_made_once(tmp_path: Path) -> None:
    first = keys.signing_key(tmp_path)
    assert stat.S_IMODE(first.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(first.path.parent.stat().st_mode) == 0o700
    assert keys.signing_key(tmp_path).keyid == first.keyid
    assert "(this user)" in keys.key_action("show", tmp_path)
    (tmp_path / "not-a-key").write_text("hello\n")
    with pytest.raises(InputError, match="not a PEM public key"):
        keys.trust(tmp_path, tmp_path / "not-a-key")
    with pytest.raises(InputError, match="not a key command"):
        keys.key_action("forge", tmp_path)
    assert keys.untrust(tmp_path, first.keyid[:12]) == first.keyid
    assert keys.trusted_keys(tmp_path) == {}


def _archive(path: Path, repo_tags: list[str] | None, count: int = 1) -> Path:
    config = json.dumps({"config": {"Labels": {"io.envgen.smoke": "pass"}},
                         "rootfs": {"type": "layers", "diff_ids": list(LAYERS)}}).encode()
    index = [{"Config": "config.json", "RepoTags": repo_tags, "Layers": []}] * count
    with tarfile.open(path, "w") as tar:
        for name, data in (("config.json", config), ("manifest.json", json.dumps(index).encode())):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_names_inside_an_image_archive_are_refused_by_name(tmp_path: Path) -> None:
    def bad(what: str) -> BundleError:
        return BundleError(what)

    clean = archive_facts(_archive(tmp_path / "a.tar", None), bad)
    assert clean.tags == () and clean.diff_ids == LAYERS
    refuse_names(clean, tmp_path / "a.tar")
    foreign = archive_facts(_archive(tmp_path / "b.tar", ["rel-victim:latest", "debian:bookworm-slim"]), bad)
    with pytest.raises(BundleError, match=r"debian:bookworm-slim, rel-victim:latest"):
        refuse_names(foreign, tmp_path / "b.tar")
    with pytest.raises(BundleError, match="holding 2 images"):
        archive_facts(_archive(tmp_path / "c.tar", None, count=2), bad)


def test_a_damaged_local_copy_is_named(tmp_path: Path) -> None:
    from envgen.pipeline.validity import image_verdict

    class Image:
        id, layers = IMAGE, LAYERS

    store = attest.AttestationStore(tmp_path)
    store.add(IMAGE, [_signed(tmp_path)])
    assert image_verdict(tmp_path, Image()).validated  # type: ignore[arg-type]
    store._path(IMAGE).write_text('[{"payload": ', encoding="utf-8")
    verdict = image_verdict(tmp_path, Image())  # type: ignore[arg-type]
    assert not verdict.validated and "is damaged (not a JSON list)" in verdict.reason


def test_a_kept_verdict_is_served_only_for_identical_inputs(tmp_path: Path) -> None:
    """`envgen run` reads the verdict a verification made before (validity.verified: <state>/verified/) instead of
    checking the signatures again, only where everything that decides it is byte for byte the same; a forged
    statement, an untrusted key, another image or layer, or an entry written over by hand validates nothing that
    verification itself would not."""
    import os
    import subprocess
    import sys

    from envgen.pipeline.validity import verified

    state = tmp_path / "state"
    envelope = _signed(state)
    first = verified(state, [envelope], IMAGE, LAYERS)
    assert first.validated and first.predicate["profile"] == "rel-minimal"
    assert len(list((state / "verified").glob("verdict-*.json"))) == 1
    # the kept verdict serves a new process without importing cryptography
    code = (f"import sys, json; from pathlib import Path; from envgen.pipeline.validity import verified\n"
            f"v = verified(Path({str(state)!r}), [json.loads({json.dumps(json.dumps(envelope))})], {IMAGE!r}, "
            f"{list(LAYERS)!r})\nprint(v.validated, v.tier, any(m.startswith('cryptography') for m in sys.modules))")
    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root,
                          env={**os.environ, "PYTHONPATH": root})
    assert done.stdout.split() == ["True", "cpu", "False"], done.stderr
    # every input changed gives another key: verified afresh, refused with verification's own reason
    statement = attest.signed_statement(envelope)
    statement["predicate"]["tier"] = "all"
    forged = {**envelope, "payload": base64.b64encode(json.dumps(statement).encode()).decode()}
    assert not verified(state, [forged], IMAGE, LAYERS).validated
    assert "covers another digest" in verified(state, [envelope], OTHER, LAYERS).reason
    assert not verified(state, [envelope], IMAGE, LAYERS[:1]).validated
    keys.untrust(state, envelope["signatures"][0]["keyid"][:12])  # type: ignore[index]
    assert "does not trust" in verified(state, [envelope], IMAGE, LAYERS).reason
    # a torn or foreign entry is a miss: verified again (the entries sit in the state directory beside the trusted
    # keys: whoever could write one could trust a key of their own)
    for kept in (state / "verified").glob("verdict-*.json"):
        kept.write_text("{torn", encoding="utf-8")
    assert "does not trust" in verified(state, [envelope], IMAGE, LAYERS).reason
