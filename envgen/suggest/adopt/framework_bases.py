"""A Dockerfile's official framework base (``FROM pytorch/pytorch:2.1.2-cuda12.1-cudnn8-runtime``) read through
``framework_bases.yaml``: the framework's pip line at the tag's release and its build, as if the file installed
them, so the profile holds the base's torch and CUDA instead of a note alone."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from envgen.profile.requirements import RefusedLine, parse_line
from envgen.suggest.adopt.model import Item, Origin, Read


class _Row(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    image: str
    tag: str
    line: str
    build: str
    source: str


def _rows(path: Path | None = None) -> list[_Row]:
    import yaml

    doc = yaml.safe_load((path or Path(__file__).resolve().parent / "framework_bases.yaml").read_text(encoding="utf-8"))
    return [_Row.model_validate(r) for r in doc["images"]]


def _name(text: str) -> str | None:
    try:
        return parse_line(text).name
    except RefusedLine:
        return None


def _holds(text: str, version: str) -> bool:
    """Whether requirement line ``text`` is met by ``version`` (pip then leaves the base's release in place)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        return SpecifierSet(parse_line(text).specifier).contains(version, prereleases=True)
    except (RefusedLine, InvalidSpecifier):
        return False


def take_framework_base(read: Read) -> None:
    """Where ``read.base`` is an official framework image the table knows and the file installs no framework of that
    name itself: its pip line and build go into ``read`` (origin: the FROM line), with a note naming the row."""
    if read.base is None:
        return
    image, _, tag = read.base.text.removeprefix("docker.io/").removeprefix("library/").partition(":")
    for row in _rows():
        match = re.match(row.tag, tag) if image == row.image else None
        if match is None:
            continue
        groups = {k: v for k, v in match.groupdict().items() if v is not None}
        groups["cuda_nodot"] = groups.get("cuda", "").replace(".", "")
        groups["version"] += ".0" if groups["version"].count(".") == 1 else ""  # "1.5": the release 1.5.0
        line = row.line.format(**groups)
        name, version = parse_line(line).name, groups["version"]
        own = [i for i, item in enumerate(read.pip) if _name(item.text) == name]
        if own and not all(_holds(read.pip[i].text, version) for i in own):
            return  # the file installs another release itself: its own line wins
        origin = Origin(f"{read.base.origin}: FROM {read.base.text}'s tag"
                        + "".join(f" ({read.pip[i].origin}: {read.pip[i].text} holds it: pip keeps the base's)"
                                  for i in own))
        read.pip[:] = [item for i, item in enumerate(read.pip) if i not in own] + [Item(line, origin)]
        if read.torch_build is None:
            read.torch_build = Item(row.build.format(**groups), origin)
        read.notes.append(f"{read.base.origin}: FROM {read.base.text}: its tag names {line} built for "
                          f"{row.build.format(**groups)}, taken into the profile [{row.source.split(' ')[0]}]")
        return
