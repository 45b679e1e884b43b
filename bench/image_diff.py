"""Diff two images layer by layer: which layers differ, and in each, which files (path, type, size, mode,
owner, mtime, sha256, link target), and how the image configs differ (created, history, labels).

    python bench/image_diff.py IMAGE_A IMAGE_B [--docker docker] [--max-files 40] [--json OUT]

Each image is read from `docker save` (streamed, nothing written to disk: layers of an OCI layout, gzip-compressed
or not, and the older `docker save` layout alike), every layer indexed file by file with the sha256 of its
contents. Layers are paired by position (`RootFS.Layers`, the diff IDs); a pair with equal diff IDs is equal. For a
differing pair the files are listed: `-` only in A, `+` only in B, `~` in both with the fields that differ, then a
summary of which fields differ how often (mtime only? contents?) and under which directories. The exit status is
0 when the layers and the configs are identical, 1 when something differs, 2 on an error (one line).

Talks to the engine through the docker CLI (DOCKER_HOST as set: `eval "$(scripts/engine-current start)"` for
Docker 26). Stdlib only: it runs wherever the docker CLI does.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import hashlib
import json
import subprocess
import sys
import tarfile
from dataclasses import asdict, dataclass
from pathlib import PurePosixPath
from typing import IO, Any

FIELDS = ("type", "size", "mode", "owner", "mtime", "sha256", "link")
_TYPES = {tarfile.REGTYPE: "file", tarfile.AREGTYPE: "file", tarfile.DIRTYPE: "dir", tarfile.SYMTYPE: "symlink",
          tarfile.LNKTYPE: "hardlink", tarfile.CHRTYPE: "char", tarfile.BLKTYPE: "block", tarfile.FIFOTYPE: "fifo"}


@dataclass(frozen=True)
class Entry:
    type: str
    size: int
    mode: str
    owner: str
    mtime: int
    sha256: str
    link: str


@dataclass
class Layer:
    diff_id: str  # sha256 of the uncompressed layer tar
    files: dict[str, Entry]
    order: list[str]  # member names in the tar's order (the order is part of the digest)


@dataclass
class Image:
    ref: str
    config: dict[str, Any]
    layers: list[Layer]


def _entry(member: tarfile.TarInfo, data: IO[bytes] | None) -> Entry:
    digest = ""
    if data is not None:
        sha = hashlib.sha256()
        for chunk in iter(lambda: data.read(1 << 20), b""):
            sha.update(chunk)
        digest = sha.hexdigest()
    return Entry(_TYPES.get(member.type, repr(member.type)), member.size if member.isfile() else 0,
                 f"{member.mode:04o}", f"{member.uid}:{member.gid}", int(member.mtime), digest,
                 member.linkname if member.issym() or member.islnk() else "")


class _Hashing:
    """A read-only stream that hashes what is read through it (the layer's diff ID as the tar is read)."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw, self.sha = raw, hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        chunk = self.raw.read(size)
        self.sha.update(chunk)
        return chunk


def _read_layer(blob: IO[bytes]) -> Layer:
    """A layer blob (tar, or gzip of one) indexed file by file, with its diff ID."""
    head = blob.read(2)
    rest: Any = _Prefixed(head, blob)
    if head == b"\x1f\x8b":
        import gzip

        rest = gzip.GzipFile(fileobj=rest, mode="rb")
    hashing = _Hashing(rest)
    files: dict[str, Entry] = {}
    order: list[str] = []
    with tarfile.open(fileobj=hashing, mode="r|") as tar:  # type: ignore[call-overload]
        for member in tar:
            name = "/" + member.name.lstrip("./").rstrip("/") if member.name not in (".", "./") else "/"
            files[name] = _entry(member, tar.extractfile(member) if member.isfile() else None)
            order.append(name)
    while hashing.read(1 << 20):  # the tar's zero blocks at the end are part of the digest
        pass
    return Layer("sha256:" + hashing.sha.hexdigest(), files, order)


class _Prefixed:
    def __init__(self, head: bytes, raw: IO[bytes]) -> None:
        self.head, self.raw = head, raw

    def read(self, size: int = -1) -> bytes:
        if self.head:
            if size < 0:
                out, self.head = self.head + self.raw.read(), b""
                return out
            out, self.head = self.head[:size], self.head[size:]
            return out + (self.raw.read(size - len(out)) if size > len(out) else b"")
        return self.raw.read(size)


def read_image(docker: str, ref: str) -> Image:
    """``docker save ref`` read as a stream: each layer blob indexed, then put in the manifest's order."""
    proc = subprocess.Popen([docker, "save", ref], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None
    blobs: dict[str, Layer] = {}
    jsons: dict[str, Any] = {}
    try:
        outer = tarfile.open(fileobj=proc.stdout, mode="r|")  # noqa: SIM115 (closed by the with below)
    except tarfile.ReadError:  # nothing came: the engine's answer is on stderr
        err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
        raise SystemExit(f"image_diff: `docker save {ref}` gave no archive: {err.strip() or 'exit ' + str(proc.wait())}"
                         ) from None
    with outer:
        for member in outer:
            data = outer.extractfile(member) if member.isfile() else None
            if data is None:
                continue
            head = data.read(262)
            if member.name.endswith(".json") or head[:1] == b"{":
                text = head + data.read()
                with contextlib.suppress(ValueError):
                    jsons[member.name] = json.loads(text)
                continue
            if head[257:262] == b"ustar" or head[:2] == b"\x1f\x8b" or head == b"\0" * len(head):
                blobs[member.name] = _read_layer(_Prefixed(head, data))  # type: ignore[arg-type]
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    if proc.wait() != 0:
        raise SystemExit(f"image_diff: `docker save {ref}` failed: {err.strip() or 'exit ' + str(proc.returncode)}")
    manifest = jsons.get("manifest.json")
    if not isinstance(manifest, list) or not manifest:
        raise SystemExit(f"image_diff: `docker save {ref}` gave no manifest.json")
    config = jsons.get(manifest[0]["Config"], {})
    return Image(ref, config, [blobs[name] for name in manifest[0]["Layers"]])


def _field_diff(a: Entry, b: Entry) -> dict[str, tuple[Any, Any]]:
    return {name: (getattr(a, name), getattr(b, name)) for name in FIELDS if getattr(a, name) != getattr(b, name)}


def diff_layer(a: Layer, b: Layer) -> dict[str, Any]:
    only_a = sorted(set(a.files) - set(b.files))
    only_b = sorted(set(b.files) - set(a.files))
    changed = {path: _field_diff(a.files[path], b.files[path]) for path in sorted(set(a.files) & set(b.files))
               if a.files[path] != b.files[path]}
    kinds = collections.Counter("+".join(sorted(fields)) for fields in changed.values())
    dirs = collections.Counter(_top(path) for path in [*only_a, *only_b, *changed])
    same_set = set(a.files) == set(b.files)
    return {"diff_ids": [a.diff_id, b.diff_id], "files": [len(a.files), len(b.files)],
            "only_a": {p: asdict(a.files[p]) for p in only_a}, "only_b": {p: asdict(b.files[p]) for p in only_b},
            "changed": changed, "fields": dict(kinds.most_common()), "directories": dict(dirs.most_common(12)),
            "order_differs": same_set and a.order != b.order}


def _top(path: str, depth: int = 4) -> str:
    parts = PurePosixPath(path).parts
    return str(PurePosixPath(*parts[:depth])) if len(parts) > depth else str(PurePosixPath(*parts[:-1]) or "/")


def diff_configs(a: dict[str, Any], b: dict[str, Any], prefix: str = "") -> list[str]:
    """Paths of the config keys whose values differ (``rootfs`` left out: the layers say it)."""
    out: list[str] = []
    for key in sorted(set(a) | set(b)):
        if not prefix and key == "rootfs":
            continue
        va, vb = a.get(key), b.get(key)
        if va == vb:
            continue
        if isinstance(va, dict) and isinstance(vb, dict):
            out += diff_configs(va, vb, f"{prefix}{key}.")
        elif isinstance(va, list) and isinstance(vb, list) and len(va) == len(vb):
            for i, (x, y) in enumerate(zip(va, vb, strict=True)):
                if x != y:
                    out += diff_configs(x, y, f"{prefix}{key}[{i}].") if isinstance(x, dict) and \
                        isinstance(y, dict) else [f"{prefix}{key}[{i}]: {json.dumps(x)} | {json.dumps(y)}"]
        else:
            out.append(f"{prefix}{key}: {json.dumps(va)[:200]} | {json.dumps(vb)[:200]}")
    return out


def _created_by(config: dict[str, Any], index: int) -> str:
    steps = [h for h in config.get("history", []) if not h.get("empty_layer")]
    return " ".join(str(steps[index].get("created_by", "")).split())[:110] if index < len(steps) else ""


def report(a: Image, b: Image, max_files: int) -> tuple[list[str], dict[str, Any]]:
    lines = [f"A: {a.ref} ({len(a.layers)} layers)", f"B: {b.ref} ({len(b.layers)} layers)"]
    result: dict[str, Any] = {"a": a.ref, "b": b.ref, "layers": [], "config": diff_configs(a.config, b.config)}
    for index in range(max(len(a.layers), len(b.layers))):
        la = a.layers[index] if index < len(a.layers) else None
        lb = b.layers[index] if index < len(b.layers) else None
        if la is None or lb is None:
            lines.append(f"layer {index + 1}: only in {'B' if la is None else 'A'}")
            result["layers"].append({"index": index + 1, "only_in": "B" if la is None else "A"})
            continue
        if la.diff_id == lb.diff_id:
            lines.append(f"layer {index + 1}: same {la.diff_id[:19]} ({len(la.files)} entries)")
            continue
        diff = diff_layer(la, lb)
        result["layers"].append({"index": index + 1, "created_by": _created_by(a.config, index), **diff})
        lines.append(f"layer {index + 1}: DIFFERS {la.diff_id[:19]} | {lb.diff_id[:19]}  "
                     f"{_created_by(a.config, index)}")
        lines.append(f"  entries {diff['files'][0]} | {diff['files'][1]}; only in A {len(diff['only_a'])}, only in "
                     f"B {len(diff['only_b'])}, changed {len(diff['changed'])}"
                     + ("; same entries in another order" if diff["order_differs"] else ""))
        lines.append(f"  fields that differ: {diff['fields']}")
        lines.append(f"  where: {diff['directories']}")
        shown = [f"  - {p} {_brief(e)}" for p, e in diff["only_a"].items()] + \
            [f"  + {p} {_brief(e)}" for p, e in diff["only_b"].items()] + \
            [f"  ~ {p} " + "; ".join(f"{k} {_short(v[0])} | {_short(v[1])}" for k, v in fields.items())
             for p, fields in diff["changed"].items()]
        lines += shown[:max_files] + ([f"  ... {len(shown) - max_files} more"] if len(shown) > max_files else [])
    lines.append("config: " + ("same" if not result["config"] else "differs"))
    lines += [f"  {line}" for line in result["config"]]
    return lines, result


def _brief(entry: dict[str, Any]) -> str:
    return f"{entry['type']} {entry['size']} B mode {entry['mode']} mtime {entry['mtime']} {entry['sha256'][:12]}"


def _short(value: Any) -> str:
    return value[:12] if isinstance(value, str) and len(value) == 64 else str(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("image_a")
    parser.add_argument("image_b")
    parser.add_argument("--docker", default="docker", help="the docker CLI (default: docker on PATH)")
    parser.add_argument("--max-files", type=int, default=40, help="files listed per differing layer")
    parser.add_argument("--json", help="write the whole diff as JSON to this file")
    args = parser.parse_args(argv)
    a, b = read_image(args.docker, args.image_a), read_image(args.docker, args.image_b)
    lines, result = report(a, b, args.max_files)
    print("\n".join(lines))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(result, out, indent=1, sort_keys=True)
    same = not result["layers"] and not result["config"]
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
