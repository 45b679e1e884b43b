"""Every python_packages.yaml row rests on a witness (issue 29): its trials (real installs in throwaway venvs, reads
of files inside the wheels, resolutions) were carried out by ``python -m tools.kbrefresh.witness``, and what they
showed is recorded in ``tools/kbrefresh/upstream/witnesses.yaml``. These tests replay the record against the
rows: each result is the one the row's boundaries predict, each breaking run shows the row's error, and each
boundary was tried on both sides (PyPI lists no release between the last that breaks and the first that works).
The slow test re-runs one cheap witness (pandas with NumPy 2) for real."""

from __future__ import annotations

from typing import Any

import pytest

from envgen.kb import KnowledgeBase
from envgen.kb.pypackages import PackageBreak
from tools.kbrefresh import witness
from tools.kbrefresh.witness_match import agrees, boundaries


@pytest.fixture(scope="module")
def records() -> dict[str, Any]:
    return witness.load()


def _trials(row: PackageBreak, records: dict[str, Any]) -> list[dict[str, Any]]:
    recorded: list[dict[str, Any]] = records.get(row.id, {}).get("trials", [])
    return recorded


def test_every_row_has_a_recorded_witness(kb: KnowledgeBase, records: dict[str, Any]) -> None:
    missing = [row.id for row in kb.package_breaks if not row.witness or row.id not in records]
    assert not missing, f"rows without a witness, or never run: {missing}"
    assert set(records) <= {row.id for row in kb.package_breaks}, "records of rows that are gone"


def test_each_trial_is_recorded_with_the_result_it_states(kb: KnowledgeBase, records: dict[str, Any]) -> None:
    wrong = []
    for row in kb.package_breaks:
        recorded = _trials(row, records)
        if [t["trial"] for t in recorded] != [t.key for t in row.witness]:
            wrong.append(f"{row.id}: the recorded trials are not the row's (run the refresh tool)")
            continue
        wrong += [f"{row.id}: {t.key}: states {t.result}, showed {r['result']} ({r['seen']})"
                  for t, r in zip(row.witness, recorded, strict=True) if t.result != r["result"]]
    assert not wrong, "\n".join(wrong)


def test_recorded_results_agree_with_the_rows_boundaries(kb: KnowledgeBase, records: dict[str, Any]) -> None:
    wrong = [f"{row.id} ({row.kind}, {row.package.versions} with {row.other.versions if row.other else '-'}): "
             f"{r['trial']} showed {r['result']}"
             for row in kb.package_breaks
             for t, r in zip(row.witness, _trials(row, records), strict=False) if not agrees(row, t, r["result"])]
    assert not wrong, "\n".join(wrong)


def test_breaking_runs_show_the_rows_error(kb: KnowledgeBase, records: dict[str, Any]) -> None:
    wrong = [f"{row.id}: {r['trial']}: {witness.expected(row, t)!r} not in {r['seen']!r}"
             for row in kb.package_breaks
             for t, r in zip(row.witness, _trials(row, records), strict=False)
             if r["result"] == "breaks" and t.run and witness.expected(row, t) not in r["seen"]]
    assert not wrong, "\n".join(wrong)


def test_every_record_says_how_it_was_seen(records: dict[str, Any]) -> None:
    for rid, entry in records.items():
        for r in entry["trials"]:
            assert r["date"] and r["command"] and r["seen"], (rid, r)
            assert r.get("python") or (r.get("wheel") and len(r.get("sha256", "")) == 64), (rid, r)
            if "installed" in r:
                assert all("==" in pin for pin in r["installed"]), (rid, r)


def test_both_sides_of_each_boundary_were_tried(kb: KnowledgeBase, records: dict[str, Any]) -> None:
    """Every row's package side has a boundary whose two releases are PyPI neighbours (nothing between them); a
    same-series row (tf-keras beside TensorFlow) has no boundary, its trials pair the series."""
    wrong = []
    for row in kb.package_breaks:
        recorded = records.get(row.id, {})
        found = boundaries(row, [(t, r["result"]) for t, r in zip(row.witness, recorded.get("trials", []),
                                                                 strict=False)])
        stored = [(b["name"], b["inside"], b["outside"]) for b in recorded.get("boundaries", [])]
        if stored != [tuple(b) for b in found]:
            wrong.append(f"{row.id}: boundaries recorded {stored}, the trials give {found}")
        wrong += [f"{row.id}: {b['name']} {b['inside']} | {b['outside']}: releases between: {b['between']}"
                  for b in recorded.get("boundaries", []) if b["between"]]
        if not row.same_series and not any(b.name in row.package.names for b in found):
            wrong.append(f"{row.id}: no boundary of {row.package.names[0]} tried on both sides")
    assert not wrong, "\n".join(wrong)


@pytest.mark.slow
def test_the_pandas_witness_reproduces(capsys: pytest.CaptureFixture[str]) -> None:
    """Real venvs from PyPI (about a minute): pandas 2.1.1 breaks with NumPy 2.0.0 at import, 2.1.2 is refused."""
    assert witness.main(["--row", "pandas-numpy2", "--check"]) == 0, capsys.readouterr().out
    assert "every result as recorded" in capsys.readouterr().out
