"""Lock files (envgen.plan.lockfile, envgen.lock.lock): parsing, writing, report reading,
and rendering a profile that has a lock beside it. No network: pip is never run here."""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from envgen.check import check_profile
from envgen.errors import InputError
from envgen.kb import load_kb
from envgen.kb.knowledge import KnowledgeBase
from envgen.lock.lock import entries_from_report, lock, resolve_command, split_sets
from envgen.plan.image import plan_image
from envgen.plan.lockfile import (
    Lock,
    LockEntry,
    LockInputs,
    format_lock,
    lock_path,
    parse_lock,
)
from envgen.profile import Profile, load_profile
from envgen.render.core import render, render_in_memory

H1, H2, H3 = "a" * 64, "b" * 64, "c" * 64

PROFILE = """\
name: locked
description: lock test profile
base: debian:bookworm-slim
local_base: true
installer: pip
python: "3.11"
gpu: {required: false}
packages:
  pip: [rich==13.7.1]
"""

LOCK = f"""\
# hand-written lock for the tests
# format: envgen.lock/1
# python: 3.11
# framework-pins: -
# extra-pins: rich==13.7.1
# envgen: 0.1.0
# [environment] nothing: no framework
# [extras] packages.pip
rich==13.7.1 --hash=sha256:{H1}
Pygments==2.17.2 --hash=sha256:{H2} --hash=sha256:{H3}
markdown-it-py==3.0.0 --hash=sha256:{H3}
"""


@pytest.fixture()
def profile_dir(tmp_path: Path) -> Path:
    (tmp_path / "locked.yaml").write_text(PROFILE, encoding="utf-8")
    return tmp_path


# --- the file format --------------------------------------------------------------------------


def test_parse_reads_sections_inputs_and_canonical_names() -> None:
    parsed = parse_lock(LOCK, "x.lock.txt")
    assert parsed.inputs == LockInputs("3.11", (), ("rich==13.7.1",))
    assert parsed.environment == ()
    assert [e.pin for e in parsed.extras] == ["rich==13.7.1", "pygments==2.17.2", "markdown-it-py==3.0.0"]
    assert parsed.extras[1].sha256 == (H2, H3)
    assert ("envgen", "0.1.0") in parsed.fields


def test_format_then_parse_round_trips_sorted_and_deterministic() -> None:
    entries = (LockEntry("torch", "2.13.0+cpu", (H1,)), LockEntry("absl-py", "2.5.1", (H2,)))
    original = Lock(LockInputs("3.11", ("torch==2.13.0+cpu",), ("six==1.16.0",)), entries,
                    (LockEntry("six", "1.16.0", (H3,)),))
    text = format_lock(original, profile_name="demo", extra_fields=[("find-links", "/opt/wheels")])
    assert text == format_lock(original, profile_name="demo", extra_fields=[("find-links", "/opt/wheels")])
    lines = text.splitlines()
    assert lines.index(f"absl-py==2.5.1 --hash=sha256:{H2}") < lines.index(f"torch==2.13.0+cpu --hash=sha256:{H1}")
    assert not any(word in text.lower() for word in ("date", "time:", "generated at"))
    again = parse_lock(text)
    assert again.inputs == original.inputs
    assert [e.pin for e in again.environment] == ["absl-py==2.5.1", "torch==2.13.0+cpu"]
    assert [e.line for e in again.extras] == [f"six==1.16.0 --hash=sha256:{H3}"]


@pytest.mark.parametrize(("text", "match"), [
    (LOCK.replace("# python: 3.11\n", ""), "header field 'python' is missing"),
    (LOCK.replace("envgen.lock/1", "envgen.lock/9"), "format"),
    (LOCK + "--index-url https://evil.example/simple\n", ":12: .*not a 'name==version"),
    (LOCK + "six==1.16.0\n", "not a 'name==version --hash"),
    (LOCK + f"six>=1.16 --hash=sha256:{H1}\n", "not a 'name==version"),
    (LOCK + f"six==1.16.0 --hash=sha256:{H1}; echo x\n", "not a 'name==version"),
    (LOCK + f"rich==13.7.1 --hash=sha256:{H2}\n", "rich is listed twice"),
    (LOCK.replace("# [environment] nothing: no framework\n", "# [other]\n"), "unknown section"),
    (LOCK.replace("# [environment] nothing: no framework\n# [extras] packages.pip\n", ""), "before any"),
])
def test_parse_rejects_bad_files_with_one_line(text: str, match: str) -> None:
    with pytest.raises(InputError, match=match) as caught:
        parse_lock(text, "x.lock.txt")
    assert "\n" not in caught.value.one_line() and "envgen lock" in caught.value.one_line()


def test_lock_path_beside_the_profile() -> None:
    assert lock_path(Path("/p/cpu-smoke.yaml")) == Path("/p/cpu-smoke.lock.txt")
    assert lock_path(Path("/p/mine.yml")) == Path("/p/mine.lock.txt")


# --- reading pip's report ---------------------------------------------------------------------


def _item(name: str, version: str, **archive: object) -> dict[str, object]:
    return {"metadata": {"name": name, "version": version},
            "download_info": {"url": f"https://files.example/{name}.whl", "archive_info": archive}}


def test_entries_from_report_take_hashes_or_hash() -> None:
    report = {"version": "1", "install": [
        _item("Jinja2", "3.1.6", hashes={"sha256": H1}, hash=f"sha256={H1}"),
        _item("opt_einsum", "3.4.0", hash=f"sha256={H2}"),
    ]}
    entries = entries_from_report(report)
    assert entries["jinja2"].line == f"jinja2==3.1.6 --hash=sha256:{H1}"
    assert entries["opt-einsum"].sha256 == (H2,)
    with pytest.raises(InputError, match="no sha256 for foo==1.0"):
        entries_from_report({"install": [_item("foo", "1.0")]})


def test_resolve_command_targets_the_image_platform(tmp_path: Path) -> None:
    command = resolve_command(tmp_path / "r.txt", tmp_path / "report.json", tmp_path / "t", "3.10",
                              find_links=["/opt/wheels"], index_urls=["https://download.example/whl"])
    joined = " ".join(command)
    assert "install --dry-run --ignore-installed" in joined and "--only-binary=:all:" in command
    assert command[command.index("--python-version") + 1] == "3.10"
    assert command[command.index("--implementation") + 1] == "cp"
    assert "manylinux2014_x86_64" in command and "--report" in command and "--target" in command
    assert command[command.index("--find-links") + 1] == "/opt/wheels"
    assert command[command.index("--extra-index-url") + 1] == "https://download.example/whl"


def test_split_sets_is_the_difference_and_refuses_moved_versions() -> None:
    env = {"numpy": LockEntry("numpy", "1.23.5", (H1,))}
    combined = {**env, "six": LockEntry("six", "1.16.0", (H2,))}
    assert [e.pin for e in split_sets(env, combined, ["six==1.16.0"])] == ["six==1.16.0"]
    moved = {"numpy": LockEntry("numpy", "1.22.0", (H3,))}
    with pytest.raises(InputError, match="moves numpy from 1.23.5 .* to 1.22.0"):
        split_sets(env, moved, ["numpy==1.22.0"])


def _pylock(packages: list[tuple[str, str, str]]) -> str:
    """A PEP 751 pylock.toml as `uv pip compile --format pylock.toml` writes it (one wheel each, plus a
    wheel for another platform that must not be chosen)."""
    out = ['lock-version = "1.0"', 'created-by = "uv"']
    for name, version, digest in packages:
        stem = name.replace("-", "_")
        out += ["", "[[packages]]", f'name = "{name}"', f'version = "{version}"', "wheels = [",
                f'  {{ url = "https://files.example/{stem}-{version}-py3-none-macosx_11_0_arm64.whl", '
                f'upload-time = 2024-01-01T00:00:00Z, hashes = {{ sha256 = "{H3}" }} }},',
                f'  {{ url = "https://files.example/{stem}-{version}-py3-none-any.whl", '
                f'upload-time = 2024-02-01T00:00:00Z, hashes = {{ sha256 = "{digest}" }} }},', "]"]
    return "\n".join(out) + "\n"


def test_lock_command_writes_beside_a_file_profile(profile_dir: Path, tmp_path: Path) -> None:
    """The whole command with uv replaced by a fake that writes a pylock.toml (no network, no engine)."""
    calls: list[list[str]] = []

    def fake_uv(command: list[str], env: object) -> subprocess.CompletedProcess[str]:
        calls.append(command)
        pins = Path(command[3]).read_text().split()
        if pins[0].startswith("uv=="):
            packages = [("uv", pins[0].split("==")[1], H1)]
        else:
            packages = [("rich", "13.7.1", H1), ("Pygments", "2.17.2", H2)] if "rich==13.7.1" in pins else []
        Path(command[command.index("--output-file") + 1]).write_text(_pylock(packages))
        return subprocess.CompletedProcess(command, 0, "", "")

    wheels = tmp_path / "wheels"
    wheels.mkdir()
    outcome = lock(str(profile_dir / "locked.yaml"), wheelhouse=wheels, env={"HOME": str(tmp_path)},
                   uv_runner=fake_uv, engine=False)
    assert outcome.path == profile_dir / "locked.lock.txt" and (outcome.environment, outcome.extras) == (0, 2)
    assert len(calls) == 2  # no framework pins: the extras set, then uv's own wheel
    assert str(wheels) in calls[0] and "--generate-hashes" in calls[0]
    assert calls[0][calls[0].index("--python-platform") + 1] == "x86_64-manylinux_2_36"
    assert calls[0][calls[0].index("--python-version") + 1] == "3.11"
    written = parse_lock(outcome.path.read_text())
    assert [e.pin for e in written.extras] == ["pygments==2.17.2", "rich==13.7.1"]
    assert written.extras[0].sha256 == (H2,)  # the py3-none-any wheel, not the macOS one
    assert ("find-links", str(wheels)) in written.fields
    assert written.uv is not None and written.uv_wheel and written.uv_wheel.endswith("-py3-none-any.whl")
    assert written.field("target") == "cp311-manylinux_2_36_x86_64"
    assert written.source_date_epoch == "1706745600"  # the newest chosen wheel's upload time


def rich_uv(pins_seen: list[list[str]]) -> Callable[[list[str], object], subprocess.CompletedProcess[str]]:
    """uv replaced (no network): every set resolves to rich 13.7.1 and Pygments 2.17.2, uv's own set to uv;
    ``pins_seen`` gets each set's input pins."""
    def fake_uv(command: list[str], env: object) -> subprocess.CompletedProcess[str]:
        pins = Path(command[3]).read_text().split()
        pins_seen.append(pins)
        packages = ([("uv", pins[0].split("==")[1], H1)] if pins[0].startswith("uv==")
                    else [("rich", "13.7.1", H1), ("Pygments", "2.17.2", H2)])
        Path(command[command.index("--output-file") + 1]).write_text(_pylock(packages))
        return subprocess.CompletedProcess(command, 0, "", "")
    return fake_uv


@pytest.mark.parametrize(("typed", "printed"), [
    ("sub/locked.yaml", "sub/locked.yaml"),  # a relative path: as typed
    ("{work}/sub/locked.yaml", "sub/locked.yaml"),  # an absolute path below the directory: relative to it
    ("{other}/locked.yaml", "{other}/locked.yaml"),  # an absolute path elsewhere: absolute
    ("locked", "locked"),  # found by name on ENVGEN_PROFILE_PATH: the name
])
def test_lock_header_command_runs_as_printed_from_where_it_ran(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                typed: str, printed: str) -> None:
    """Issue 32 item 1: the header's `command:` names the profile so that it runs from the directory the lock ran
    in, not only from the profile's own directory (was `envgen lock locked.yaml` for `envgen lock sub/locked.yaml`:
    `profile file 'locked.yaml' does not exist`). The printed argument is given to `lock` again from there."""
    work, other = tmp_path / "work", tmp_path / "other"
    for directory in (work / "sub", other):
        directory.mkdir(parents=True)
        (directory / "locked.yaml").write_text(PROFILE, encoding="utf-8")
    monkeypatch.chdir(work)
    env = {"HOME": str(tmp_path), "ENVGEN_PROFILE_PATH": str(other)}
    first = lock(typed.format(work=work, other=other), env=env, uv_runner=rich_uv([]), engine=False)
    argv = shlex.split(parse_lock(first.path.read_text()).field("command") or "")
    assert argv == ["envgen", "lock", printed.format(other=other)]
    written = first.path.read_text()
    first.path.unlink()
    again = lock(argv[2], env=env, uv_runner=rich_uv([]), engine=False)  # as printed, from the same directory
    assert again.path == first.path and again.path.read_text() == written


def test_lock_resolves_no_line_the_base_holds(tmp_path: Path, kb: KnowledgeBase) -> None:
    """Issue 32 item 4: a packages.pip line the base satisfies (base_provides.packages) is not resolved, so the lock
    neither downloads nor pins it; the lock is current for the profile afterwards."""
    pins_seen: list[list[str]] = []
    fake_uv = rich_uv(pins_seen)
    (tmp_path / "held.yaml").write_text(PROFILE.replace("name: locked", "name: held").replace(
        "packages:\n  pip: [rich==13.7.1]",
        "base_provides: {packages: {six: \"1.16.0\"}}\npackages:\n  pip: [six==1.16.0, rich==13.7.1]"))
    outcome = lock(str(tmp_path / "held.yaml"), env={"HOME": str(tmp_path)}, uv_runner=fake_uv, engine=False)
    assert pins_seen[0] == ["rich==13.7.1"] and not any("six==1.16.0" in pins for pins in pins_seen)
    written = parse_lock(outcome.path.read_text())
    assert [e.pin for e in written.extras] == ["pygments==2.17.2", "rich==13.7.1"]
    profile = load_profile(str(tmp_path / "held.yaml"))
    assert "lock-stale" not in {f.code for f in check_profile(profile, kb)}
    assert "six" not in render_in_memory(plan_image(profile, kb)).files["requirements.extra.txt"].decode()


def test_lock_refuses_conda_profiles() -> None:
    with pytest.raises(InputError, match="envgen lock supports pip profiles; conda profiles") as caught:
        lock("legacy-maxwell", env={})
    assert "cannot be reached" in caught.value.one_line()


# --- rendering with a lock --------------------------------------------------------------------


def test_render_with_a_lock_installs_hashed_sets_without_resolving(profile_dir: Path, kb: KnowledgeBase) -> None:
    profile = load_profile(str(profile_dir / "locked.yaml"))
    unlocked = render_in_memory(plan_image(profile, kb))
    (profile_dir / "locked.lock.txt").write_text(LOCK, encoding="utf-8")
    locked = render_in_memory(plan_image(profile, kb))
    assert locked.content_hash != unlocked.content_hash
    extra = locked.files["requirements.extra.txt"].decode()
    assert f"pygments==2.17.2 --hash=sha256:{H2} --hash=sha256:{H3}" in extra
    assert f"rich==13.7.1 --hash=sha256:{H1}" in extra
    dockerfile = locked.files["Dockerfile"].decode()
    assert "--require-hashes --no-deps --prefix /opt/extras -r requirements.extra.txt" in dockerfile
    assert "requirements.lock pins nothing" in dockerfile  # no framework: empty environment set
    assert "--require-hashes" in locked.files["Dockerfile.classic"].decode()
    assert "--require-hashes" not in unlocked.files["Dockerfile"].decode()
    doc = json.loads(locked.files["envgen/render.json"])
    assert doc["lock"]["file"] == "locked.lock.txt" and "rich==13.7.1" in doc["lock"]["extras"]
    assert "lock" not in json.loads(unlocked.files["envgen/render.json"])
    # use_lock=False (what `envgen lock` itself renders with) ignores it
    assert render_in_memory(plan_image(profile, kb), use_lock=False).files == unlocked.files


def test_render_with_a_locked_environment_set(profile_dir: Path, kb: KnowledgeBase) -> None:
    body = PROFILE.replace("gpu: {required: false}", "gpu: {required: false}\nframeworks: {pytorch: \"2.13.0+cpu\"}")
    (profile_dir / "locked.yaml").write_text(body, encoding="utf-8")
    profile = load_profile(str(profile_dir / "locked.yaml"))
    framework = render_in_memory(plan_image(profile, kb), use_lock=False).plan.pins.pip
    text = LOCK.replace("# framework-pins: -", f"# framework-pins: {' '.join(framework)}").replace(
        "# [extras]", f"torch==2.13.0+cpu --hash=sha256:{H1}\nfilelock==3.13.1 --hash=sha256:{H2}\n# [extras]")
    (profile_dir / "locked.lock.txt").write_text(text, encoding="utf-8")
    ctx = render_in_memory(plan_image(profile, kb))
    requirements = ctx.files["requirements.lock"].decode()
    assert f"torch==2.13.0+cpu --hash=sha256:{H1}" in requirements and "filelock==3.13.1" in requirements
    assert "rich" not in requirements and "locked" not in requirements  # no profile name: layer cache
    assert "--require-hashes --no-deps -r requirements.lock" in ctx.files["Dockerfile"].decode()


def test_stale_lock_is_an_error_naming_the_field(profile_dir: Path, kb: KnowledgeBase, tmp_path: Path) -> None:
    (profile_dir / "locked.lock.txt").write_text(LOCK.replace("rich==13.7.1\n", "rich==13.7.0\n", 1)
                                                 .replace("# extra-pins: rich==13.7.1", "# extra-pins: rich==13.7.0"))
    profile = load_profile(str(profile_dir / "locked.yaml"))
    with pytest.raises(InputError, match="packages.pip = rich==13.7.0; the profile now pins rich==13.7.1") as caught:
        render(plan_image(profile, kb), tmp_path / "out")
    # the fix names the profile as it was given (a path: `envgen lock locked` would find no profile named so)
    assert f"envgen lock {profile_dir / 'locked.yaml'}" in caught.value.one_line()
    assert not (tmp_path / "out").exists()


def test_profile_without_source_or_lock_renders_as_before(kb: KnowledgeBase) -> None:
    profile = load_profile("ngc-tensorflow", env={})  # a pip profile without a lock (its registry is unreachable)
    in_code = Profile.model_validate(profile.model_dump())  # made in code: no file, no lock lookup
    assert render_in_memory(plan_image(in_code, kb)).files == render_in_memory(plan_image(profile, kb)).files


def test_a_locked_profile_made_in_code_renders_unlocked(kb: KnowledgeBase) -> None:
    profile = load_profile("cpu-minimal", env={})
    in_code = Profile.model_validate(profile.model_dump())
    locked, unlocked = render_in_memory(plan_image(profile, kb)).files, render_in_memory(plan_image(in_code, kb)).files
    assert "envgen/fetch-uv.py" in locked and "envgen/fetch-uv.py" not in unlocked
    assert b"uv.sh pip install" in locked["Dockerfile"] and b"uv.sh pip install" not in locked["Dockerfile.classic"]


def test_platform_tags_stop_at_the_base_images_glibc() -> None:
    from envgen.lock.wheels import manylinux_platforms

    kb = load_kb()
    assert kb.glibc("debian:bookworm-slim") == "2.36" and kb.glibc("ubuntu:18.04") == "2.27"
    assert kb.glibc("nvidia/cuda:12.1.1-cudnn8-runtime-ubuntu22.04") == "2.35"
    assert kb.glibc("example/unknown:1") is None
    debian12 = manylinux_platforms("2.36")
    assert debian12[0] == "manylinux_2_36_x86_64" and "manylinux_2_37_x86_64" not in debian12
    assert debian12[-4:] == ("manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64", "linux_x86_64")
    assert manylinux_platforms(None)[0] == "manylinux_2_39_x86_64"
