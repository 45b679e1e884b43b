"""Fixtures the unit tests share."""

from __future__ import annotations

import pytest

from envgen.kb.knowledge import KnowledgeBase
from envgen.kb.loader import load_kb


@pytest.fixture(scope="session")
def kb() -> KnowledgeBase:
    """envgen's own knowledge base, read and validated from its YAML once for the run (its rows are frozen
    records; a test that needs another KB defines its own ``kb`` fixture)."""
    return load_kb()
