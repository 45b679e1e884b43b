"""One package set, whichever field names it: the step between the merged YAML and the typed model.

A profile may name its frameworks in ``frameworks:`` or, the way a ``requirements.txt`` carries them,
in ``packages.pip``. Before validation, every framework distribution found in ``packages.pip`` is
moved into ``frameworks`` (so every framework rule, the install plan and the smoke test's
expectations see it), pins that contradict each other are errors naming both lines, framework
packages envgen cannot model are refused, and the defaults a minimal profile needs are filled in
and remembered so ``envgen show`` can print them. Pure: the defaults the knowledge base gives (an NGC
release's CUDA, cuDNN and Python, the CUDA of a torch build tag) are planning's (``plan.defaults``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envgen.errors import ProfileError
from envgen.kb.specifiers import contains
from envgen.profile.installers import PROFILE_INSTALLERS, picked_installer
from envgen.profile.requirements import PipLine, canonical, try_parse

if TYPE_CHECKING:
    from envgen.kb.distributions import FrameworkNames


@dataclass
class Normalised:
    data: dict[str, Any]
    # dotted field -> "file:line" where the value came from (frameworks lifted from packages.pip)
    where: dict[str, str] = field(default_factory=dict)
    defaults: list[str] = field(default_factory=list)  # "installer: pip (why)"
    lifted: list[str] = field(default_factory=list)  # "packages.pip[0] torch==2.1.2 -> frameworks.pytorch"
    # where an entry that stayed in a list now stands -> where the file wrote it (lifting shifts the entries after it)
    moved: dict[tuple[object, ...], tuple[object, ...]] = field(default_factory=dict)


Origins = dict[tuple[object, ...], tuple[Path, int]]


def where_in(origins: Origins, loc: tuple[object, ...], fallback: Path) -> str:
    """file:line of the deepest key on ``loc`` that some file supplied."""
    for end in range(len(loc), -1, -1):
        if loc[:end] in origins:
            path, line = origins[loc[:end]]
            return f"{path}:{line}"
    return str(fallback)


def _label(loc: tuple[object, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


class _Normaliser:
    def __init__(self, data: dict[str, Any], origins: Origins, path: Path, names: FrameworkNames) -> None:
        self.data = data
        self.names = names
        self.origins = origins
        self.path = path
        self.result = Normalised(data=data)

    def where(self, loc: tuple[object, ...]) -> str:
        return where_in(self.origins, loc, self.path)

    def conflict(self, first: tuple[object, ...], first_value: str, second: tuple[object, ...],
                 second_value: str, fix: str) -> ProfileError:
        return ProfileError(
            f"{self.where(second)}: field '{_label(second)}' = {second_value!r} contradicts "
            f"'{_label(first)}' = {first_value!r} at {self.where(first)}",
            fix=fix,
        )

    # --- pip -----------------------------------------------------------------------------------

    def pip_entries(self) -> list[tuple[int, PipLine]] | None:
        """(index, line read) per readable ``packages.pip`` entry; None when the field is not a list (validation
        then says what is wrong). A line envgen refuses is left to the model's validation, which names it."""
        packages = self.data.get("packages")
        if not isinstance(packages, dict) or not isinstance(packages.get("pip"), list):
            return None
        return [(index, line) for index, spec in enumerate(packages["pip"])
                for line in [try_parse(spec)] if line is not None]

    def check_duplicates(self, entries: list[tuple[int, PipLine]]) -> None:
        """One distribution on two lines: two exact pins that differ, or a pin outside the other line's range, is
        an error naming both lines (two ranges pip intersects, and the resolver judges)."""
        seen: dict[str, tuple[int, PipLine]] = {}
        for index, line in entries:
            if line.marker is not None:
                continue
            first = seen.get(line.name)
            if first is not None and _disagree(first[1], line):
                raise self.conflict(
                    ("packages", "pip", first[0]), first[1].text, ("packages", "pip", index), line.text,
                    f"keep one version of {line.name}",
                )
            seen.setdefault(line.name, (index, line))

    def lift(self, entries: list[tuple[int, PipLine]]) -> None:
        frameworks = self.data.get("frameworks")
        if frameworks is None:
            frameworks = {}
        if not isinstance(frameworks, dict):
            return  # validation reports the wrong type
        frameworks = dict(frameworks)
        lifted_index: set[int] = set()
        for index, line in entries:
            loc, spec, name, extras = ("packages", "pip", index), line.text, line.name, line.extras_text
            if name in self.names.unmodelled:
                raise ProfileError(
                    f"{self.where(loc)}: field '{_label(loc)}' = {spec!r}: {self.names.unmodelled[name]}",
                    fix=f"remove {name} from packages.pip",
                )
            pip = self.names.pip
            key = name + extras if name + extras in pip else name
            if key not in pip:
                continue
            target, package = pip[key]
            version = self._framework_version(loc, line, target)
            if extras and key == name:
                raise ProfileError(
                    f"{self.where(loc)}: field '{_label(loc)}' = {spec!r}: the extra {extras} of {name} is not "
                    "modelled",
                    fix=f"write {name}=={version} (or tensorflow[and-cuda] for TensorFlow's CUDA libraries)",
                )
            self._set(frameworks, target, version, loc, spec)
            if package is not None:
                self._set(frameworks, "tensorflow_package", package, loc, spec)
            lifted_index.add(index)
            self.result.where[f"frameworks.{target}"] = self.where(loc)
            self.result.lifted.append(f"{_label(loc)} {spec} -> frameworks.{target}")
        if not lifted_index:
            return
        pip = self.data["packages"]["pip"]
        kept = [index for index in range(len(pip)) if index not in lifted_index]
        keep = [pip[index] for index in kept]
        self.result.moved.update({("packages", "pip", now): ("packages", "pip", was)
                                  for now, was in enumerate(kept) if now != was})
        self.data["frameworks"] = frameworks
        self.data["packages"] = {**self.data["packages"], "pip": keep}

    def _framework_version(self, loc: tuple[object, ...], line: PipLine, target: str) -> str:
        """A framework line's exact release. A range or a marker is refused: the knowledge base judges one build
        (its CUDA, its kernels, its Python window, its own Requires-Dist), so the verdict must be about the release
        the image gets; resolving the range first would make `check`'s verdict depend on the day it ran."""
        where = f"{self.where(loc)}: field '{_label(loc)}' = {line.text!r}"
        if line.marker is not None:
            raise ProfileError(f"{where}: a framework line with an environment marker: the profile is one image "
                               "(CPython on Linux x86-64, its python:), so the framework is either in it or not",
                               fix=f"write {line.requirement} without the marker, or remove the line")
        if line.exact is None:
            example = f"{line.raw_name}{line.extras_text}==X.Y.Z"
            raise ProfileError(f"{where}: a framework needs one exact release, not a range: envgen's knowledge base "
                               "judges one build (its CUDA, GPU kernels, Python window, Requires-Dist)",
                               fix=f"pin it exactly ({example}); `envgen suggest --gpu GPU --frameworks "
                                   f"{'pytorch' if target.startswith('torch') else target}` "
                                   "picks the newest release that fits your GPU and driver")
        return line.exact

    def _set(self, frameworks: dict[str, Any], target: str, value: str, loc: tuple[object, ...], spec: str) -> None:
        have = frameworks.get(target)
        if have is None:
            frameworks[target] = value
            return
        floc = ("frameworks", target)
        if target != "tensorflow_package" and isinstance(have, str) and _same_release(have, value):
            return
        if have == value:
            return
        raise self.conflict(floc, str(have), loc, spec, f"name {target} in one place only: delete one of the two lines")

    # --- conda ---------------------------------------------------------------------------------

    def check_conda(self, pip_entries: list[tuple[int, PipLine]]) -> None:
        packages = self.data.get("packages")
        if not isinstance(packages, dict) or not isinstance(packages.get("conda"), list):
            return
        pip_versions = {line.name: (index, line.text, pinned) for index, line in pip_entries
                        for pinned in [line.exact] if pinned is not None}
        seen: dict[str, tuple[int, str]] = {}
        for index, spec in enumerate(packages["conda"]):
            if not isinstance(spec, str) or "=" not in spec:
                continue
            name_part = spec.split("::", 1)[-1]
            name, version = canonical(name_part.split("=")[0]), name_part.split("=")[1]
            loc = ("packages", "conda", index)
            self._refuse_conda(name, spec, loc)
            if name in seen and seen[name][1] != version:
                first = ("packages", "conda", seen[name][0])
                raise self.conflict(first, packages["conda"][seen[name][0]], loc, spec, f"keep one version of {name}")
            seen.setdefault(name, (index, version))
            if name in pip_versions and not _same_release(pip_versions[name][2], version):
                pindex, pspec, _v = pip_versions[name]
                raise self.conflict(
                    loc, spec, ("packages", "pip", pindex), pspec,
                    f"install {name} once: pip would replace conda's {name} and break the packages built against it",
                )

    def _refuse_conda(self, name: str, spec: str, loc: tuple[object, ...]) -> None:
        """A framework (or a package envgen models as a pip wheel) listed in packages.conda: refused, with the
        way in (framework_distributions.yaml)."""
        names, at = self.names, f"{self.where(loc)}: field '{_label(loc)}' = {spec!r}"
        if name in names.unmodelled:
            raise ProfileError(f"{at}: {names.unmodelled[name]}", fix=f"remove {name} from packages.conda")
        if name in names.conda_as_pip:
            reason, way = names.conda_as_pip[name]
            raise ProfileError(f"{at}: {reason}", fix=way)
        if name in names.conda:
            raise ProfileError(f"{at}: envgen installs frameworks from the pip wheels its knowledge base describes, "
                               "not from conda", fix=f"move it to frameworks: (frameworks.{names.conda[name]})")

    # --- defaults ------------------------------------------------------------------------------

    def defaults(self) -> None:
        data = self.data
        if "installer" not in data:
            picked = picked_installer(data)
            data["installer"] = picked.name
            self.result.defaults.append(f"installer: {picked.name} ({picked.picked_why})")
        name = data.get("installer")
        row = PROFILE_INSTALLERS.get(name) if isinstance(name, str) else None
        if row is not None and row.channels and not data.get("channels"):
            data["channels"] = list(row.channels)
            self.result.defaults.append(f"channels: [{', '.join(row.channels)}] (installer is {name} and no channel "
                                        "was given)")


def _disagree(first: PipLine, second: PipLine) -> bool:
    """Two lines of one distribution no single release satisfies: two different exact pins, or an exact pin the
    other line's range excludes."""
    if first.exact is not None and second.exact is not None:
        return not _same_release(first.exact, second.exact)
    pinned, other = (first, second) if first.exact is not None else (second, first)
    return pinned.exact is not None and not contains(other.specifier, pinned.exact)


def _same_release(a: str, b: str) -> bool:
    """``2.1.2`` and ``2.1.2+cu118`` name the same release (the variant is chosen elsewhere); trailing
    ``.0`` do not count."""
    def norm(v: str) -> tuple[str, ...]:
        head, _, local = v.partition("+")
        parts = head.split(".")
        while len(parts) > 1 and parts[-1] == "0":
            parts.pop()
        return (*parts, local)

    if a == b:
        return True
    na, nb = norm(a), norm(b)
    return na[:-1] == nb[:-1] and (not na[-1] or not nb[-1] or na[-1] == nb[-1])


def normalise(data: dict[str, Any], origins: Origins, path: Path, names: FrameworkNames) -> Normalised:
    """Lift framework distributions out of ``packages``, refuse contradictory pins, fill defaults. ``names``: the
    framework distributions' names (the knowledge base's ``framework_names``, or ``read_framework_names()``)."""
    n = _Normaliser(dict(data), origins, path, names)
    entries = n.pip_entries()
    n.check_conda(entries or [])
    if entries is not None:
        n.check_duplicates(entries)
        n.lift(entries)
    n.defaults()
    return n.result
