"""Run the witnesses of python_packages.yaml and record what they show.

    python -m tools.kbrefresh.witness [--row ID ...] [--python PATH] [--check]

Each row's ``witness:`` trials are carried out (``witness_run``: a fresh venv by uv with exact pins and the code
run, or a file read out of a wheel on PyPI), then, for each pair of neighbouring releases the trials put on either
side of a boundary, PyPI's releases between them are listed (none: the last that breaks and the first that works
were both tried). The records go to ``upstream/witnesses.yaml`` (``--row`` refreshes those rows only); ``--check``
runs them again and exits 1 when a result differs from the record, writing nothing.
``tests/unit/test_kb_witness.py`` replays the records against the rows.
"""

from __future__ import annotations

import argparse
import datetime
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from envgen.kb.pypackages import PackageBreak, Trial
from tools.kbrefresh.witness_match import boundaries, releases_between
from tools.kbrefresh.witness_run import carry_out, pypi

DATA = Path(__file__).resolve().parents[2] / "envgen" / "kb" / "data" / "python_packages.yaml"
RECORDS = Path(__file__).resolve().parent / "upstream" / "witnesses.yaml"
HEADER = ("# What the witnesses of envgen/kb/data/python_packages.yaml showed: written by\n"
          "#   python -m tools.kbrefresh.witness   (never by hand)\n"
          "# per row: each trial (its key as the row's witness states it), the date, the Python, the command, what\n"
          "# was installed (uv pip freeze), the text seen and the result; a wheel read names the file and its sha256\n"
          "# (as PyPI lists it). boundaries: neighbouring releases the trials put on either side of a boundary of\n"
          "# the row, and the releases PyPI lists between them (none: both sides of the boundary were tried).\n")


def rows(path: Path = DATA) -> list[PackageBreak]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [PackageBreak.model_validate(r) for r in data["python_packages"]]


def load(path: Path = RECORDS) -> dict[str, Any]:
    """The recorded witnesses by row id (empty when none are recorded yet)."""
    if not path.exists():
        return {}
    loaded: dict[str, Any] = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("witnesses") or {}
    return loaded


def expected(row: PackageBreak, trial: Trial) -> str:
    """The text a trial's output must hold when it breaks: its own ``expect``, else the row's error's start."""
    return (trial.expect or row.error.split(". ")[0].split(": ", 1)[-1][:50]).strip()


def _witness(row: PackageBreak, python: str, uv: str, done: dict[str, dict[str, Any]]) -> dict[str, Any]:
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    records = []
    for trial in row.witness:
        if trial.key not in done:
            sys.stderr.write(f"{row.id}: {trial.key}\n")
            with tempfile.TemporaryDirectory(prefix="envgen-witness-") as scratch:
                record = carry_out(trial, expected(row, trial), Path(scratch) / "t", python, uv)
                done[trial.key] = {"date": today, **record}
        records.append(done[trial.key])
    tried: list[tuple[Trial, str]] = [(t, r["result"]) for t, r in zip(row.witness, records, strict=True)]
    found = []
    for edge in boundaries(row, tried):
        between = releases_between(pypi(edge.name)["releases"], edge.inside, edge.outside)
        found.append({"name": edge.name, "inside": edge.inside, "outside": edge.outside, "between": between})
    return {"trials": records, "boundaries": found}


def _uv() -> str:
    here = Path(sys.executable).parent / "uv"
    return str(here) if here.exists() else "uv"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.kbrefresh.witness", description=__doc__.split("\n")[0])
    parser.add_argument("--row", action="append", default=[], help="a row id (repeatable); default: every row")
    parser.add_argument("--python", default=sys.executable, help="the interpreter the venvs are made from")
    parser.add_argument("--check", action="store_true", help="compare with the records; write nothing")
    args = parser.parse_args(argv)
    table = [r for r in rows() if r.witness and (not args.row or r.id in args.row)]
    unknown = set(args.row) - {r.id for r in table}
    if unknown:
        parser.error(f"no row with a witness: {', '.join(sorted(unknown))}")
    recorded, done = load(), dict[str, dict[str, Any]]()
    fresh = {row.id: _witness(row, args.python, _uv(), done) for row in table}
    if args.check:
        drift = [f"{rid}: {t['trial']}: recorded {old['result']}, now {t['result']} ({t['seen']})"
                 for rid, w in fresh.items()
                 for t, old in zip(w["trials"], recorded.get(rid, {}).get("trials", []), strict=False)
                 if t["result"] != old["result"] or t["trial"] != old["trial"]]
        drift += [f"{rid}: not recorded" for rid in fresh if rid not in recorded]
        print("\n".join(drift) or f"{len(fresh)} row(s): every result as recorded")
        return 1 if drift else 0
    merged = {**load(), **fresh}  # read again: another run may have written since
    keep = {r.id for r in rows()}
    body = {"witnesses": {k: merged[k] for k in sorted(merged) if k in keep}}
    RECORDS.write_text(HEADER + yaml.safe_dump(body, sort_keys=False, width=120, allow_unicode=True),
                       encoding="utf-8")
    print(f"{len(fresh)} row(s) witnessed; {RECORDS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
