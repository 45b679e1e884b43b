"""Profile safety, proven by generation (issue #12).

Hypothesis takes a clean profile that sets every field and changes one value (or a few) to something
hostile: shell and Dockerfile metacharacters, newlines, NUL, Unicode direction marks and invisible
characters, template syntax, very long values, wrong types, YAML tags. `envgen render` must then either
refuse it (exit 1 or 2, at most a few lines, no traceback, nothing written), or render a Dockerfile
whose instructions are exactly those of the clean profile: a value may change an argument, never add,
remove or reorder an instruction.

Examples: ENVGEN_FUZZ_EXAMPLES (default 500; about 30 s on a busy 2-core machine). Derandomised, so a CI
run is repeatable; set ENVGEN_FUZZ_SEED=random for a fresh search locally, ENVGEN_FUZZ_SHRINK=1 to
shrink a failure to its smallest form (slow).
"""

from __future__ import annotations

import copy
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, Phase, event, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from envgen.cli import app

EXAMPLES = int(os.environ.get("ENVGEN_FUZZ_EXAMPLES", "500"))
RANDOM = os.environ.get("ENVGEN_FUZZ_SEED") == "random"
# Shrinking a failure to its smallest form can take minutes; CI reports the failing example as found.
PHASES = list(Phase) if os.environ.get("ENVGEN_FUZZ_SHRINK") else [Phase.explicit, Phase.generate]

# Sets every field of the model (pip installer, so conda fields are the ones mutated in from absent).
CLEAN: dict[str, Any] = {
    "name": "fuzz",
    "description": "fuzz test profile",
    "base": "debian:bookworm-slim",
    "local_base": True,
    "installer": "pip",
    "python": "3.11",
    "gpu": {"required": False, "targets": ["A100"]},
    "packages": {"apt": ["curl"], "pip": ["six==1.16.0"]},
    "env": {"FUZZ_MODE": "on"},
    "smoke": {"matmul_size": 128, "batch_size": 8, "train_steps": 2, "timeout_s": 60},
    "mirrors": {"pip_index_url": "https://pypi.mirror.example/simple",
                "pip_extra_index_urls": ["https://extra.mirror.example/simple"],
                "pip_trusted_hosts": ["pypi.mirror.example"],
                "apt_mirror": "http://apt.mirror.example/debian",
                "http_proxy": "http://proxy.example:3128", "https_proxy": "http://proxy.example:3128",
                "no_proxy": "localhost,127.0.0.1"},
    "user": {"name": "envgen", "uid": 1000},
}
# Fields the clean profile leaves out; a hostile value is put there.
ABSENT = [("cuda",), ("cudnn",), ("extends",), ("channels",), ("frameworks", "tensorflow"),
          ("frameworks", "tensorflow_package"), ("frameworks", "pytorch"), ("frameworks", "torchvision"),
          ("frameworks", "torchaudio"), ("packages", "conda"), ("mirrors", "conda_channel_alias"),
          ("mirrors", "conda_channels"), ("mirrors", "wheelhouse")]

FRAGMENTS = ["\n", "\r\n", "\r", "\x00", "\t", " ", "$(id)", "`id`", "${HOME}", "$HOME", ";", "&&", "||", "|",
             "'", '"', "\\", "\\\n", "\nRUN touch /pwned", "\n# x\nRUN id", "\nFROM scratch", "#", " # ",
             "{{ 7*7 }}", "{% if true %}", "{#", "@@CONTENT_HASH@@", "\u202e", "\u2066", "\u2069", "\u200b",
             "\ufeff", "\u2028", "\u0085", "é", "𝔘", "<<EOF", "\\x00", "%s", "--", "-e", "../", "/etc/passwd",
             "*", "?", "[", "]", "{", "}", ",", ":", "=", "==", "@", "+", "~"]

YAML_TAGS = ["!!python/object/apply:os.system ['id']", "!!python/name:os.system", "!!binary aGVsbG8=",
             "!custom value", "!!timestamp 2001-12-14", "!!set {a: null}", "!!omap [a: 1]", "!!float 1e3",
             "!!int 7", "!!str fuzz", "!!null ''", "!<tag:example.com,2000:x> y"]

RAW = "FUZZRAWPLACEHOLDER"


def leaves(data: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(data, dict):
        out = [path] if path else []
        for key, value in data.items():
            out += leaves(value, path + (key,))
        return out
    if isinstance(data, list):
        out = [path]
        for index, value in enumerate(data):
            out += leaves(value, path + (index,))
        return out
    return [path]


PATHS = leaves(CLEAN) + ABSENT
# Fields that take free text (or nearly): drawn more often, so many hostile values are accepted and the
# instruction check has work to do.
FREE_TEXT = [("description",), ("mirrors", "wheelhouse"), ("env", "FUZZ_MODE"), ("mirrors", "no_proxy"),
             ("gpu", "targets", 0)]
ENV_KEY_PATH = ("env", "<key>")


def get(data: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        in_dict = isinstance(data, dict) and part in data
        if in_dict or (isinstance(data, list) and isinstance(part, int) and part < len(data)):
            data = data[part]
        else:
            return None
    return data


def put(data: dict[str, Any], path: tuple[Any, ...], value: Any) -> bool:
    """Set ``path`` to ``value``; False when an earlier change replaced a container on the way."""
    node: Any = data
    for part in path[:-1]:
        if isinstance(node, dict):
            node = node.setdefault(part, {})
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            return False
    if isinstance(node, dict) or (isinstance(node, list) and isinstance(path[-1], int) and path[-1] < len(node)):
        node[path[-1]] = value
        return True
    return False


hostile_text = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=6)),
                        min_size=1, max_size=6).map("".join)
SHELLISH = ["$(id)", "`id`", "${HOME}", "'", '"', "\\", "\\n", ";", "&&", "|", "#", "{{ 7*7 }}", "{%", "%",
            "=", "@", ":", ",", "/", "+", "-", "_", ".", " ", "RUN", "FROM", "é", "ü", "Ω", "中"]
printable_text = st.lists(st.one_of(st.sampled_from(SHELLISH),
                                    st.text(st.characters(codec="utf-8", categories=["L", "N", "P", "S"]),
                                            max_size=6)),
                          min_size=1, max_size=6).map("".join)
wrong_types = st.one_of(st.integers(min_value=-(10**30), max_value=10**30), st.floats(allow_nan=True),
                        st.booleans(), st.none(), st.lists(st.integers(), max_size=3),
                        st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
                        st.lists(hostile_text, max_size=2))


@st.composite
def hostile_value(draw: st.DrawFn, clean: Any) -> tuple[str, Any]:
    """(kind, value); kind "tag" means: a raw YAML snippet put in place of the value."""
    kind = draw(st.sampled_from(["inject", "inject", "printable", "printable", "text", "long", "type", "tag"]))
    base = clean if isinstance(clean, str) else str(clean) if clean is not None else "x"
    if kind == "printable":  # printable, one line, full of metacharacters: often accepted where text is free
        cut = draw(st.integers(min_value=0, max_value=len(base)))
        return kind, base[:cut] + draw(printable_text) + base[cut:]
    if kind == "inject":  # the clean value with something hostile before, inside or after it
        cut = draw(st.integers(min_value=0, max_value=len(base)))
        return kind, base[:cut] + draw(hostile_text) + base[cut:]
    if kind == "text":
        return kind, draw(hostile_text)
    if kind == "long":
        return kind, base + draw(st.sampled_from(["x", "1", " ", "\u202e", "é"])) * draw(
            st.sampled_from([200, 5_000, 100_000]))
    if kind == "type":
        return kind, draw(wrong_types)
    return kind, draw(st.sampled_from(YAML_TAGS))


@st.composite
def hostile_profile(draw: st.DrawFn) -> tuple[str, list[str]]:
    """YAML text and a description of what was changed."""
    doc = copy.deepcopy(CLEAN)
    raws: list[str] = []
    changes: list[str] = []
    for _ in range(draw(st.sampled_from([1, 1, 1, 2, 3]))):
        path = draw(st.one_of(st.just(("description",)), st.sampled_from(FREE_TEXT),
                              st.sampled_from(PATHS + [ENV_KEY_PATH])))
        if path == ENV_KEY_PATH:  # a hostile environment variable name
            _, key = draw(hostile_value("FUZZ_MODE"))
            if not isinstance(doc.get("env"), dict):
                continue
            doc["env"] = {str(key): "on"}
            changes.append(f"env key {key!r}")
            continue
        kind, value = draw(hostile_value(get(doc, path)))
        if kind == "tag":
            raws.append(value)
            value = f"{RAW}{len(raws) - 1}"
        if not put(doc, path, value):
            continue
        changes.append(f"{'.'.join(map(str, path))} ({kind}) = {value!r:.120}")
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=10**9)
    for index, raw in enumerate(raws):
        text = text.replace(f"'{RAW}{index}'", raw).replace(f"{RAW}{index}", raw)
    return text, changes


def instructions(dockerfile: str) -> list[str]:
    """The instruction keywords in order (continuation lines joined, comments and blank lines dropped)."""
    out: list[str] = []
    continued = False
    for line in dockerfile.split("\n"):
        stripped = line.strip()
        if not continued and (not stripped or stripped.startswith("#")):
            continue
        if not continued:
            out.append(stripped.split(None, 1)[0].upper())
        continued = line.endswith("\\")
    return out


def render(runner: CliRunner, text: str, work: Path) -> tuple[Any, Path]:
    profile = work / "fuzz.yaml"
    profile.write_text(text, encoding="utf-8")
    out = work / "out"
    return runner.invoke(app, ["render", str(profile), "-o", str(out)], catch_exceptions=True), out


@pytest.fixture(scope="module", autouse=True)
def kb_loaded_once() -> Iterator[None]:
    """The knowledge base is parsed once for the module (about a second; the same for every example): each CLI
    call's session then reads it from envgen's KB cache (kb.cache), which this fills; everything else runs as the
    CLI runs it."""
    import os

    from envgen.cache import cache_dir
    from envgen.kb.cache import load_kb_keyed

    kb, _ = load_kb_keyed(cache_dir(os.environ))
    assert kb is not None
    yield


@pytest.fixture(scope="module")
def clean_instructions() -> dict[str, list[str]]:
    runner = CliRunner()
    with tempfile.TemporaryDirectory() as tmp:
        result, out = render(runner, yaml.safe_dump(CLEAN, sort_keys=False), Path(tmp))
        assert result.exit_code == 0, result.output
        return {name: instructions((out / name).read_text(encoding="utf-8"))
                for name in ("Dockerfile", "Dockerfile.classic")}


@settings(max_examples=EXAMPLES, deadline=None, derandomize=not RANDOM, database=None, phases=PHASES,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=hostile_profile())
def test_hostile_profiles_are_refused_or_change_only_arguments(case: tuple[str, list[str]],
                                                               clean_instructions: dict[str, list[str]]) -> None:
    text, changes = case
    runner = CliRunner()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        result, out = render(runner, text, work)
        what = "; ".join(changes)
        assert result.exception is None or isinstance(result.exception, SystemExit), (
            f"{what}: uncaught {type(result.exception).__name__}: {result.exception}")
        event("refused" if result.exit_code else "accepted")
        if result.exit_code != 0:
            assert result.exit_code in (1, 2), f"{what}: exit {result.exit_code}"
            stderr = result.stderr
            assert "Traceback" not in result.output and "Traceback" not in stderr, what
            assert 1 <= len(stderr.strip().splitlines()) <= 3, f"{what}: {stderr[:2000]!r}"
            assert stderr.strip().splitlines()[-1].startswith("error: "), f"{what}: {stderr[:500]!r}"
            assert len(stderr) < 4000, f"{what}: {len(stderr)} characters of error"
            assert sorted(p.name for p in work.iterdir()) == ["fuzz.yaml"], f"{what}: a failed render wrote files"
            return
        for name, expected in clean_instructions.items():
            rendered = (out / name).read_text(encoding="utf-8")
            assert instructions(rendered) == expected, f"{what}: {name} instructions changed"
            assert "\x00" not in rendered, f"{what}: NUL in {name}"
