"""The record types (``envgen.records``): as strict as the pydantic models they replaced, frozen, and free of
pydantic until data is validated."""

from __future__ import annotations

import dataclasses
import pickle
import subprocess
import sys
from typing import Annotated

import pytest
from pydantic import ValidationError

from envgen.kb.models import GpuModel, TorchVariant
from envgen.profile import load_profile
from envgen.profile.loader import profile_source
from envgen.profile.model import Mirrors, Profile, Smoke
from envgen.records import Between, Doc, Length, Record

MINIMAL = {"name": "t", "base": "debian:12", "python": "3.11", "gpu": {"required": False}}


class Part(Record):
    """A part."""

    size: Annotated[int, Between(1, 9), Doc("How big.")] = 3
    tags: Annotated[list[str], Length(max=2)] = dataclasses.field(default_factory=list)


class Whole(Record):
    name: str
    part: Part = dataclasses.field(default_factory=Part)


def _errors(cls: type[Record], data: object) -> list[tuple[tuple[object, ...], str]]:
    with pytest.raises(ValidationError) as info:
        cls.model_validate(data)
    return [(tuple(e["loc"]), e["type"]) for e in info.value.errors()]


@pytest.mark.parametrize(("data", "expected"), [
    ({"name": "w", "part": {"size": 3, "colour": "red"}}, [(("part", "colour"), "unexpected_keyword_argument")]),
    ({"name": "w", "part": {"size": "3"}}, [(("part", "size"), "int_type")]),  # no coercion of text
    ({"name": "w", "part": {"size": True}}, [(("part", "size"), "int_type")]),  # nor of a bool
    ({"name": 5}, [(("name",), "string_type")]),  # a YAML number is no string
    ({"name": "w", "part": {"size": 10}}, [(("part", "size"), "less_than_equal")]),
    ({"name": "w", "part": {"tags": ["a", "b", "c"]}}, [(("part", "tags"), "too_long")]),
    ({"part": {}}, [(("name",), "missing")]),
])
def test_validation_is_strict(data: dict[str, object], expected: list[tuple[tuple[object, ...], str]]) -> None:
    assert _errors(Whole, data) == expected


def test_a_valid_mapping_becomes_the_record() -> None:
    whole = Whole.model_validate({"name": "w", "part": {"size": 4, "tags": ["x"]}})
    assert whole == Whole(name="w", part=Part(size=4, tags=["x"]))
    assert whole.model_dump() == {"name": "w", "part": {"size": 4, "tags": ["x"]}}
    assert repr(whole) == "Whole(name='w', part=Part(size=4, tags=['x']))"


def test_records_are_frozen_and_made_only_of_their_fields() -> None:
    part = Part()
    with pytest.raises(dataclasses.FrozenInstanceError):
        part.size = 4  # type: ignore[misc]
    with pytest.raises(TypeError, match="colour"):
        Part(colour="red")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="missing keyword argument 'name'"):
        Whole()  # type: ignore[call-arg]
    assert Part().tags is not Part().tags  # a fresh list for each record
    assert hash(Smoke()) == hash(Smoke()) and Smoke() == Smoke() and Smoke() != Smoke(batch_size=8)
    assert [f.name for f in dataclasses.fields(Part)] == ["size", "tags"]


def test_cross_field_checks_run_on_validation_and_on_construction() -> None:
    bad = {**MINIMAL, "cudnn": "8.9"}
    assert _errors(Profile, bad) == [((), "value_error")]
    good = Profile.model_validate(MINIMAL)
    with pytest.raises(ValueError, match="cudnn is set but cuda is not"):
        good.model_copy(update={"cudnn": "8.9"})


def test_a_loaded_profile_keeps_its_file_through_pickle_and_copy() -> None:
    loaded = load_profile("cpu-minimal")
    assert profile_source(loaded) is not None
    again = pickle.loads(pickle.dumps(loaded))
    assert again == loaded and profile_source(again) == profile_source(loaded)
    assert profile_source(loaded.model_copy(update={"description": "x"})) == profile_source(loaded)
    assert "_source" not in loaded.model_dump()


def test_mirrors_remember_the_keys_the_user_wrote() -> None:
    """A user's config that sets a mirror to its default (no proxy) still overrides the profile's."""
    written = Mirrors.model_validate({"http_proxy": None, "pip_index_url": "https://pypi.example/simple"})
    assert written.model_fields_set == {"http_proxy", "pip_index_url"}
    copied = written.model_copy(update={"apt_mirror": "http://apt.example/debian"})
    assert copied.model_fields_set == {"http_proxy", "pip_index_url", "apt_mirror"}  # as pydantic's model_copy
    assert Mirrors(pip_index_url="https://pypi.example/simple").model_fields_set == {"pip_index_url"}


def test_field_views_and_schema() -> None:
    assert Part.model_fields["size"].description == "How big."
    assert Part.model_fields["tags"].get_default(call_default_factory=True) == []
    assert Whole.model_fields["name"].required
    schema = Whole.model_json_schema()
    part = schema["$defs"]["Part"]["properties"]
    assert part["size"] == {"default": 3, "description": "How big.", "maximum": 9, "minimum": 1, "title": "Size",
                            "type": "integer"}
    assert part["tags"]["default"] == [] and schema["additionalProperties"] is False


def test_kb_rows_validate_like_the_models_did() -> None:
    row = {"source": "https://example.org/gpus", "name": "X1", "compute_capability": "8.6", "architecture": "Ampere"}
    assert GpuModel.model_validate(row).sm == "sm_86"
    assert _errors(GpuModel, {**row, "compute_capability": 8.6}) == [(("compute_capability",), "string_type")]
    assert _errors(GpuModel, {**row, "source": "x"}) == [(("source",), "string_too_short")]
    variant = {"source": "https://example.org/torch", "tag": "cuda121", "cuda": "12.1", "arch_list": [],
               "index_url": "https://download.pytorch.org/whl/cu121"}
    assert _errors(TorchVariant, variant) == [(("tag",), "value_error")]


def test_the_models_import_without_pydantic() -> None:
    code = ("import sys, envgen.kb.knowledge, envgen.profile.loader, envgen.plan.image\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'pydantic_core')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def _all_record_types() -> list[type[Record]]:
    import importlib
    import pkgutil

    import envgen

    for info in pkgutil.walk_packages(envgen.__path__, "envgen."):
        if ".smoke.probe" not in info.name and not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    found, todo = [], list(Record.__subclasses__())
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return sorted((c for c in found if c.__module__.startswith("envgen.")), key=lambda c: c.__qualname__)


def test_every_record_type_of_envgen_builds_its_validator() -> None:
    """Validators are built on first use: each record type's is built here, so none first fails on a user's
    path (a bundle's manifest, a user config); and the profile's kept validator pickles and validates alike."""
    import pickle

    from envgen.records import adapter, use_compiled

    types = _all_record_types()
    assert len(types) > 40, [t.__qualname__ for t in types]
    for cls in types:
        assert adapter(cls).validator is not None, cls
    blob = pickle.dumps((adapter(Profile).validator, adapter(Profile).serializer))  # as envgen.compiled keeps them

    class Restored(Profile):
        pass

    use_compiled(Restored, *pickle.loads(blob))
    assert Restored.model_validate(MINIMAL) == Profile.model_validate(MINIMAL)
