"""docs/ARCHITECTURE.md stays true (issue #41: the old one named a runner in smoke/ that lived in pipeline/, ranks
the layer test did not hold, folders that had moved): every file or folder it names in backticks exists, every
``path: name`` it gives is defined in that file, and its rank table is test_layers' RANKS. docs/EXTENDING.md's
existing files are held the same way (the files a new installer or family adds are named with <placeholders> or
listed in NEW below)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.unit.test_layers import RANKS

ROOT = Path(__file__).resolve().parents[2]
# where a path the doc names may be relative to: the repository, the package, the probe's folder
BASES = (ROOT, ROOT / "envgen", ROOT / "envgen" / "smoke" / "probe")
_TICKED = re.compile(r"`([^`\n]+)`")
_PATH = re.compile(r"^[A-Za-z_][\w.-]*(/[\w.*-]+)*/?$")
_FILE_EXT = (".py", ".yaml", ".yml", ".json", ".j2", ".sh", ".md", ".toml", ".txt")
# the files docs/EXTENDING.md names as the ones a new installer (pixi) or base family (dnf) would add
NEW = {"envgen/plan/installers/pixi.py", "templates/context/pixi.toml.j2", "templates/sh/pixi-env.sh",
       "envgen/lock/lock_pixi.py", "templates/sh/dnf-install.sh"}


def _named(text: str) -> list[tuple[str, str | None]]:
    """(path, name or None) for each backticked file or folder: ``plan/image.py``, ``cli/__init__.py: main``."""
    out: list[tuple[str, str | None]] = []
    for token in _TICKED.findall(text):
        path, _, rest = token.partition(": ")
        path = path.strip()
        if "<" in path or path.startswith(("/", "-", "$")) or not _PATH.match(path):
            continue
        if not (path.endswith("/") or path.endswith(_FILE_EXT)) or "*" in path:
            continue  # a word, a dotted name, a command: not a path
        name = re.match(r"[A-Za-z_]\w*", rest.strip()) if rest else None
        out.append((path, name.group(0) if name else None))
    return out


def _find(path: str) -> Path | None:
    return next((base / path for base in BASES if (base / path).exists()), None)


@pytest.mark.parametrize("doc", ["ARCHITECTURE.md", "EXTENDING.md"])
def test_every_path_the_doc_names_exists(doc: str) -> None:
    named = _named((ROOT / "docs" / doc).read_text(encoding="utf-8"))
    assert len(named) > 20, f"the doc names {len(named)} paths: is the pattern still reading it?"
    missing = [path for path, _ in named if _find(path) is None and path not in NEW]
    assert not missing, f"docs/{doc} names paths that do not exist: {missing}"
    undefined = []
    for path, name in named:
        found = _find(path)
        if name is None or found is None or found.is_dir():
            continue
        if not re.search(rf"^\s*(def|class|async def) {name}\b|^{name}\s*[:=]", found.read_text(encoding="utf-8"),
                         re.M):
            undefined.append(f"{path}: {name}")
    assert not undefined, f"docs/{doc} names what these files do not define: {undefined}"


def test_the_rank_table_is_the_layer_tests() -> None:
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    table: dict[str, int] = {}
    for rank, cells in re.findall(r"^\| (-?\d+) \| (.+?) \|$", text, re.M):
        for layer in re.findall(r"`([\w_]+)`", cells):
            table[layer] = int(rank)
    assert table == RANKS, f"docs/ARCHITECTURE.md's ranks differ from tests/unit/test_layers.py's: " \
                           f"{sorted(set(table.items()) ^ set(RANKS.items()))}"


def test_the_pattern_reads_paths_and_names() -> None:
    assert _named("`plan/image.py: plan_image(profile, kb)` and `/opt/env`, `check/<group>/`, `envgen lock`, "
                  "`kb/data/`") == [("plan/image.py", "plan_image"), ("kb/data/", None)]
