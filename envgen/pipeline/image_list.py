"""`envgen images`: the images envgen built or pulled in the configured namespace, with their validation
status."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from envgen.config import load_config
from envgen.docker import connect, list_images
from envgen.pipeline.state import ValidationStore
from envgen.pipeline.validity import image_verdict
from envgen.table import format_table
from envgen.vocabulary import LABEL_CONTENT_HASH, LABEL_PROFILE


def _age(created: datetime, now: datetime) -> str:
    seconds = max(0, int((now - created).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def image_rows(env: Mapping[str, str] | None = None, now: datetime | None = None) -> list[dict[str, Any]]:
    from envgen.pipeline.naming import in_namespace

    config = load_config(env)
    store = ValidationStore(config.state_dir)
    now = now or datetime.now(timezone.utc)
    rows = []
    for image in list_images(connect()):
        record = store.get(image.id)
        # This namespace's images: tagged in it, or an untagged image smoke-tested through this state directory.
        # Another namespace's images are not listed, also when this state directory (shared by every namespace
        # of the user) validated them.
        if image.tags and not any(in_namespace(config, tag) for tag in image.tags):
            continue
        if not image.tags and record is None:
            continue
        verdict = image_verdict(config.state_dir, image)
        here = record.tier if record is not None and record.passed else ""
        tier = (here or verdict.tier or None) if verdict.validated else None
        if record is not None and not record.passed:
            status = f"{record.status} ({record.mode})"
        elif record is None and store.damaged(image.id):
            status = "record damaged: `envgen smoke` validates it again"
        elif not verdict.validated:
            status = f"not validated: {verdict.reason}"
        elif record is not None:
            status = f"{record.status} ({record.mode})"
        else:
            status = "signed pass, not smoke-tested on this host"
        rows.append({
            "tags": sorted(image.tags), "id": image.id, "profile": image.labels.get(LABEL_PROFILE, ""),
            "content_hash": image.labels.get(LABEL_CONTENT_HASH, ""), "size_bytes": image.size,
            "created": image.created.isoformat(), "age": _age(image.created, now), "validation": status,
            "tier": tier, "signed_by": verdict.keyid[:12] if verdict.validated else "",
        })
    return sorted(rows, key=lambda r: (r["profile"], r["created"]), reverse=False)


def rows_table(rows: list[dict[str, Any]]) -> str:
    headers = ("TAG", "PROFILE", "HASH", "SIZE", "AGE", "VALIDATION", "TIER", "SIGNED BY")
    table = [[", ".join(r["tags"]) or r["id"][:19], r["profile"], r["content_hash"][:12],
              f"{r['size_bytes'] / 1e6:.0f} MB", r["age"], r["validation"], r.get("tier") or "-",
              r.get("signed_by") or "-"] for r in rows]
    return format_table(headers, table) if table else "no envgen images on this engine"
