"""``base_provides`` of a profile adopted from an environment that its --base image holds (`envgen init --from
/opt/torch/.venv/bin/python3 --base IMAGE`, or `--from IMAGE --base IMAGE`): every framework and every pinned
``packages.pip`` line whose exact version that interpreter's environment in the image holds (read in the image by
``image.base_holds``) is the base's, neither downloaded nor installed; the rest goes on top. The comments name the
image and interpreter, the notes say how many lines stay to install."""

from __future__ import annotations

from typing import Any

from envgen.kb.versions import same_version
from envgen.profile.requirements import parse_line

# frameworks: field -> the distribution that carries it (tensorflow's is tensorflow_package's name)
_CARRIER = {"pytorch": "torch", "torchvision": "torchvision", "torchaudio": "torchaudio", "tensorflow": "tensorflow"}


def _held_as(held: dict[str, str], name: str, version: str) -> bool:
    have = held.get(name)
    if have is None:
        return False
    return have == version if "+" in version or "+" in have else same_version(have, version)


def base_provides(data: dict[str, Any], held: dict[str, str], python: str, base: str,
                  comments: dict[tuple[object, ...], str], notes: list[str]) -> None:
    """Write data["base_provides"] from what the base holds (nothing where it holds none of the profile)."""
    frameworks = data.get("frameworks", {})
    provided = []
    for field, carrier in _CARRIER.items():
        version = frameworks.get(field)
        if field == "tensorflow" and version:
            carrier = parse_line(str(frameworks.get("tensorflow_package") or "tensorflow")).name
        if version and _held_as(held, carrier, str(version)):
            provided.append(field)
    packages: dict[str, str] = {}
    lines = data.get("packages", {}).get("pip", [])
    for text in lines:
        line = parse_line(text)
        if line.exact is not None and line.marker is None and not line.extras \
                and _held_as(held, line.name, line.exact):
            packages[line.name] = line.exact
    if not provided and not packages:
        notes.append(f"--base {base}: its {python} holds none of the profile's pinned versions: no base_provides")
        return
    data["base_provides"] = {"python": python, **({"frameworks": provided} if provided else {}),
                             **({"packages": dict(sorted(packages.items()))} if packages else {})}
    where = f"held by {base}'s {python} (read there by envgen)"
    comments[("base_provides", "python")] = f"--base {base}: the interpreter whose environment the source is"
    for index in range(len(provided)):
        comments[("base_provides", "frameworks", index)] = where
    for name in packages:
        comments[("base_provides", "packages", name)] = where
    rest = len(lines) - len(packages)
    notes.append(f"--base {base}: base_provides lists {len(provided)} framework(s) and {len(packages)} package(s) "
                 f"its {python} holds; {rest} packages.pip line(s) it does not hold at their version are installed "
                 "on top")
