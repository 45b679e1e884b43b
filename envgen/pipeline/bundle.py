"""Offline bundles: one file that carries a validated image to a machine without a registry.

``envgen save PROFILE|IMAGE -o FILE`` writes an (uncompressed) tar holding, in this order:

- ``manifest.json``: schema ``envgen.bundle/1``, the profile, content and profile hashes, the tag, the
  image ID (the sha256 of the image config: content-addressed), registry digests, the envgen labels,
  the validation the image passed where it was built (status, mode, tier if known), and for every
  other member its size and sha256 (``payload_sha256`` is the image's);
- ``validation.json``: the validation record of the building host (``{}`` if it has none);
- ``smoke-report.json``: the smoke report sealed in the image;
- ``attestations.json``: the signed statements (DSSE envelopes, ``pipeline/attest.py``) that name the image's digest;
- ``image.tar.gz``: the image in ``docker save`` format, gzip-compressed.

``envgen load FILE`` checks every member's size and sha256 against the manifest, then the image
config inside the archive (its sha256 must be the manifest's image ID, its labels the manifest's), then that a
statement signed by a key this host trusts names that digest, and that the archive names no image of its own
(``pipeline/bundle_trust.py``), all before anything reaches the engine; then loads, tags
``<namespace>/<profile>:<hash12>`` and its ``:latest`` (nothing else), and keeps the image "not smoke-tested on this
host" until ``envgen smoke`` or the first ``envgen run`` passes here. A bundle of an envgen before the signatures
(``envgen.bundle/1``) carries none and is refused.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import tarfile
import tempfile
import zlib
from collections.abc import Callable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from envgen import __version__
from envgen.config import load_config
from envgen.docker import connect, inspect_image, remove_image
from envgen.docker.archive import load_archive, read_file, save_stream
from envgen.docker.images import ImageSummary, tag_all
from envgen.errors import BundleError, EnvgenError, ImageNotValidated, no_space
from envgen.pipeline.attest import AttestationStore
from envgen.pipeline.bundle_trust import archive_facts, refuse_names, trusted_verdict
from envgen.pipeline.naming import alias_ref, image_ref
from envgen.pipeline.resolve import resolve_image
from envgen.pipeline.smoke import SEALED_REPORT
from envgen.pipeline.state import Validation, ValidationStore
from envgen.pipeline.validity import require_validated
from envgen.records import Record
from envgen.render.hashing import image_tag  # not render.core: a run checks the bundle without rendering
from envgen.vocabulary import (
    LABEL_CONTENT_HASH,
    LABEL_PREFIX,
    LABEL_PROFILE,
    LABEL_PROFILE_HASH,
    LABEL_SMOKE,
    LABEL_SMOKE_MODE,
    LABEL_SMOKE_TIER,
)

if TYPE_CHECKING:
    from docker import DockerClient

SCHEMA = "envgen.bundle/2"
MANIFEST = "manifest.json"
IMAGE = "image.tar.gz"
VALIDATION = "validation.json"
REPORT = "smoke-report.json"
ATTESTATIONS = "attestations.json"
MEMBERS = (VALIDATION, REPORT, ATTESTATIONS, IMAGE)
# Labels a bundle vouches for: envgen's own (hashes, profile, smoke verdict) and the OCI set.
LABEL_PREFIXES = (LABEL_PREFIX, "org.opencontainers.image.")
CHUNK = 1 << 20


class FileEntry(Record):
    __pydantic_config__ = {"extra": "forbid"}  # noqa: RUF012 (pydantic's config, read only)

    sha256: str
    size: int


class Manifest(Record):
    __pydantic_config__ = {"extra": "forbid"}  # noqa: RUF012 (pydantic's config, read only)

    schema_: str
    envgen_version: str
    profile: str
    content_hash: str
    profile_hash: str
    tag: str
    image_id: str
    repo_digests: list[str]
    labels: dict[str, str]
    validation: dict[str, str | None]
    payload_sha256: str
    files: dict[str, FileEntry]

    def to_json(self) -> bytes:
        data = self.model_dump()
        data["schema"] = data.pop("schema_")
        return (json.dumps(data, indent=2, sort_keys=True) + "\n").encode()

    @classmethod
    def from_json(cls, raw: bytes) -> Manifest:
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise ValueError("not a JSON object")
        data["schema_"] = data.pop("schema", None)
        return cls.model_validate(data)


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _add(tar: tarfile.TarFile, name: str, path: Path) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = path.stat().st_size, 0o644, 0
    with path.open("rb") as handle:
        tar.addfile(info, handle)


# --- save ------------------------------------------------------------------------------------


def save(target: str, out: Path, *, env: Mapping[str, str] | None = None,
         echo: Callable[[str], None] = lambda _line: None) -> str:
    """Write the bundle of ``target`` (profile or image) to ``out`` atomically; returns a summary."""
    config = load_config(env)
    client = connect()
    image = resolve_image(client, target, env)
    name = image.tags[0] if image.tags else image.id[:19]
    require_validated(config.state_dir, image, name, target, "bundled")
    report = _sealed_report(client, image, name, target)
    record = ValidationStore(config.state_dir).get(image.id)
    envelopes = AttestationStore(config.state_dir).get(image.id)
    out = out.expanduser()
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.tmp-"))
    try:
        payload = work / IMAGE
        echo(f"saving {name} ({image.id[:19]}, {image.size / 1e6:.0f} MB uncompressed)")
        with payload.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) as gz:
            for chunk in save_stream(client, image.id):
                gz.write(chunk)
        (work / VALIDATION).write_bytes(
            (json.dumps(asdict(record) if record else {}, indent=2, sort_keys=True) + "\n").encode())
        (work / REPORT).write_bytes(report)
        (work / ATTESTATIONS).write_bytes((json.dumps(envelopes, indent=2, sort_keys=True) + "\n").encode())
        files = {member: FileEntry(sha256=_sha256_file(work / member), size=(work / member).stat().st_size)
                 for member in MEMBERS}
        manifest = _manifest(image, record, files)
        (work / MANIFEST).write_bytes(manifest.to_json())
        staged = work / "bundle.tar"
        with tarfile.open(staged, "w", format=tarfile.PAX_FORMAT) as tar:
            for member in (MANIFEST, *MEMBERS):
                _add(tar, member, work / member)
        os.replace(staged, out)
    except OSError as exc:
        full = no_space(exc, out, f"the bundle {out.name}", fix=f"free space there ({out.parent}), or save to a "
                                                                     "file system with room for the bundle")
        if full is None:
            raise
        raise full from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
    size = out.stat().st_size
    return (f"saved {name} to {out} ({size / 1e6:.1f} MB; image sha256 {manifest.payload_sha256[:12]}; "
            f"load it with `envgen load {out.name}`)")


def _sealed_report(client: DockerClient, image: ImageSummary, name: str, target: str) -> bytes:
    """The smoke report sealed into a validated image; ImageNotValidated for one that is not."""
    if image.labels.get(LABEL_SMOKE) != "pass" or not image.labels.get(LABEL_CONTENT_HASH):
        raise ImageNotValidated(f"{name} carries no passing smoke report, so it is not bundled",
                                fix=f"run `envgen build {target}` (without --no-smoke) first")
    report = read_file(client, image.id, SEALED_REPORT)
    if report is None:
        raise ImageNotValidated(f"{name} has no sealed smoke report at {SEALED_REPORT}",
                                fix=f"rebuild it with `envgen build {target}`")
    return report


def _manifest(image: ImageSummary, record: Validation | None, files: dict[str, FileEntry]) -> Manifest:
    labels = image.labels
    profile, content_hash = labels[LABEL_PROFILE], labels[LABEL_CONTENT_HASH]
    return Manifest(
        schema_=SCHEMA, envgen_version=__version__, profile=profile, content_hash=content_hash,
        profile_hash=labels.get(LABEL_PROFILE_HASH, ""), tag=image_tag(profile, content_hash),
        image_id=image.id, repo_digests=sorted(image.digests),
        labels={k: v for k, v in sorted(labels.items()) if k.startswith(LABEL_PREFIXES)},
        validation={"status": record.status if record else labels.get(LABEL_SMOKE),
                    "mode": record.mode if record else labels.get(LABEL_SMOKE_MODE),
                    "checked_at": record.checked_at if record else None, "tier": labels.get(LABEL_SMOKE_TIER) or None},
        payload_sha256=files[IMAGE].sha256, files=files,
    )


# --- load ------------------------------------------------------------------------------------


def _bad(path: Path, what: str) -> BundleError:
    return BundleError(f"bundle {path} {what}; nothing was loaded",
                       fix="copy the bundle again (compare its sha256 with the sender's), or make a new one "
                           "with `envgen save`")


def _member(tar: tarfile.TarFile, name: str, path: Path) -> IO[bytes]:
    try:
        handle = tar.extractfile(name)
    except KeyError:
        handle = None
    if handle is None:
        raise _bad(path, f"has no {name} (not an envgen bundle, or truncated)")
    return handle


def _check_small(tar: tarfile.TarFile, name: str, entry: FileEntry, path: Path) -> bytes:
    data = _member(tar, name, path).read()
    if len(data) != entry.size or hashlib.sha256(data).hexdigest() != entry.sha256:
        raise _bad(path, f"member {name} does not match its checksum in the manifest (altered or damaged)")
    return data


def _unpack_image(tar: tarfile.TarFile, entry: FileEntry, path: Path, dest: Path) -> None:
    """Check image.tar.gz's size and sha256 against the manifest (first pass), then decompress it to
    ``dest`` (second pass): a damaged payload is named as a checksum mismatch, not a gzip error."""
    digest, size = hashlib.sha256(), 0
    source = _member(tar, IMAGE, path)
    for chunk in iter(lambda: source.read(CHUNK), b""):
        digest.update(chunk)
        size += len(chunk)
    if size != entry.size or digest.hexdigest() != entry.sha256:
        raise _bad(path, f"member {IMAGE} does not match its checksum in the manifest (altered or damaged)")
    try:
        with gzip.GzipFile(fileobj=_member(tar, IMAGE, path), mode="rb") as gz, dest.open("wb") as sink:
            shutil.copyfileobj(gz, sink, CHUNK)
    except OSError as exc:  # the unpacked image fills the temporary directory: the bundle is not to blame
        full = no_space(exc, dest.parent, f"the unpacked image of {path.name} (the temporary directory, TMPDIR)",
                        fix=f"free space in {dest.parent.parent} or point TMPDIR at a file system with room for the "
                            f"unpacked image (about {entry.size * 3 / 1e6:.0f} MB), then load it again")
        if full is not None:
            raise full from None
        raise _bad(path, f"has a damaged image archive ({type(exc).__name__}: {exc})") from None
    except (EOFError, zlib.error) as exc:
        raise _bad(path, f"has a damaged image archive ({type(exc).__name__}: {exc})") from None


def _envelopes(raw: bytes, path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(raw)
    except ValueError:
        data = None
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        raise _bad(path, f"has an {ATTESTATIONS} that is not a list of signed statements")
    return data


def _read_manifest(tar: tarfile.TarFile, path: Path) -> Manifest:
    raw = _member(tar, MANIFEST, path).read()
    try:
        manifest = Manifest.from_json(raw)
    except ValueError as exc:  # pydantic's ValidationError among them
        first = str(exc).splitlines()[0]
        raise _bad(path, f"has an unreadable manifest ({first})") from None
    if manifest.schema_ == "envgen.bundle/1":
        raise BundleError(f"bundle {path} was written by an envgen before signed validations and carries no "
                          "signature naming its image; nothing was loaded",
                          fix="ask for a new bundle (`envgen save` of an envgen that signs), or build the profile here")
    if manifest.schema_ != SCHEMA:
        raise _bad(path, f"has manifest schema {manifest.schema_!r}, not {SCHEMA!r}")
    if set(manifest.files) != set(MEMBERS) or manifest.files[IMAGE].sha256 != manifest.payload_sha256:
        raise _bad(path, "has a manifest whose file list does not match the bundle format")
    labels = manifest.labels
    if (labels.get(LABEL_CONTENT_HASH) != manifest.content_hash
            or labels.get(LABEL_PROFILE) != manifest.profile
            or manifest.tag != image_tag(manifest.profile, manifest.content_hash)):
        raise _bad(path, "has a manifest whose profile, hash and tag disagree")
    return manifest


def _open_bundle(path: Path) -> tarfile.TarFile:
    try:
        return tarfile.open(path, "r:")
    except (tarfile.TarError, OSError) as exc:
        raise _bad(path, f"is not an envgen bundle ({exc})") from None


def bundle_marker(state_dir: Path, image_id: str) -> Path:
    """Where `envgen load` notes that an image came from a bundle (its manifest)."""
    return Path(state_dir) / "bundles" / (image_id.replace("sha256:", "") + ".json")


def load(path: Path, *, env: Mapping[str, str] | None = None,
         echo: Callable[[str], None] = lambda _line: None) -> str:
    """Verify ``path`` completely, then load it; returns a summary."""
    config = load_config(env)
    path = path.expanduser()
    if not path.is_file():
        raise BundleError(f"bundle {path} does not exist", fix="give the file `envgen save` wrote")
    work = Path(tempfile.mkdtemp(prefix="envgen-load-"))
    try:
        with _open_bundle(path) as tar:
            try:
                manifest = _read_manifest(tar, path)
                _check_small(tar, VALIDATION, manifest.files[VALIDATION], path)
                _check_small(tar, REPORT, manifest.files[REPORT], path)
                envelopes = _envelopes(_check_small(tar, ATTESTATIONS, manifest.files[ATTESTATIONS], path), path)
                echo(f"verifying and unpacking {IMAGE} ({manifest.files[IMAGE].size / 1e6:.1f} MB)")
                _unpack_image(tar, manifest.files[IMAGE], path, work / "image.tar")
            except (tarfile.TarError, EOFError) as exc:
                raise _bad(path, f"is truncated or damaged ({type(exc).__name__})") from None
        facts = archive_facts(work / "image.tar", lambda what: _bad(path, what))
        if facts.image_id != manifest.image_id:
            raise _bad(path, f"holds image {facts.image_id[:19]}, but its manifest names {manifest.image_id[:19]}")
        verdict = trusted_verdict(config.state_dir, envelopes, facts, path)
        refuse_names(facts, path)
        wrong = sorted(k for k, v in manifest.labels.items() if facts.labels.get(k) != v)
        if wrong or facts.labels.get(LABEL_SMOKE) != "pass":
            raise _bad(path, f"holds an image whose labels differ from its manifest ({', '.join(wrong) or 'smoke'})")
        client = connect()
        existed = inspect_image(client, manifest.image_id) is not None
        with (work / "image.tar").open("rb") as archive:
            try:
                load_archive(client, archive)
            except EnvgenError as exc:
                raise BundleError(f"bundle {path}: {exc.message}; nothing was loaded") from None
        local_tag = image_ref(config, manifest.profile, manifest.content_hash)
        _accept(client, manifest, existed, path, [local_tag, alias_ref(config, manifest.profile)])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    AttestationStore(config.state_dir).add(manifest.image_id, envelopes)
    marker = bundle_marker(config.state_dir, manifest.image_id)
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_bytes(manifest.to_json())
    record = ValidationStore(config.state_dir).get(manifest.image_id)
    state = f"smoke-tested on this host ({record.status})" if record else \
        f"not smoke-tested on this host yet (`envgen smoke {local_tag}` or the first `envgen run` does it)"
    return (f"loaded {local_tag} and :latest ({manifest.image_id[:19]}); checksums match the manifest and key "
            f"{verdict.keyid[:12]}'s signed validation ({verdict.tier or 'no tier'}) names its digest; {state}")


def _accept(client: DockerClient, manifest: Manifest, existed: bool, path: Path, tags: list[str]) -> None:
    """The loaded image must be the one the manifest names; then it gets its tags in this host's namespace
    (the manifest names it the way its labels do, namespace-free)."""
    image = inspect_image(client, manifest.image_id)
    if image is None or any(image.labels.get(k) != v for k, v in manifest.labels.items()):
        if image is not None and not existed:
            remove_image(client, image.id, force=True)
        raise _bad(path, "loaded as a different image than its manifest names")
    tag_all(client, manifest.image_id, tags)


def loaded_from_bundle(state_dir: Path, image_id: str) -> dict[str, Any] | None:
    """The manifest of the bundle ``image_id`` was loaded from, or None."""
    try:
        data = json.loads(bundle_marker(state_dir, image_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


__all__ = ["Manifest", "bundle_marker", "load", "loaded_from_bundle", "save"]
