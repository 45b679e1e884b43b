"""`envgen images --size IMAGE|PROFILE`: an image's layers, its largest Python distributions and files, and what a
runtime image could leave out (a report; nothing is removed). And the line `envgen build` ends with: the image's
size against the previous build of the same profile."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from envgen.table import format_table

LARGEST = 15


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


def size_report(target: str, env: Mapping[str, str] | None = None, largest: int = LARGEST) -> dict[str, Any]:
    """The report of ``target`` (an image reference, else a profile's current image) as plain data."""
    from envgen.docker import connect
    from envgen.docker.sizes import layers, scan
    from envgen.pipeline.resolve import resolve_image

    client = connect()
    image = resolve_image(client, target, env)
    found = scan(client, image.id, largest)
    dists = sorted(found["dists"].items(), key=lambda kv: (-kv[1], kv[0]))[:largest]
    return {"image": image.id, "tags": sorted(image.tags), "size_bytes": image.size,
            "layers": [{"size_bytes": layer.size, "step": layer.created_by or "(the base image's own layer)"}
                       for layer in layers(client, image.id)],
            "distributions": [{"name": name, "size_bytes": size, "files_left_out": found.get("gone", {}).get(name, 0)}
                              for name, size in dists],
            "files": [{"path": path, "size_bytes": size} for size, path in found["files"]],
            "could_leave_out": found["leave"]}


def report_text(report: dict[str, Any]) -> str:
    name = ", ".join(report["tags"]) or report["image"][:19]
    lines = [f"{name}: {_mb(report['size_bytes'])}", "", "layers (oldest first):"]
    lines.append(format_table(("SIZE", "STEP"), [[_mb(r["size_bytes"]), r["step"][:100]] for r in report["layers"]]))
    lines += ["", "largest Python distributions (the files their RECORD lists that the image holds; LEFT OUT: "
                  "files it lists that the image does not):"]
    lines.append(format_table(("SIZE", "DISTRIBUTION", "LEFT OUT"),
                              [[_mb(d["size_bytes"]), d["name"], str(d.get("files_left_out", 0))]
                               for d in report["distributions"]]) or "none")
    lines += ["", "largest files:"]
    lines.append(format_table(("SIZE", "PATH"), [[_mb(f["size_bytes"]), f["path"]] for f in report["files"]]))
    leave = report["could_leave_out"]
    lines += ["", f"could be left out of a runtime image ({_mb(sum(leave.values()))}; reported, nothing removed):"]
    lines.append(format_table(("SIZE", "WHAT"), [[_mb(v), k] for k, v in sorted(leave.items())]))
    return "\n".join(lines)


def against_previous(profile: str, image_id: str, size: int, env: Mapping[str, str] | None = None) -> str:
    """`image size: 140.2 MB (previous build of P, sha256:…: 141.0 MB, -0.8 MB)`; the previous build is the newest
    other image of the profile `envgen images` lists."""
    from envgen.pipeline.image_list import image_rows

    older = [r for r in image_rows(env) if r["profile"] == profile and r["id"] != image_id]
    if not older:
        return f"image size: {_mb(size)} (no previous build of {profile} on this engine)"
    last = max(older, key=lambda r: r["created"])
    delta = size - int(last["size_bytes"])
    return (f"image size: {_mb(size)} (previous build of {profile}, {last['id'][:19]}: "
            f"{_mb(int(last['size_bytes']))}, {'+' if delta >= 0 else '-'}{_mb(abs(delta))})")
