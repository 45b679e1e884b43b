"""Reading ``data/*.yaml`` into a :class:`KnowledgeBase`; every row is validated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from envgen.errors import KnowledgeBaseError
from envgen.kb.knowledge import KnowledgeBase
from envgen.kb.models import Row
from envgen.kb.tables import TABLES
from envgen.paths import kb_data_dir

# libyaml's C loader when PyYAML was built with it (5x faster on these files), else the pure-Python one;
# both are safe loaders and build the same documents
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

def _rows(path: Path, table: str, raw: Any) -> list[Row]:
    from pydantic import ValidationError

    model, _ = TABLES[table]
    if not isinstance(raw, list):
        raise KnowledgeBaseError(f"{path.name}: table {table!r} must be a list of rows")
    rows = []
    for index, item in enumerate(raw):
        try:
            rows.append(model.model_validate(item))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            message = "unknown field" if first["type"] == "unexpected_keyword_argument" else first["msg"]
            raise KnowledgeBaseError(
                f"{path.name}: {table}[{index}] field {where!r}: {message}",
                fix="correct the row; every row needs `source` and only the documented fields",
            ) from exc
    return rows


def load_kb(data_dir: Path | None = None) -> KnowledgeBase:
    """Load and validate every ``*.yaml`` file of ``data_dir`` (default: envgen's own data)."""
    directory = data_dir if data_dir is not None else kb_data_dir()
    if not directory.is_dir():
        raise KnowledgeBaseError(f"knowledge-base directory {directory} does not exist")
    tables: dict[str, list[Row]] = {}
    for path in sorted(directory.glob("*.yaml")):
        try:
            doc = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
        except yaml.YAMLError as exc:
            raise KnowledgeBaseError(f"{path.name}: not valid YAML: {exc}") from exc
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise KnowledgeBaseError(f"{path.name}: expected a mapping of table name to rows")
        for table, raw in doc.items():
            if table not in TABLES:
                raise KnowledgeBaseError(
                    f"{path.name}: unknown table {table!r}", fix=f"use one of: {', '.join(sorted(TABLES))}"
                )
            if table in tables:
                raise KnowledgeBaseError(f"{path.name}: table {table!r} is defined twice")
            tables[table] = _rows(path, table, raw)
    fields = {TABLES[name][1]: rows for name, rows in tables.items()}
    return KnowledgeBase(**fields)  # type: ignore[arg-type]
