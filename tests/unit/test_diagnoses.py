"""Every diagnosis is recognised from a message in tests/fixtures/errors/, by the probe's matcher and by the host-side
one alike. Most messages are recorded: pasted by users into public issues (the URL in each file's header) or printed
by real runs here. Five are not: examples of the probe's own failure messages written here from its format strings
(``# source: written here``, ``# made-from:``; the README lists them); a test below holds them to those strings."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_probe_helpers import probe_module

from envgen.smoke.report import diagnose_text, load_diagnoses

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "errors"


def read_fixture(path: Path) -> tuple[dict[str, str], str]:
    header: dict[str, str] = {}
    body: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# ") and ": " in line and not body:
            key, value = line[2:].split(": ", 1)
            header[key] = value
        else:
            body.append(line)
    return header, "\n".join(body)


FIXTURE_FILES = sorted(FIXTURES.glob("*.txt"))


def test_fixtures_exist() -> None:
    assert len(FIXTURE_FILES) >= 20


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=[p.stem for p in FIXTURE_FILES])
def test_fixture_is_diagnosed_as_recorded(path: Path) -> None:
    header, body = read_fixture(path)
    assert header.get("source"), f"{path.name}: no '# source:' line"
    assert path.name.startswith(header["diagnosis"] + "--")
    probe = probe_module("core.common")
    found = probe.diagnose(body, probe.load_diagnoses())
    assert found is not None and found["id"] == header["diagnosis"], found
    host = diagnose_text(body)
    assert host is not None and host.id == header["diagnosis"]
    assert found["matched"] and host.cause and host.fix


WRITTEN_HERE = [path for path in FIXTURE_FILES if read_fixture(path)[0]["source"].startswith("written here")]


@pytest.mark.parametrize("path", WRITTEN_HERE, ids=[p.stem for p in WRITTEN_HERE])
def test_a_message_written_here_is_an_instance_of_the_probes_format_string(path: Path) -> None:
    """A hand-made example says which probe file and format string it was filled in from; that file still has
    the string, and the example is one of its instances."""
    header, body = read_fixture(path)
    source = Path(__file__).resolve().parents[2] / header["made-from"]
    assert f'"{header["format"]}"' in source.read_text(encoding="utf-8"), (path.name, header["made-from"])
    assert re.fullmatch(_format_pattern(header["format"]), body.strip()), (path.name, body)


def test_the_messages_written_here_are_the_five_listed_in_the_readme() -> None:
    readme = (FIXTURES / "README.md").read_text(encoding="utf-8")
    assert sorted(p.stem for p in WRITTEN_HERE) == sorted(re.findall(r"`([a-z-]+--\d+)`", readme))


def _format_pattern(form: str) -> str:
    """A %-format string as a regular expression: each conversion matches any text."""
    parts = re.split(r"(%%|%[-+ #0]*\d*(?:\.\d+)?[sdifgeEr])", form)
    return "".join(".+" if part.startswith("%") and part != "%%" else re.escape("%" if part == "%%" else part)
                   for part in parts)


def test_every_diagnosis_has_a_fixture_and_real_errors_have_a_url() -> None:
    by_id: dict[str, list[dict[str, str]]] = {}
    for path in FIXTURE_FILES:
        header, _body = read_fixture(path)
        by_id.setdefault(header["diagnosis"], []).append(header)
    for entry in load_diagnoses():
        headers = by_id.get(entry["id"])
        assert headers, f"diagnosis {entry['id']} has no recorded message"
        if entry["kind"] == "error":
            assert any(h["source"].startswith("https://github.com/") for h in headers), entry["id"]


def test_table_is_well_formed() -> None:
    entries = load_diagnoses()
    ids = [entry["id"] for entry in entries]
    assert len(ids) == len(set(ids))
    for entry in entries:
        assert entry["kind"] in ("error", "probe")
        assert entry["patterns"] and entry["cause"].strip() and entry["fix"].strip()
        for pattern in entry["patterns"]:
            re.compile(pattern)


def test_required_failures_are_covered() -> None:
    ids = {entry["id"] for entry in load_diagnoses()}
    required = {"no-kernel-image", "driver-insufficient", "cuda-library-missing", "cudnn-handle",
                "conv-algorithm", "cudnn-version-mismatch", "out-of-memory", "no-gpu-in-container",
                "nvidia-runtime-missing"}
    assert required <= ids


def test_unrelated_text_gets_no_diagnosis() -> None:
    assert diagnose_text("ValueError: shapes (2,3) and (4,5) not aligned") is None
    assert probe_module("core.common").diagnose("", []) is None
