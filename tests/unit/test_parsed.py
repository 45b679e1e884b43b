"""YAML files parsed once per content (envgen.parsed): the same data as PyYAML's safe loader, from the cache without
importing PyYAML, another entry for another text, and nothing kept for what fails to parse."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from envgen.parsed import parse_yaml, yaml_error
from envgen.paths import render_data_dir

TEXTS = ["state_dir: /tmp/x\nnamespace: alice/envgen\n", "mirrors:\n  pip_index_url: https://p.example/simple\n",
         (render_data_dir() / "tools.yaml").read_text(encoding="utf-8"), "", "- 1\n- on\n- 2024-01-02\n"]


@pytest.mark.parametrize("c_loader", [False, True])
def test_the_data_is_the_safe_loaders(tmp_path: Path, c_loader: bool) -> None:
    for text in TEXTS:
        expected = yaml.safe_load(text)
        assert parse_yaml(text, tmp_path, c_loader=c_loader) == expected  # parsed, kept
        assert parse_yaml(text, tmp_path, c_loader=c_loader) == expected  # from the cache
        assert parse_yaml(text, None, c_loader=c_loader) == expected  # no cache
    assert len(list(tmp_path.glob("yaml-*.pickle"))) == len(TEXTS)


def test_a_kept_parse_imports_no_yaml(tmp_path: Path) -> None:
    code = ("import sys\nfrom envgen.parsed import parse_yaml\n"
            "print(parse_yaml('a: [1, 2]\\n', __import__('pathlib').Path(sys.argv[1])), 'yaml' in sys.modules)")
    runs = [subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, check=True)
            for _ in range(2)]
    assert [r.stdout.strip() for r in runs] == ["{'a': [1, 2]} True", "{'a': [1, 2]} False"]


def test_what_fails_to_parse_is_never_kept(tmp_path: Path) -> None:
    for _ in range(2):
        with pytest.raises(yaml_error()):
            parse_yaml("a: [1, 2\n", tmp_path)
    assert not list(tmp_path.glob("yaml-*.pickle"))
