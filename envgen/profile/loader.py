"""Finding profiles (built-in, ``$ENVGEN_PROFILE_PATH``, or a file path), resolving ``extends``
by deep merge, and validating the result into a :class:`Profile`."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import PrivateAttr, ValidationError

from envgen.errors import ProfileError, ProfileNotFound, shown
from envgen.paths import builtin_profiles_dir
from envgen.profile.model import NORMALISED, Profile
from envgen.profile.normalise import Normalised, Origins, ngc_defaults, normalise, wants_ngc_defaults, where_in
from envgen.profile.yamlsrc import LocatedDoc, load_yaml

if TYPE_CHECKING:
    from envgen.kb.knowledge import KnowledgeBase

MAX_EXTENDS_DEPTH = 8


class LoadedProfile(Profile):
    """A profile as :func:`load_profile` made it: it remembers the file it came from (for the lock
    file beside it). The path is private: not a field, so neither the dump, the identity nor the
    hash sees it."""

    _source: Path | None = PrivateAttr(default=None)
    _normalised: Normalised | None = PrivateAttr(default=None)


def profile_source(profile: Profile) -> Path | None:
    """The YAML file ``profile`` was loaded from; None for a profile made in code."""
    return profile._source if isinstance(profile, LoadedProfile) else None


def profile_notes(profile: Profile) -> Normalised | None:
    """What loading did to the written profile: defaults filled, frameworks lifted out of packages.pip,
    and the file:line each lifted framework came from. None for a profile made in code."""
    return profile._normalised if isinstance(profile, LoadedProfile) else None


@dataclass(frozen=True)
class ProfileSource:
    name: str
    path: Path
    origin: str  # "builtin", "user" or "file"


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
    if ref.endswith((".yaml", ".yml")) or os.sep in ref:
        try:
            candidate = Path(ref).expanduser()
            found = candidate.is_file()
            resolved = candidate.resolve() if found else candidate
        except (OSError, RuntimeError) as exc:  # a name too long, a symlink loop, an unknown ~user
            raise ProfileNotFound(f"profile file {shown(ref)} cannot be opened: {shown(str(exc), 80)}",
                                  fix="give an existing .yaml path") from None
        if not found:
            raise ProfileNotFound(f"profile file {shown(ref)} does not exist", fix="give an existing .yaml path")
        return ProfileSource(candidate.stem, resolved, "file")
    for source in list_profiles(env):
        if source.name == ref:
            return source
    names = ", ".join(s.name for s in list_profiles(env)) or "none"
    raise ProfileNotFound(
        f"no profile named {shown(ref)}",
        fix=f"use one of: {names}; or a path to a .yaml file; or add a directory to ENVGEN_PROFILE_PATH",
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


def _resolve(doc: LocatedDoc, env: Mapping[str, str] | None,
             chain: tuple[Path, ...]) -> tuple[dict[str, Any], Origins]:
    """The merged data, and for every key path the file and line that supplied it."""
    parent_ref = doc.data.get("extends")
    if parent_ref is None:
        return doc.data, _origins(doc)
    if not isinstance(parent_ref, str):
        raise ProfileError(f"{doc.path}:{doc.line_of(('extends',))}: field 'extends' must be a profile name")
    if len(chain) > MAX_EXTENDS_DEPTH:
        raise ProfileError(f"{doc.path}: 'extends' chain is deeper than {MAX_EXTENDS_DEPTH}")
    source = find_profile(_parent_ref(doc, parent_ref), env)
    if source.path.resolve() in chain:
        raise ProfileError(
            f"{doc.path}:{doc.line_of(('extends',))}: field 'extends' = {shown(parent_ref)} makes a cycle",
            fix="remove the circular extends",
        )
    parent, origins = _resolve(load_yaml(source.path), env, chain + (source.path.resolve(),))
    merged = deep_merge(parent, doc.data)
    merged.pop("extends", None)
    return merged, {**origins, **_origins(doc)}


def _format_validation(path: Path, origins: Origins, exc: ValidationError) -> str:
    err = exc.errors(include_url=False)[0]
    loc = tuple(part for part in err["loc"] if part != "[key]")
    field = ".".join(str(p) for p in loc) or "(profile)"
    where = where_in(origins, loc, path)
    kind = err["type"]
    if kind == "extra_forbidden":
        allowed = _allowed_keys(loc[:-1])
        return f"{where}: unknown field '{field}'; allowed here: {', '.join(allowed)}"
    if kind == "missing":
        return f"{where}: required field '{field}' is missing"
    value = err.get("input")
    value_text = "" if isinstance(value, (dict, list)) else f" = {shown(value)}"
    message = str(err["msg"]).removeprefix("Value error, ")
    if kind == "string_type" and isinstance(value, (int, float)) and not isinstance(value, bool):
        message += f'; write it in quotes ("{value}"): YAML reads an unquoted 3.10 as the number 3.1'
    return f"{where}: field '{field}'{value_text}: {message}"


def _allowed_keys(parent: tuple[object, ...]) -> list[str]:
    model: Any = Profile
    for part in parent:
        if isinstance(part, int) or not hasattr(model, "model_fields"):
            return []
        annotation = model.model_fields[part].annotation
        model = getattr(annotation, "__args__", (annotation,))[0] if hasattr(annotation, "__args__") else annotation
    return sorted(model.model_fields) if hasattr(model, "model_fields") else []


def load_profile(ref: str | Path, env: Mapping[str, str] | None = None,
                 kb: KnowledgeBase | None = None) -> Profile:
    """The profile ``ref`` names (a name on the search path, or a file), normalised once. An NGC base's left-out
    CUDA, cuDNN and Python come from ``kb`` (without one, from the cached KB, read only then)."""
    source = find_profile(str(ref), env)
    doc = load_yaml(source.path)
    data, origins = _resolve(doc, env, (source.path.resolve(),))
    data.pop("extends", None)
    notes = normalise(data, origins, source.path)
    if wants_ngc_defaults(notes.data):
        if kb is None:
            from envgen.kb.cache import cache_dir, load_kb_cached

            kb = load_kb_cached(cache_dir(os.environ if env is None else env))  # the cache `check` reads next
        ngc_defaults(notes, kb)
    data = notes.data
    try:
        profile = LoadedProfile.model_validate(data, context={NORMALISED: True})
    except ValidationError as exc:
        raise ProfileError(_format_validation(source.path, origins, exc)) from None
    if source.origin != "file" and profile.name != source.name:
        raise ProfileError(
            f"{source.path}:{doc.line_of(('name',))}: field 'name' = {profile.name!r} differs from the file name",
            fix=f"rename the file to {profile.name}.yaml or set name: {source.name}",
        )
    profile._source = source.path
    profile._normalised = notes
    return profile
