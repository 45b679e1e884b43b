"""The boundary cases of tests/fixtures/resolved/cases.yaml as profiles (shared by the test and the bench)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

CASES = Path(__file__).resolve().parent / "fixtures" / "resolved" / "cases.yaml"


def cases() -> list[tuple[str, dict[str, Any]]]:
    """(id, case) for every case, by class."""
    data = yaml.safe_load(CASES.read_text(encoding="utf-8"))
    return [(f"{kind}-{case['broken'][-1]}", case) for kind, rows in data.items() for case in rows]


def profile(case: dict[str, Any], side: str, directory: Path) -> Path:
    """A profile of ``case``'s ``side`` ("broken" or "working") written into ``directory``."""
    name = f"{side}-{case['broken'][-1].split('==')[0]}".replace("_", "-").lower()
    body: dict[str, Any] = {"name": name, "base": case["base"], "installer": "pip", "python": case["python"],
                            "gpu": {"required": False}, "packages": {"pip": case[side]}}
    if case.get("frameworks"):
        body["frameworks"] = case["frameworks"]
    path = directory / f"{name}.yaml"
    path.write_text(yaml.safe_dump(body, sort_keys=False), encoding="utf-8")
    return path
