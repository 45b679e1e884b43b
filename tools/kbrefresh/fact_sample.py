"""A reproducible random sample of the facts in the knowledge base's hand-written tables, for an audit against
primary sources (docs/validation/2026-12-01-kb-facts/README.md records one).

    python -m tools.kbrefresh.fact_sample [--seed 29] [--count 40]

A fact is one field of one row (a nested row's fields count on their own: a PyTorch variant's arch list), with
the prose fields left out (source, notes, fix, shows, the witness trials). The tables read from artifacts by the
refresh tools (framework_requires, the nvidia/cuda tag list) are not hand-written and are left out, and so are
ngc.yaml and gpus.yaml, which issue 29's NGC and GPU work rewrites. The sample is ``random.Random(seed)`` over
the facts in table order, so the same KB and seed give the same list. A field that only names its row (the
version of a version's row, a variant's tag and its CUDA) and an empty or false default are not facts.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Iterator
from typing import Any

from envgen.kb import load_kb
from envgen.kb.knowledge import KnowledgeBase
from envgen.kb.models import Row, TorchVariant
from envgen.kb.tables import TABLES

LEFT_OUT_TABLES = {"framework_requires", "cuda_images", "ngc", "ngc_family", "gpus"}
PROSE = {"source", "notes", "fix", "shows", "witness", "why", "arch_source", "unverified", "error", "reason"}


def _facts(row: Row, key: str) -> Iterator[tuple[str, str, Any]]:
    for name in type(row).model_fields:
        value = getattr(row, name)
        if name in PROSE or value in (None, "", [], {}, False) or (isinstance(value, str) and value in key):
            continue  # prose, an empty default, or the row's own name (its key says it)
        if name == "cuda" and isinstance(row, TorchVariant):
            continue  # the variant's tag spells it (cu121: 12.1)
        if isinstance(value, list) and value and all(isinstance(v, Row) for v in value):
            for child in value:
                yield from _facts(child, f"{key}+{child.key}")
        elif isinstance(value, Row) or hasattr(value, "model_dump"):
            yield key, name, value.model_dump() if hasattr(value, "model_dump") else value
        else:
            yield key, name, value


def facts(kb: KnowledgeBase) -> list[tuple[str, str, str, Any]]:
    """(table, row key, field, value) of every fact of the hand-written tables, in table order."""
    out = []
    for table, (_, attr) in TABLES.items():
        if table in LEFT_OUT_TABLES:
            continue
        for row in getattr(kb, attr):
            out += [(table, key, name, value) for key, name, value in _facts(row, row.key)]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.kbrefresh.fact_sample", description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--count", type=int, default=40)
    args = parser.parse_args(argv)
    every = facts(load_kb())
    picked = random.Random(args.seed).sample(range(len(every)), args.count)
    print(f"# {len(every)} facts; seed {args.seed}")
    for n, index in enumerate(picked, start=1):
        table, key, name, value = every[index]
        print(f"{n}\t{table}\t{key}\t{name}\t{value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
