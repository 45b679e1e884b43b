"""`envgen schema`: the profile format's JSON Schema, generated from the model, checked with the
real validator (check-jsonschema) against every built-in profile and a corpus of good and malformed
files; the schema and the model must reject the same malformed files.

Cost: about 15 check-jsonschema runs, ~10 s in all."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from envgen.cli import app
from envgen.errors import ProfileError
from envgen.profile import load_profile
from envgen.profile.schema import SCHEMA_FILE, profile_schema, schema_text

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fixtures" / "schema"
GOOD = sorted((CORPUS / "good").glob("*.yaml"))
BAD = sorted((CORPUS / "bad").glob("*.yaml"))
BUILTIN = sorted((ROOT / "profiles").glob("*.yaml"))


def _tool() -> str:
    local = Path(sys.executable).parent / "check-jsonschema"
    found = str(local) if local.exists() else shutil.which("check-jsonschema")
    assert found, "check-jsonschema is missing: pip install -e '.[test]'"
    return found


def _validate(*files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_tool(), "--schemafile", str(ROOT / SCHEMA_FILE), *map(str, files)],
                          capture_output=True, text=True, timeout=120)


def test_checked_in_schema_is_generated() -> None:
    assert (ROOT / SCHEMA_FILE).read_text(encoding="utf-8") == schema_text(), \
        "schema/profile.schema.json is stale: run `envgen schema > schema/profile.schema.json`"


def test_cli_prints_the_schema() -> None:
    result = CliRunner().invoke(app, ["schema"])
    assert result.exit_code == 0
    assert json.loads(result.output) == profile_schema()


def _properties(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    out = [(name, prop) for name, prop in schema.get("properties", {}).items()]
    for model, definition in schema.get("$defs", {}).items():
        out += [(f"{model}.{name}", prop) for name, prop in definition.get("properties", {}).items()]
    return out


def test_every_field_has_a_description_and_allowed_values() -> None:
    schema = profile_schema()
    props = _properties(schema)
    assert len(props) > 40
    defs = schema["$defs"]

    def described(prop: dict[str, Any]) -> bool:  # a nested model may carry it on its definition
        ref = prop.get("$ref", "").rsplit("/", 1)[-1]
        return bool(prop.get("description") or (ref and defs[ref].get("description")))

    missing = [name for name, prop in props if not described(prop)]
    assert not missing, f"fields without Field(description=...): {missing}"
    # Literal fields list their values; constrained strings carry their pattern.
    assert schema["properties"]["installer"]["enum"] == ["conda", "pip"]
    assert "pattern" in schema["properties"]["base"]
    assert "pattern" in schema["properties"]["python"]["anyOf"][0]  # optional: an NGC base brings its own
    registries = schema["$defs"]["Mirrors"]["properties"]["registries"]
    assert registries["additionalProperties"] is False and registries["patternProperties"]


def test_builtin_profiles_carry_the_schema_line_and_validate() -> None:
    for path in BUILTIN:
        assert path.read_text(encoding="utf-8").splitlines()[0] == \
            "# yaml-language-server: $schema=../schema/profile.schema.json", path.name
    result = _validate(*BUILTIN)
    assert result.returncode == 0, result.stdout + result.stderr


def test_good_corpus_passes_schema_and_model(tmp_path: Path) -> None:
    assert _validate(*GOOD).returncode == 0
    for path in GOOD:
        load_profile(str(path), {})


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.stem)
def test_schema_and_model_reject_the_same_malformed_file(path: Path) -> None:
    result = _validate(path)
    assert result.returncode == 1, f"schema accepted {path.name}:\n{result.stdout}"
    with pytest.raises(ProfileError):
        load_profile(str(path), {})
