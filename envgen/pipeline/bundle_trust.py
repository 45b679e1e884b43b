"""What `envgen load` trusts in a bundle: the image archive's config (its digest is the image ID the signed
statement must name) and no name written inside the archive: `docker load` would apply a tag it finds there
(``manifest.json`` RepoTags, ``repositories``, an OCI ``index.json``'s names) and move it on this engine, so a
bundle carrying any is refused, naming them. Only the tags envgen verified are applied, by envgen."""

from __future__ import annotations

import hashlib
import json
import tarfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envgen.errors import BundleError
from envgen.pipeline.attest import Verdict, verify
from envgen.pipeline.keys import trusted_keys

NAME_ANNOTATIONS = ("io.containerd.image.name", "org.opencontainers.image.ref.name")


@dataclass(frozen=True)
class ArchiveFacts:
    image_id: str  # sha256 of the image config: what a statement names
    labels: dict[str, str]
    diff_ids: tuple[str, ...]
    tags: tuple[str, ...]  # every name written inside the archive


def _json(tar: tarfile.TarFile, name: str) -> Any:
    try:
        handle = tar.extractfile(name)
    except KeyError:
        return None
    return json.loads(handle.read()) if handle is not None else None


def _names(tar: tarfile.TarFile, index: list[Any]) -> tuple[str, ...]:
    tags = [str(t) for entry in index if isinstance(entry, dict) for t in entry.get("RepoTags") or []]
    repositories = _json(tar, "repositories") or {}
    if isinstance(repositories, dict):
        tags += [f"{repo}:{tag}" for repo, by_tag in repositories.items() if isinstance(by_tag, dict) for tag in by_tag]
    oci = _json(tar, "index.json") or {}
    for entry in oci.get("manifests") or [] if isinstance(oci, dict) else []:
        annotations = entry.get("annotations") or {} if isinstance(entry, dict) else {}
        tags += [str(annotations[key]) for key in NAME_ANNOTATIONS if key in annotations]
    return tuple(sorted(set(tags)))


def archive_facts(archive: Path, bad: Callable[[str], BundleError]) -> ArchiveFacts:
    """The one image a ``docker save`` tar holds, with the names written in it; ``bad(what)``: the refusal."""
    try:
        with tarfile.open(archive, "r:") as tar:
            index = _json(tar, "manifest.json")
            if not isinstance(index, list) or len(index) != 1 or not isinstance(index[0], dict):
                count = len(index) if isinstance(index, list) else 0
                raise bad(f"has an image archive holding {count} images, not one")
            handle = tar.extractfile(str(index[0]["Config"]))
            raw = handle.read() if handle is not None else b""
            config = json.loads(raw)
            tags = _names(tar, index)
    except BundleError:
        raise
    except (tarfile.TarError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise bad(f"has an image archive without a readable image config ({type(exc).__name__}: {exc})") from None
    if not isinstance(config, dict):
        raise bad("has an image archive whose image config is not a JSON object")
    inner, rootfs = config.get("config") or {}, config.get("rootfs") or {}
    labels = inner.get("Labels") or {} if isinstance(inner, dict) else None
    diff_ids = rootfs.get("diff_ids") or [] if isinstance(rootfs, dict) else None
    if not isinstance(labels, dict) or not isinstance(diff_ids, list):
        raise bad("has an image archive without a readable image config (its labels or layers are not what an "
                  "image config holds)")
    return ArchiveFacts("sha256:" + hashlib.sha256(raw).hexdigest(), {str(k): str(v) for k, v in labels.items()},
                        tuple(str(d) for d in diff_ids), tags)


def refuse_names(facts: ArchiveFacts, path: Path) -> None:
    if facts.tags:
        raise BundleError(f"bundle {path} carries image names of its own ({', '.join(facts.tags)}), which loading "
                          "would move on this engine; nothing was loaded",
                          fix="load only bundles `envgen save` wrote: envgen applies the tags it verified itself")


def trusted_verdict(state_dir: Path, envelopes: Sequence[Mapping[str, Any]], facts: ArchiveFacts,
                    path: Path) -> Verdict:
    """The verdict of the bundle's statements on the archive's image; BundleError when no trusted one names it."""
    verdict = verify(envelopes, trusted_keys(state_dir), facts.image_id, facts.diff_ids)
    if not verdict.validated:
        reason = verdict.reason if envelopes else "it carries no signed validation"
        raise BundleError(f"bundle {path} holds image {facts.image_id[:19]}, which is not validated: {reason}; "
                          "nothing was loaded",
                          fix="trust the key of the host that made the bundle (`envgen key trust FILE`, the file "
                              "its `envgen key export` wrote), or ask for a bundle of an image validated there")
    return verdict
