"""Strict, frozen record types that cost nothing to import: the profile and the knowledge-base rows.

A :class:`Record` subclass is a keyword-only stdlib dataclass (made so by ``__init_subclass__``) whose
``__init__``, ``__eq__``, ``__hash__``, ``__repr__`` and frozen ``__setattr__`` are Record's own (dataclasses would
generate them per class, ~1 ms each). pydantic validates it, but only when data is validated (``model_validate``),
dumped or described as a JSON Schema: it is imported then and not before. So a profile and a knowledge base served
from the caches (pickles of records) reach `envgen check`'s rules without pydantic being imported at all (importing
pydantic's model machinery is ~0.2 s of a process that must finish in 0.3 s), and a compiled validator can be
pickled and restored (:func:`use_compiled`, kept by ``envgen.compiled``: pydantic_core alone, no schema generated).

The validation is as strict as pydantic's strict models: an unknown key is an error, no type is coerced (a YAML
number is no string, "5" is no integer), and the constraints below are written as ``Annotated`` metadata that
builds its pydantic schema lazily: :class:`Matches` (a pattern, with envgen's own message), :class:`Between`
(integer bounds), :class:`Length` (text or list length), :class:`Check` (a function before or after the type's
own validation, or in place of it), :class:`Lax` (a part validated without strictness), :class:`Doc` (a field's
description in the JSON Schema). Checks across fields
go in ``__post_init__`` (raise ValueError). Mutable defaults are ``dataclasses.field(default_factory=list)``.

The method names are pydantic's (``model_validate``, ``model_dump``, ``model_copy``, ``model_fields``,
``model_json_schema``) so callers read as they did when these were pydantic models. Constructing a record
directly (``Row(source=..., ...)``) does not validate its fields (as ``model_construct`` did not): code that makes
rows of its own values does so; data from files, users and the network goes through ``model_validate``.
"""

from __future__ import annotations

import dataclasses
import re
import typing
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler, TypeAdapter
    from pydantic_core import CoreSchema
    from typing_extensions import dataclass_transform
else:
    def dataclass_transform(**_: object) -> Callable[[Any], Any]:
        return lambda cls: cls

R = TypeVar("R", bound="Record")
Json = dict[str, Any]

# pydantic's model config for every record (a plain dict: pydantic's ConfigDict is a TypedDict of these keys)
CONFIG: Json = {"extra": "forbid", "strict": True}


def adapter(cls: type[Any]) -> TypeAdapter[Any]:
    """pydantic's validator and serialiser of ``cls``, built on first use (importing pydantic then) and kept on the
    class."""
    found: TypeAdapter[Any] | None = cls.__dict__.get("__record_adapter__")
    if found is None:
        from pydantic import TypeAdapter

        found = TypeAdapter(cls)
        type.__setattr__(cls, "__record_adapter__", found)
    return found


def has_validator(cls: type[Record]) -> bool:
    """True when ``cls`` validates without generating pydantic's schema: its validator was built in this process,
    or restored (:func:`use_compiled`)."""
    return "__record_validator__" in vars(cls) or "__record_adapter__" in vars(cls)


def use_compiled(cls: type[R], validator: Any, serializer: Any) -> None:
    """``cls`` validates and dumps with its adapter's compiled validator and serialiser restored from another
    process (the same record code and pydantic: the caller keys them by both), so neither generates a schema."""
    type.__setattr__(cls, "__record_validator__", validator)
    type.__setattr__(cls, "__record_serializer__", serializer)


@dataclasses.dataclass(frozen=True)
class FieldView:
    """What ``model_fields`` says of one field: its annotation (resolved), its default and its description."""

    name: str
    annotation: Any
    field: dataclasses.Field[Any]
    description: str | None

    def get_default(self, call_default_factory: bool = False) -> Any:
        if self.field.default is not dataclasses.MISSING:
            return self.field.default
        if call_default_factory and self.field.default_factory is not dataclasses.MISSING:
            return self.field.default_factory()
        return None

    @property
    def required(self) -> bool:
        return self.field.default is dataclasses.MISSING and self.field.default_factory is dataclasses.MISSING


class _Fields:
    """``Model.model_fields``: the fields of the class it is read from, resolved once per class."""

    def __get__(self, obj: object, cls: type[Record]) -> dict[str, FieldView]:
        return _field_views(cls)


def _field_views(cls: type[Record]) -> dict[str, FieldView]:
    """The fields of ``cls`` with their annotations resolved, once per class (kept on the class)."""
    found: dict[str, FieldView] | None = cls.__dict__.get("__record_views__")
    if found is not None:
        return found
    hints = typing.get_type_hints(cls, include_extras=True)
    views = {}
    for item in dataclasses.fields(cls):
        hint = hints[item.name]
        extras = getattr(hint, "__metadata__", ())
        doc = next((meta.text for meta in extras if isinstance(meta, Doc)), None)
        views[item.name] = FieldView(item.name, typing.get_args(hint)[0] if extras else hint, item, doc)
    type.__setattr__(cls, "__record_views__", views)
    return views


@dataclass_transform(frozen_default=True, kw_only_default=True, field_specifiers=(dataclasses.field,))
class Record:
    """Base of envgen's strict records (see the module's docstring)."""

    __pydantic_config__: ClassVar[Json] = CONFIG
    model_fields: ClassVar[_Fields] = _Fields()
    # True: a validated record remembers which keys its data gave (``model_fields_set``), for the user's
    # settings that override another's only where the user wrote them (Mirrors)
    REMEMBERS_KEYS: ClassVar[bool] = False
    __record_fields__: ClassVar[tuple[tuple[str, Any, Any], ...]] = ()  # (name, default, factory) per field
    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # a dataclass for its fields (pydantic and dataclasses.fields read them); __init__, __repr__, __eq__,
        # __hash__ and the frozen __setattr__ are Record's own, written once: dataclasses' generated ones cost
        # ~1 ms of exec per class, a quarter of `envgen check` over the ~60 record types
        dataclasses.dataclass(init=False, repr=False, eq=False, kw_only=True)(cls)
        cls.__record_fields__ = tuple((f.name, f.default, f.default_factory) for f in dataclasses.fields(cls))

    def __init__(self, **values: Any) -> None:
        put = self.__dict__
        for name, default, factory in self.__record_fields__:
            if name in values:
                put[name] = values.pop(name)
            elif default is not dataclasses.MISSING:
                put[name] = default
            elif factory is not dataclasses.MISSING:
                put[name] = factory()
            else:
                raise TypeError(f"{type(self).__name__}() missing keyword argument {name!r}")
        if values:
            raise TypeError(f"{type(self).__name__}() got unexpected keyword arguments {', '.join(sorted(values))}")
        post_init = getattr(self, "__post_init__", None)
        if post_init is not None:
            post_init()

    def _values(self) -> tuple[Any, ...]:
        return tuple(self.__dict__[name] for name, _, _ in self.__record_fields__)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={self.__dict__[name]!r}" for name, _, _ in self.__record_fields__)
        return f"{type(self).__name__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return bool(self._values() == other._values())

    def __hash__(self) -> int:
        return hash((self.__class__, self._values()))

    def __setattr__(self, name: str, value: object) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        schema = handler(source)
        node: Any = schema
        while node.get("type") == "definitions":
            node = node["schema"]
        # strict fields, but the record itself may come as a mapping (a strict dataclass schema takes instances only)
        node["strict"] = False
        if not cls.REMEMBERS_KEYS:
            return schema
        from pydantic_core import core_schema

        return core_schema.no_info_wrap_validator_function(_remember_keys, schema)

    @classmethod
    def model_validate(cls: type[R], data: Any, *, context: Mapping[str, Any] | None = None) -> R:
        """``data`` validated into a ``cls``; raises pydantic's ValidationError."""
        kept = cls.__dict__.get("__record_validator__")  # a validator restored by use_compiled
        result: R = (kept or adapter(cls)).validate_python(data, context=context)
        return result

    def model_dump(self, *, mode: Literal["python", "json"] = "python", exclude: set[str] | None = None,
                   exclude_defaults: bool = False) -> dict[str, Any]:
        kept = type(self).__dict__.get("__record_serializer__")  # restored by use_compiled: as the adapter's
        dump = kept.to_python if kept is not None else adapter(type(self)).dump_python
        out: dict[str, Any] = dump(self, mode=mode, exclude=exclude, exclude_defaults=exclude_defaults)
        return out

    def model_copy(self: R, *, update: Mapping[str, Any] | None = None) -> R:
        """A copy with the fields of ``update`` replaced, not validated (as pydantic's ``model_copy``: the fields it
        replaces count as set)."""
        update = update or {}
        copy = type(self)(**{**{name: self.__dict__[name] for name, _, _ in self.__record_fields__}, **update})
        copy.__dict__.update({k: v for k, v in self.__dict__.items() if k not in copy.__dict__})  # private state
        given = self.__dict__.get("_fields_set")
        if isinstance(given, frozenset):
            copy.__dict__["_fields_set"] = given | set(update)
        return copy

    @classmethod
    def model_json_schema(cls, mode: Literal["validation", "serialization"] = "validation") -> dict[str, Any]:
        schema: dict[str, Any] = adapter(cls).json_schema(mode=mode)
        _factory_defaults(cls, schema, schema.get("$defs", {}), set())
        return schema

    @property
    def model_fields_set(self) -> frozenset[str]:
        """The fields the validated data gave (REMEMBERS_KEYS), else those that differ from their defaults."""
        given = self.__dict__.get("_fields_set")
        if isinstance(given, frozenset):
            return given
        return frozenset(name for name, view in _field_views(type(self)).items()
                         if view.required or getattr(self, name) != view.get_default(call_default_factory=True))

    def set_private(self, name: str, value: object) -> None:
        """Attach state that is no field (not dumped, compared or hashed), such as the file a profile came from."""
        self.__dict__[name] = value


def _factory_defaults(cls: type[Record], node: Json, defs: Json, seen: set[type[Record]]) -> None:
    """An empty list or mapping default (``default_factory=list``) written into the JSON Schema, as a default value
    is (pydantic writes no default it would have to call a factory for)."""
    seen.add(cls)
    properties = node.get("properties", {})
    for name, view in _field_views(cls).items():
        factory = view.field.default_factory
        if name in properties and factory in (list, dict) and "default" not in properties[name]:
            properties[name]["default"] = factory()
        for nested in records_in(view.annotation):
            if nested not in seen and nested.__name__ in defs:
                _factory_defaults(nested, defs[nested.__name__], defs, seen)


def records_in(annotation: Any) -> list[type[Record]]:
    """The record types an annotation names (``list[Row] | None``: Row)."""
    if isinstance(annotation, type) and issubclass(annotation, Record):
        return [annotation]
    return [found for arg in typing.get_args(annotation) for found in records_in(arg)]


def _remember_keys(value: Any, handler: Callable[[Any], Any]) -> Any:
    result = handler(value)
    if isinstance(value, Mapping) and isinstance(result, Record):
        result.set_private("_fields_set", frozenset(str(key) for key in value))
    return result


# --- constraints, written as Annotated metadata --------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Matches:
    """A string that must match ``pattern``; the error says it is not a valid ``what``. Shown as ``pattern`` in
    the JSON Schema."""

    pattern: re.Pattern[str]
    what: str
    message: str = "{value} is not a valid {what}"
    show: Callable[[str], str] = repr  # how the message quotes the value

    def check(self, value: str) -> str:
        if not self.pattern.fullmatch(value):
            raise ValueError(self.message.format(value=self.show(value), what=self.what))
        return value

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        from pydantic_core import core_schema

        return core_schema.no_info_after_validator_function(self.check, handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> Json:
        out = handler(schema)
        out["pattern"] = self.pattern.pattern
        return out


@dataclasses.dataclass(frozen=True)
class Check:
    """``function`` run on the value: after the type's own validation (``after``), before it (``before``: the
    function may convert raw data), or instead of it (``plain``). It raises ValueError on a bad value."""

    function: Callable[[Any], Any]
    mode: Literal["after", "before", "plain"] = "after"
    pattern: str | None = None  # shown as the JSON Schema's pattern, where the check is a pattern in effect

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        from pydantic_core import core_schema

        if self.mode == "plain":
            return core_schema.no_info_plain_validator_function(self.function)
        build = (core_schema.no_info_before_validator_function if self.mode == "before"
                 else core_schema.no_info_after_validator_function)
        return build(self.function, handler(source))

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> Json:
        out = handler(schema)
        if self.pattern is not None:
            out["pattern"] = self.pattern
        return out


@dataclasses.dataclass(frozen=True)
class Lax:
    """The value (and what it holds) validated without strictness: a mapping may become a named tuple, a list a
    tuple. Unknown keys and wrong types of the parts are still errors."""

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        schema = handler(source)
        _unstrict(schema)
        return schema


def _unstrict(schema: Any) -> None:
    for node in mappings_in(schema):
        if "type" in node and "strict" not in node:
            node["strict"] = False


def mappings_in(node: Any) -> Iterator[dict[str, Any]]:
    """Every mapping in a nest of mappings and lists (a pydantic core schema, a JSON Schema), outermost first."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from mappings_in(value)
    elif isinstance(node, list):
        for value in node:
            yield from mappings_in(value)


@dataclasses.dataclass(frozen=True)
class Between:
    """An integer from ``ge`` to ``le`` (both included)."""

    ge: int
    le: int

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        from pydantic_core import core_schema

        return core_schema.int_schema(ge=self.ge, le=self.le, strict=True)


@dataclasses.dataclass(frozen=True)
class Length:
    """A string or list of ``min``..``max`` items (characters)."""

    min: int = 0
    max: int | None = None

    def __get_pydantic_core_schema__(self, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        schema: Any = handler(source)
        if self.min:
            schema["min_length"] = self.min
        if self.max is not None:
            schema["max_length"] = self.max
        return schema  # type: ignore[no-any-return]


@dataclasses.dataclass(frozen=True)
class Doc:
    """A field's description, for the JSON Schema (``envgen schema``) and ``model_fields``."""

    text: str | None

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> Json:
        out = handler(schema)
        if self.text:
            out["description"] = self.text
        return out


__all__ = ["Between", "Check", "Doc", "FieldView", "Lax", "Length", "Matches", "Record", "adapter",
           "has_validator", "mappings_in", "records_in", "use_compiled"]
