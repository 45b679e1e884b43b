"""Base image families (kb/data/base_families.yaml): what kind of image a profile builds on (nvidia/cuda by
flavour, NGC, the python images, Debian/Ubuntu, micromamba, a base that provides the frameworks, an image envgen
built) and what follows from it: the package manager, how Python arrives (its ``python_setups`` row), nvcc, the
devel twin, the frameworks it ships, the paths it occupies and the user it leaves. ``family_for`` picks the first
row whose ``match`` holds; the last row matches every image."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import field
from pathlib import Path
from typing import ClassVar, Literal, Protocol

from envgen.kb.images import parse_image
from envgen.kb.models import Row
from envgen.records import Record

FILE = "base_families.yaml"


class PythonSetup(Row):
    """How the environment at /opt/env gets its Python for one kind of base."""

    FILE: ClassVar[str] = FILE
    name: str
    build_apt: list[str] = field(default_factory=list)  # the build stage only
    runtime_apt: list[str] = field(default_factory=list)  # the image
    venv_args: list[str] = field(default_factory=list)
    venv: bool = True  # False: the base's own environment at /opt/env is used (layering on an envgen image)
    base_site: bool = False  # the venv sees the base interpreter's site directories (a .pth file)
    headers_apt: list[str] = field(default_factory=list)  # the headers of the Python the environment runs

    @property
    def key(self) -> str:
        return f"python_setups.{self.name}"


class FamilyMatch(Record):
    """When an image belongs to a family; every field given must hold (an empty match holds for every image),
    except ``provides_python_under`` and ``labels``, either of which is enough."""

    repositories: list[str] = field(default_factory=list)
    repository_prefix: str = ""
    tag: str = ""  # a regular expression searched in the tag
    provides_python_under: list[str] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    base_provides: bool = False


class DevelTwin(Record):
    tag_from: str  # "-runtime-"
    tag_to: str  # "-devel-"


class BaseFamily(Row):
    FILE: ClassVar[str] = FILE
    name: str
    match: FamilyMatch
    package_manager: Literal["apt", "unknown"]
    python: str  # the python_setups row the environment is made with
    python_provided: str = "base-env"  # ... when the profile sets base_provides
    nvcc: bool
    devel_twin: DevelTwin | None = None
    facts: Literal["cuda_images", "ngc", "os_images", "none"]
    frameworks: bool = False
    occupies: list[str] = field(default_factory=list)
    user: Literal["root", "non-root"] = "root"
    compiler_apt: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"base_families.{self.name}"

    @property
    def release_table(self) -> bool:
        """The image's CUDA, cuDNN and Python come from a release table of its own (NGC's ngc.yaml)."""
        return self.facts == "ngc"

    def twin_of(self, image_ref: str) -> str | None:
        """The devel tag of the same CUDA, cuDNN and OS (digest dropped), or None for a family without one."""
        if self.devel_twin is None:
            return None
        return image_ref.split("@")[0].replace(self.devel_twin.tag_from, self.devel_twin.tag_to)

    def occupied(self, path: str) -> str | None:
        """The path of the family's own content that ``path`` lies in (or is), else None."""
        return next((p for p in self.occupies if path == p or path.startswith(p.rstrip("/") + "/")), None)


class ProvidesPython(Protocol):
    @property
    def python(self) -> str: ...


class BaseQuery(Protocol):
    """What a family is read from: a profile's ``base`` and ``base_provides`` (a Profile is one)."""

    @property
    def base(self) -> str: ...

    @property
    def base_provides(self) -> ProvidesPython | None: ...


def _matches(row: BaseFamily, ref: str, provides: str | None, labels: Collection[str]) -> bool:
    m = row.match
    if m.provides_python_under or m.labels:
        named = provides is not None and any(provides.startswith(p.rstrip("/") + "/") for p in
                                             m.provides_python_under)
        return named or any(label in labels for label in m.labels)
    image = parse_image(ref)
    return ((not m.repositories or image.repository in m.repositories)
            and image.repository.startswith(m.repository_prefix)
            and (not m.tag or re.search(m.tag, image.tag) is not None)
            and (not m.base_provides or provides is not None))


def family_for(rows: Sequence[BaseFamily], base: str | BaseQuery, labels: Collection[str] = ()) -> BaseFamily:
    """The family of an image reference, or of a profile's base (its ``base_provides`` counts); ``labels``: the
    image's label keys, where the caller read them from the engine."""
    if isinstance(base, str):
        ref, provides = base, None
    else:
        ref, provides = base.base, (base.base_provides.python if base.base_provides is not None else None)
    found = next((row for row in rows if _matches(row, ref, provides, labels)), None)
    if found is None:
        raise LookupError(f"{FILE} has no row that matches every image (its last row's match must be empty)")
    return found


def read_base_families(data_dir: Path | None = None) -> list[BaseFamily]:
    """The ``base_families`` table of base_families.yaml alone (a few rows; no other file of the KB is read): for
    loading, which asks an image's family before it reads the KB."""
    import yaml

    from envgen.paths import kb_data_dir

    path = (data_dir or kb_data_dir()) / FILE
    doc = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    return [BaseFamily.model_validate(row) for row in doc["base_families"]]
