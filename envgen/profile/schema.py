"""The JSON Schema of the profile format, generated from the typed model (``envgen schema``).

Never written by hand: :func:`profile_schema` takes pydantic's schema of :class:`Profile` and adds
what a schema of the *file* needs: map keys constrained as strictly as the model constrains them,
required fields waived when the file ``extends`` another (the parent may supply them), and the
model's cross-field rules, read from :data:`envgen.profile.model.CROSS_FIELD_RULES` (waived where planning fills the
field: cuda from an NGC base or the frameworks' wheels; python, required but for an NGC base).
"""

from __future__ import annotations

import json
import re
from typing import Any

from envgen.profile.crossfield import CROSS_FIELD_RULES, SET, CrossFieldRule
from envgen.profile.model import Profile
from envgen.records import mappings_in

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
# Where the checked-in copy lives, relative to the repository root; built-in profiles point at it.
SCHEMA_FILE = "schema/profile.schema.json"


def _close_maps(node: Any) -> None:
    """pydantic writes a dict with constrained keys as ``patternProperties`` only; the model rejects
    any other key, so the schema does too."""
    for mapping in mappings_in(node):
        if "patternProperties" in mapping and "additionalProperties" not in mapping:
            mapping["additionalProperties"] = False


def _rule_schema(rule: CrossFieldRule) -> dict[str, Any]:
    """One cross-field rule as an if/then clause. An absent field counts as its default, so a rule
    whose trigger is the default applies to files that leave the field out too."""
    parts = rule.when.split(".")
    leaf: dict[str, Any] = {"type": "string"} if rule.equals is SET else {"const": rule.equals}
    cond: dict[str, Any] = leaf
    # Absent (at any level) means the default: then the key must be present only if the default
    # does not trigger the rule.
    must_be_present = rule.equals is SET or _default_of(parts) != rule.equals
    for part in reversed(parts):
        cond = {"properties": {part: cond}, **({"required": [part]} if must_be_present else {})}
    filled = [*(_release_bases() if rule.filled_by_release else []), *rule.filled_when]
    if filled:  # planning fills the field there: the file may leave it out
        cond = {"allOf": [cond, {"not": {"anyOf": filled}}]}
    target: dict[str, Any] = {"type": "string"} if rule.need == "set" else {"type": "array", "minItems": 1}
    return {"if": cond, "then": {"required": [rule.then], "properties": {rule.then: target}}}


def _release_bases() -> list[dict[str, Any]]:
    """The bases whose left-out CUDA and Python planning fills from their release row (the families with a release
    table, such as NGC's), as conditions on ``base``."""
    from envgen.kb.families import read_base_families

    return [{"required": ["base"], "properties": {"base": {"pattern": "^" + re.escape(f.match.repository_prefix)}}}
            for f in read_base_families() if f.release_table and f.match.repository_prefix]


def _default_of(parts: list[str]) -> object:
    model: Any = Profile
    value: object = None
    for part in parts:
        info = model.model_fields[part]
        value = info.get_default(call_default_factory=True)
        model = type(value)
    return value


def profile_schema() -> dict[str, Any]:
    schema = Profile.model_json_schema(mode="validation")
    _close_maps(schema)
    required = schema.pop("required", [])
    # python is required but for a base whose release row gives it (planning reads it there: plan.defaults)
    rules = [*(_rule_schema(rule) for rule in CROSS_FIELD_RULES),
             {"if": {"not": {"anyOf": _release_bases()}}, "then": {"required": ["python"]}}]
    # A file that extends another may leave required fields and cross-field facts to its parent.
    schema["if"] = {"required": ["extends"], "properties": {"extends": {"type": "string"}}}
    schema["else"] = {"required": required, "allOf": rules}
    return {"$schema": SCHEMA_DIALECT, **schema}


def schema_text() -> str:
    return json.dumps(profile_schema(), indent=2, ensure_ascii=False) + "\n"


__all__ = ["SCHEMA_FILE", "profile_schema", "schema_text"]
