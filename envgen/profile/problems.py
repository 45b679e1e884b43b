"""Every validation error of a profile at once, in file order, each at its own line: an unknown key with the
key it most likely meant, a number YAML read from an unquoted version with the text as written."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from envgen.errors import shown
from envgen.profile.model import Profile
from envgen.profile.normalise import Origins, where_in

if TYPE_CHECKING:
    from pydantic import ValidationError


def did_you_mean(word: str, choices: list[str] | tuple[str, ...]) -> str | None:
    """The choice ``word`` most likely misspells (difflib, cutoff 0.6), or None."""
    import difflib  # only a profile with a problem asks

    found = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return found[0] if found else None


def _model_at(parent: tuple[object, ...]) -> Any:
    """The record type at ``parent`` (a key path into the profile), or None. A union's record member counts
    (``slim: bool | Slim``)."""
    model: Any = Profile
    for part in parent:
        if isinstance(part, int) or not hasattr(model, "model_fields") or part not in model.model_fields:
            return None
        args = getattr(model.model_fields[part].annotation, "__args__", (model.model_fields[part].annotation,))
        model = next((arg for arg in args if hasattr(arg, "model_fields")), args[0])
    return model if hasattr(model, "model_fields") else None


def _union_tag(parent: tuple[object, ...], part: object) -> bool:
    """``part`` is the name pydantic gives a union member in an error's place (``slim.Slim.strip``), not a key."""
    model = _model_at(parent[:-1]) if parent else None
    field = model.model_fields.get(str(parent[-1])) if model is not None else None
    return field is not None and part in {getattr(a, "__name__", "") for a in getattr(field.annotation, "__args__", ())}


def allowed_keys(parent: tuple[object, ...]) -> list[str]:
    model = _model_at(parent)
    return sorted(model.model_fields) if model is not None else []


def _what_to_add(loc: tuple[object, ...]) -> str:
    """For a missing field: its own description (the schema's), so the line says what to write."""
    model = _model_at(loc[:-1])
    field = model.model_fields.get(str(loc[-1])) if model is not None and loc else None
    description = getattr(field, "description", None)
    return f"; add it: {description}" if description else ""


def _line_number(where: str) -> int:
    tail = where.rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def _as_written(where: str, key: object) -> str | None:
    """The scalar as the file spells it ("3.10"), read from the line ``where`` points at."""
    path, _, line = where.rpartition(":")
    if not line.isdigit():
        return None
    try:
        text = Path(path).read_text(encoding="utf-8").splitlines()[int(line) - 1]
    except (OSError, IndexError):
        return None
    _, sep, value = text.partition(f"{key}:")
    value = re.split(r" #|[,}\]]", value, maxsplit=1)[0].strip()  # a flow mapping's value ends at , } or ]
    return value if sep and value else None


def _as_given(loc: tuple[object, ...], moved: Mapping[tuple[object, ...], tuple[object, ...]]) -> tuple[object, ...]:
    """``loc`` in the data as validated -> the same place as the file wrote it (an entry after a lifted one)."""
    for end in range(len(loc), 0, -1):
        if loc[:end] in moved:
            return moved[loc[:end]] + loc[end:]
    return loc


def _one(path: Path, origins: Origins, err: Any,
         moved: Mapping[tuple[object, ...], tuple[object, ...]]) -> tuple[int, str, tuple[object, ...], str]:
    loc = _as_given(tuple(part for part in err["loc"] if part != "[key]"), moved)
    field = ".".join(str(p) for p in loc) or "(profile)"
    where = where_in(origins, loc, path)
    kind = err["type"]
    if kind in ("extra_forbidden", "unexpected_keyword_argument"):  # a model's extra key, a record's
        allowed = allowed_keys(loc[:-1])
        guess = did_you_mean(str(loc[-1]), allowed)
        hint = f"did you mean '{guess}'? " if guess else ""
        return _line_number(where), f"{where}: unknown field '{field}'; {hint}allowed here: {', '.join(allowed)}", \
            loc, guess or ""
    if kind == "missing":
        return _line_number(where), f"{where}: required field '{field}' is missing{_what_to_add(loc)}", loc, ""
    value = err.get("input")
    value_text = "" if isinstance(value, (dict, list)) else f" = {shown(value)}"
    message = str(err["msg"]).removeprefix("Value error, ")
    if kind == "string_type" and isinstance(value, (int, float)) and not isinstance(value, bool):
        written = _as_written(where, loc[-1]) if loc else None
        text = written if written and written != str(value) else str(value)
        if written and written != str(value):
            value_text = f" = {written} (YAML read the number {value})"
        message += f'; write it in quotes ("{text}")'
    return _line_number(where), f"{where}: field '{field}'{value_text}: {message}", loc, ""


def format_problems(path: Path, origins: Origins, exc: ValidationError,
                    moved: Mapping[tuple[object, ...], tuple[object, ...]] | None = None) -> list[str]:
    """One line per problem, in file order. A required key that is missing while an unknown key beside it
    looks like it (``pyhton:``) is one problem, at the typo's line. ``moved``: entries that normalising shifted
    in a list, named where the file wrote them."""
    errors = [err for err in exc.errors(include_url=False)  # a mapping where a union takes a flag or a record:
              if not (isinstance(err.get("input"), dict) and str(err["type"]).startswith("bool_"))]  # the record's
    for err in errors:
        err["loc"] = tuple(p for i, p in enumerate(err["loc"]) if not _union_tag(tuple(err["loc"][:i]), p))
    items = [_one(path, origins, err, moved or {}) for err in errors]
    typos = {(loc[:-1], guess) for _, _, loc, guess in items if guess}
    out = []
    for line, text, loc, guess in items:
        if "is missing" in text and loc and (loc[:-1], str(loc[-1])) in typos:
            continue
        if guess and (loc[:-1] + (guess,)) in {i[2] for i in items if "is missing" in i[1]}:
            text += f" ('{guess}' is required)"
        out.append((line, text))
    return [text for _, text in sorted(out, key=lambda item: item[0])]


__all__ = ["allowed_keys", "did_you_mean", "format_problems"]
