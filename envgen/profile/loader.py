"""Finding profiles (built-in, ``$ENVGEN_PROFILE_PATH``, or a file path), resolving ``extends``
by deep merge, and validating the result into a :class:`Profile`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from envgen.errors import ProfileError, ProfileNotFound, shown
from envgen.paths import builtin_profiles_dir
from envgen.profile.model import NORMALISED, Profile
from envgen.profile.normalise import Normalised, Origins, normalise
from envgen.profile.problems import did_you_mean, format_problems

if TYPE_CHECKING:
    from envgen.kb.knowledge import KnowledgeBase
    from envgen.profile.yamlsrc import LocatedDoc

MAX_EXTENDS_DEPTH = 8


class LoadedProfile(Profile):
    """A profile as :func:`load_profile` made it: it remembers the file it came from (for the lock
    file beside it). The path is private: not a field, so neither the dump, the identity nor the
    hash sees it."""

    _source: ClassVar[Path | None] = None  # set on each loaded profile (Record.set_private)
    _arg: ClassVar[str | None] = None  # how the command line named it: the name, or the path as typed
    _normalised: ClassVar[Normalised | None] = None


def profile_source(profile: Profile) -> Path | None:
    """The YAML file ``profile`` was loaded from; None for a profile made in code."""
    return profile._source if isinstance(profile, LoadedProfile) else None


def profile_arg(profile: Profile, *, lasting: bool = False) -> str:
    """How a command that envgen prints names ``profile`` so that it runs as printed: the name when the search
    path finds it by name, else the path the user typed (shell-quoted). ``lasting``: for text kept in a file (a
    lock's header), where a typed absolute path would tie the file to this machine: the path relative to the
    current directory when the file lies below it, else the absolute path. A profile made in code: its name."""
    import shlex

    if not isinstance(profile, LoadedProfile) or not profile._arg:
        return profile.name
    typed = Path(profile._arg).expanduser()
    if lasting and is_path_ref(profile._arg) and typed.is_absolute() and profile._source is not None:
        source = profile._source
        try:
            here = Path.cwd().resolve()
        except OSError:  # the current directory is gone: nothing is relative to it
            return shlex.quote(str(source))
        return shlex.quote(str(source.relative_to(here) if source.is_relative_to(here) else source))
    return shlex.quote(profile._arg)


def is_path_ref(ref: str) -> bool:
    """A profile reference that names a file (``find_profile`` opens it) rather than a profile by name."""
    return ref.endswith((".yaml", ".yml")) or os.sep in ref


def profile_notes(profile: Profile) -> Normalised | None:
    """What loading did to the written profile: defaults filled, frameworks lifted out of packages.pip,
    and the file:line each lifted framework came from. None for a profile made in code."""
    return profile._normalised if isinstance(profile, LoadedProfile) else None


@dataclass(frozen=True)
class ProfileSource:
    name: str
    path: Path
    origin: str  # "builtin", "user" or "file"
    arg: str = ""  # what finds it again on a command line: the path as given for "file", else the name

    @property
    def command_arg(self) -> str:
        return self.arg or self.name


def search_dirs(env: Mapping[str, str] | None = None) -> list[tuple[Path, str]]:
    """User directories first (they may shadow built-ins on purpose), then the built-ins."""
    env = os.environ if env is None else env
    dirs = [(Path(p).expanduser(), "user") for p in env.get("ENVGEN_PROFILE_PATH", "").split(os.pathsep) if p]
    dirs.append((builtin_profiles_dir(), "builtin"))
    return dirs


def list_profiles(env: Mapping[str, str] | None = None) -> list[ProfileSource]:
    seen: dict[str, ProfileSource] = {}
    for directory, origin in search_dirs(env):
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob("*.yaml")):
            seen.setdefault(path.stem, ProfileSource(path.stem, path, origin))
    return sorted(seen.values(), key=lambda s: s.name)


def find_profile(ref: str, env: Mapping[str, str] | None = None) -> ProfileSource:
    """``ref`` is a profile name or a path to a YAML file."""
    if "\x00" in ref:
        raise ProfileNotFound(f"profile {shown(ref)} holds a NUL character", fix="give a profile name or a path")
    if is_path_ref(ref):
        try:
            candidate = Path(ref).expanduser()
            found = candidate.is_file()
            resolved = candidate.resolve() if found else candidate
        except (OSError, RuntimeError) as exc:  # a name too long, a symlink loop, an unknown ~user
            raise ProfileNotFound(f"profile file {shown(ref)} cannot be opened: {shown(str(exc), 80)}",
                                  fix="give an existing .yaml path") from None
        if not found:
            named = next((s.name for s in list_profiles(env) if s.name == candidate.stem), None)
            fix = (f"did you mean the profile `{named}` (without .yaml: profiles are found by name)?" if named
                   else "give an existing .yaml path")
            raise ProfileNotFound(f"profile file {shown(ref)} does not exist", fix=fix)
        return ProfileSource(candidate.stem, resolved, "file", ref)
    for source in list_profiles(env):
        if source.name == ref:
            return source
    known = [s.name for s in list_profiles(env)]
    guess = did_you_mean(ref, known)
    raise ProfileNotFound(
        f"no profile named {shown(ref)}" + (f"; did you mean {guess!r}?" if guess else ""),
        fix=f"use one of: {', '.join(known) or 'none'}; or a path to a .yaml file; or add a directory to "
            "ENVGEN_PROFILE_PATH",
    )


def deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """Mappings merge key by key; lists and scalars in ``override`` replace those in ``base``."""
    out = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out




def _origins(doc: LocatedDoc) -> Origins:
    return {key: (doc.path, line) for key, line in doc.lines.items()}


def _parent_ref(doc: LocatedDoc, ref: str) -> str:
    """A path in `extends` is relative to the file that says it, not to the current directory."""
    if ref.endswith((".yaml", ".yml")) or "/" in ref:
        candidate = Path(ref).expanduser()
        return str(candidate if candidate.is_absolute() else doc.path.parent / candidate)
    return ref


def _resolve(doc: LocatedDoc, env: Mapping[str, str] | None, chain: tuple[Path, ...],
             used: list[tuple[str, Path]]) -> tuple[dict[str, Any], Origins]:
    """The merged data, and for every key path the file and line that supplied it; ``used`` gains each
    `extends` reference and the file it found."""

    parent_ref = doc.data.get("extends")
    if parent_ref is None:
        return doc.data, _origins(doc)
    if not isinstance(parent_ref, str):
        raise ProfileError(f"{doc.path}:{doc.line_of(('extends',))}: field 'extends' must be a profile name")
    if len(chain) > MAX_EXTENDS_DEPTH:
        raise ProfileError(f"{doc.path}: 'extends' chain is deeper than {MAX_EXTENDS_DEPTH}")
    ref = _parent_ref(doc, parent_ref)
    where = f"{doc.path}:{doc.line_of(('extends',))}: field 'extends' = {shown(parent_ref)}"
    source = find_profile(ref, env)
    if source.path.resolve().suffix not in (".yaml", ".yml"):  # only a profile, never any file (/etc/shadow)
        raise ProfileError(f"{where} names {source.path.resolve()}, which is no profile (a profile is a .yaml file)",
                           fix="extend a profile by name, or by the path of its .yaml file")
    used.append((ref, source.path))
    if source.path.resolve() in chain:
        raise ProfileError(f"{where} makes a cycle", fix="remove the circular extends")
    parent, origins = _resolve(_parent_doc(source.path, where), env, chain + (source.path.resolve(),), used)
    merged = deep_merge(parent, doc.data)
    merged.pop("extends", None)
    return merged, {**origins, **_origins(doc)}


def _parent_doc(path: Path, where: str) -> LocatedDoc:
    """The profile `extends` names, read as YAML; a file that does not read as a profile's mapping is one line that
    names it, never a line of its text."""
    from envgen.profile.yamlsrc import load_yaml

    try:
        doc = load_yaml(path)
    except ProfileError:
        doc = None
    if doc is None or not isinstance(doc.data, dict):
        raise ProfileError(f"{where}: {path} does not read as a profile (a YAML mapping of profile fields)",
                           fix=f"extend a profile; `envgen check {path}` says what is wrong in that file")
    return doc


def load_profile(ref: str | Path, env: Mapping[str, str] | None = None,
                 kb: KnowledgeBase | None = None) -> Profile:
    """The profile ``ref`` names (a name on the search path, or a file), normalised once, as written: what it leaves
    to the knowledge base (an NGC release's CUDA, cuDNN and Python, a torch tag's CUDA) planning fills in
    (``plan.defaults``). ``kb``: whose framework names to lift from packages.pip (without one, their own file)."""
    return load_source(find_profile(str(ref), env), env, kb, [])


def load_source(source: ProfileSource, env: Mapping[str, str] | None, kb: KnowledgeBase | None,
                used: list[tuple[str, Path]]) -> LoadedProfile:
    """``load_profile`` of a profile already found; ``used`` gains the `extends` references it followed."""
    from envgen.profile.yamlsrc import load_yaml

    doc = load_yaml(source.path)
    data, origins = _resolve(doc, env, (source.path.resolve(),), used)
    data.pop("extends", None)
    if kb is not None:
        names = kb.framework_names
    else:  # the KB is never read by loading: the framework names are one small file of their own
        from envgen.kb.distributions import read_framework_names

        names = read_framework_names()
    notes = normalise(data, origins, source.path, names)
    data = notes.data
    # pydantic_core's error class (pydantic's is the same one): importing pydantic itself is left to the validator
    from pydantic_core import ValidationError

    try:
        profile = LoadedProfile.model_validate(data, context={NORMALISED: True})
    except ValidationError as exc:
        problems = format_problems(source.path, origins, exc, notes.moved)
        raise ProfileError(problems[0], more=problems[1:]) from None
    if source.origin != "file" and profile.name != source.name:
        raise ProfileError(
            f"{source.path}:{doc.line_of(('name',))}: field 'name' = {profile.name!r} differs from the file name",
            fix=f"rename the file to {profile.name}.yaml or set name: {source.name}",
        )
    profile.set_private("_source", source.path)
    profile.set_private("_arg", source.command_arg)
    profile.set_private("_normalised", notes)
    return profile
