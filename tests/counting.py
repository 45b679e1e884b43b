"""Counting how often a command plans and renders: the real ``plan_image`` and ``render_files`` wrapped by a counter
(nothing replaced: the command runs as it does for users)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest


@dataclass
class Counts:
    plans: int = 0  # image plans made (envgen.plan.image.image_plan, which plan_image calls)
    renders: int = 0  # build contexts rendered (envgen.render.core.render_files)


def count_plans(monkeypatch: pytest.MonkeyPatch) -> Counts:
    import envgen.plan.image as image
    import envgen.render.core as core

    counts = Counts()
    plan, files = image.image_plan, core.render_files

    def counted_plan(*args: Any, **kwargs: Any) -> Any:
        counts.plans += 1
        return plan(*args, **kwargs)

    def counted_files(*args: Any, **kwargs: Any) -> Any:
        counts.renders += 1
        return files(*args, **kwargs)

    monkeypatch.setattr(image, "image_plan", counted_plan)
    monkeypatch.setattr(core, "render_files", counted_files)
    return counts
