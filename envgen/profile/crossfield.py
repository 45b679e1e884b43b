"""The profile's cross-field rules (a field that another one's value makes necessary): enforced by the model
(``envgen.profile.model``) and written by ``envgen schema`` as if/then clauses (``envgen.profile.schema``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

SET = object()  # CrossFieldRule.equals: "whenever the field is set (not null)"


@dataclass(frozen=True)
class CrossFieldRule:
    """When the field at ``when`` (dotted path) equals ``equals`` (or is set, for :data:`SET`), the
    top-level field ``then`` must be set (``need="set"``) or a non-empty list (``need="nonempty"``).
    The model enforces these; ``envgen schema`` writes them as if/then clauses."""

    when: str
    equals: object
    then: str
    need: Literal["set", "nonempty"]
    message: str
    # What a file may leave to planning: JSON Schema conditions under which planning fills ``then`` from the KB
    # (plan.defaults), so the schema of the *file* waives the rule there, and so does the model.
    filled_when: tuple[dict[str, Any], ...] = ()
    # planning also fills ``then`` from the release row of a base whose family has one (NGC: plan.defaults); the
    # schema names those bases from base_families.yaml
    filled_by_release: bool = False


# Where planning fills cuda from the frameworks' wheels (plan.defaults, Profile.cuda_from_wheels): a torch build tag
# (+cu121), tensorflow[and-cuda], in frameworks: or as a packages.pip line (and from an NGC base: filled_by_release).
_CUDA_FILLED: tuple[dict[str, Any], ...] = (
    {"required": ["frameworks"], "properties": {"frameworks": {
        "required": ["pytorch"], "properties": {"pytorch": {"pattern": "\\+cu[0-9]+$"}}}}},
    {"required": ["frameworks"], "properties": {"frameworks": {
        "required": ["tensorflow", "tensorflow_package"],
        "properties": {"tensorflow_package": {"const": "tensorflow[and-cuda]"}}}}},
    {"required": ["packages"], "properties": {"packages": {"required": ["pip"], "properties": {"pip": {
        "contains": {"pattern": "^\\s*(torch\\s*==[^;]*\\+cu[0-9]+|tensorflow\\s*\\[\\s*and-cuda\\s*\\]\\s*==)"}}}}}},
)

CROSS_FIELD_RULES: tuple[CrossFieldRule, ...] = (
    CrossFieldRule("cudnn", SET, "cuda", "set", "cudnn is set but cuda is not: set cuda too, or remove cudnn",
                   _CUDA_FILLED, filled_by_release=True),
    CrossFieldRule("gpu.required", True, "cuda", "set",
                   "gpu.required is true but cuda is not set: set cuda, or gpu.required: false", _CUDA_FILLED,
                   filled_by_release=True),
)
