"""Every KB row's `source` names where its facts were read (issue 29, part 6): a URL, a file of this repository
(a stored copy under tools/kbrefresh/upstream/, a fixture) with the line or key, or the wheel read (by its file
name, which PyPI never reuses); and it does not rest on an
unnamed copy ("stored copy" with no path, "secondhand", "third-party copy") or a page it says was not read. The
rows still short of that are listed, each with the reason, in tools/kbrefresh/upstream/sources-unnamed.yaml;
the test holds the list exact (no row missing from it, none listed that now names its source). PyTorch's arch
lists that cite the stored builder-script excerpts are checked against those excerpts."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from envgen.kb import KnowledgeBase
from envgen.kb.models import Row
from envgen.kb.tables import TABLES
from tools.kbrefresh.torch_arch import STORED, case_for, sections

ROOT = Path(__file__).resolve().parents[2]
UNNAMED = ROOT / "tools" / "kbrefresh" / "upstream" / "sources-unnamed.yaml"
_URL = re.compile(r"https?://[^\s;,)'\"]+")
# a wheel by its file name: PyPI never reuses one, so the name locates the very bytes read
_WHEEL = re.compile(r"[A-Za-z0-9_.]+-[0-9][\w.+]*-[\w.]+-[\w.]+-[\w.]+\.whl")
_FILE = re.compile(r"(?<![\w/.-])((?:envgen|tests|tools|profiles|docs)/[\w./-]+\.\w+)")
_UNNAMED = re.compile(r"stored copy(?! tools/)(?!: tools/)|secondhand|second-hand|third-party copy|not read|"
                      r"\bassumed\b", re.IGNORECASE)


def _rows(kb: KnowledgeBase) -> Iterator[tuple[str, str, Row]]:
    """(table, key, row) for every row, nested rows (a release's variants) keyed ``parent+child``."""
    for table, (_, attr) in TABLES.items():
        for row in getattr(kb, attr):
            yield table, row.key, row
            for name in type(row).model_fields:
                value = getattr(row, name)
                if isinstance(value, list):
                    yield from ((table, f"{row.key}+{c.key}", c) for c in value if isinstance(c, Row))


def why_unnamed(source: str) -> str:
    """Empty when ``source`` names where; else what is missing."""
    files = [f for f in _FILE.findall(source) if (ROOT / f).is_file()]
    if not _URL.search(source) and not files and not _WHEEL.search(source):
        return "no URL, stored file or wheel"
    found = _UNNAMED.search(source)
    return f"rests on {found.group(0)!r}" if found else ""


def _listed() -> dict[tuple[str, str], str]:
    data = yaml.safe_load(UNNAMED.read_text(encoding="utf-8"))
    return {(table, str(key)): reason for table, rows in data["tables"].items() for key, reason in rows.items()}


def test_every_source_names_where_or_is_listed(kb: KnowledgeBase) -> None:
    unnamed = {(t, k): why_unnamed(row.source) for t, k, row in _rows(kb) if why_unnamed(row.source)}
    listed = _listed()
    counts = Counter(t for t, _ in unnamed)
    assert set(unnamed) == set(listed), (
        f"per table: {dict(counts)}\nnot listed: {sorted(set(unnamed) - set(listed))}\n"
        f"listed but now named: {sorted(set(listed) - set(unnamed))}")
    assert all(len(reason) > 20 for reason in listed.values()), "each listed row says why"


def test_the_stored_files_sources_name_exist(kb: KnowledgeBase) -> None:
    missing = [(t, k, f) for t, k, row in _rows(kb) for f in re.findall(r"tools/kbrefresh/upstream/[\w./-]+",
                                                                          row.source)
               if not (ROOT / f.rstrip(".")).is_file()]
    assert not missing, missing


@pytest.mark.parametrize(("source", "named"), [
    ("https://pypi.org/project/pandas/2.1.2/ (Requires-Dist numpy<2)", True),
    ("tools/kbrefresh/upstream/witnesses.yaml#pandas-numpy2", True),
    ("pytorch/builder manywheel/build.sh (secondhand copy of the script, https://github.com/pytorch/builder)", False),
    ("https://docs.nvidia.com/x.html (stored copy for cuDNN 9.1.0)", False),
    ("builder TORCH_CUDA_ARCH_LIST, 1.5-era script not read", False),
])
def test_what_counts_as_naming_where(source: str, named: bool) -> None:
    assert (why_unnamed(source) == "") is named


def test_torch_arch_lists_agree_with_the_stored_builder_scripts(kb: KnowledgeBase) -> None:
    """Each variant citing pytorch-builder-arch-lists.txt:N has the arch list of the case its CUDA falls in."""
    stored = sections(STORED.read_text(encoding="utf-8"))
    by_line = {line: cases for line, cases in stored.values()}
    cited = 0
    for release in kb.pytorch:
        for variant in release.variants:
            found = re.search(r"pytorch-builder-arch-lists\.txt:(\d+) \(torch ([\w.-]+):", variant.source)
            if not found:
                continue
            cited += 1
            header = next(n for n, _ in sorted(stored.values(), key=lambda s: -s[0]) if n <= int(found.group(1)))
            case = case_for(by_line[header], variant.cuda or "")
            assert case is not None, (release.version, variant.tag)
            code = lambda a: int(a.split("_")[1])  # noqa: E731
            assert sorted(case["arch_list"], key=code) == variant.arch_list, (release.version, variant.tag)
            assert case["ptx"] == variant.ptx, (release.version, variant.tag)
    assert cited >= 40
