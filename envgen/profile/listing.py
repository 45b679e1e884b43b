"""The rows of `envgen profiles`: one per built-in or user profile, with what it contains."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from envgen.errors import EnvgenError
from envgen.profile.loader import list_profiles, load_profile
from envgen.table import format_table


def profile_rows(env: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for source in list_profiles(env):
        row: dict[str, Any] = {"name": source.name, "origin": source.origin, "path": str(source.path)}
        try:
            profile = load_profile(str(source.path) if source.origin == "file" else source.name, env)
        except EnvgenError as exc:
            row.update(description=f"INVALID: {exc.one_line()}", cuda="", frameworks="", targets="")
            rows.append(row)
            continue
        fw = profile.frameworks
        frameworks = [f"{name} {ver}" for name, ver in (("tf", fw.tensorflow), ("torch", fw.pytorch)) if ver]
        row.update(
            description=profile.description,
            # a GPU profile may leave its CUDA to its base's or its wheels' KB row: planning decides it, not listing
            cuda=profile.cuda or ("(planned)" if profile.is_gpu else "cpu"),
            frameworks=", ".join(frameworks) or "-",
            targets=", ".join(profile.gpu.targets) or ("-" if profile.gpu.required else "cpu-only"),
        )
        rows.append(row)
    return rows


def rows_table(rows: list[dict[str, Any]]) -> str:
    headers = ("NAME", "ORIGIN", "CUDA", "FRAMEWORKS", "TARGETS", "DESCRIPTION")
    keys = ("name", "origin", "cuda", "frameworks", "targets", "description")
    return format_table(headers, [[row[k] for k in keys] for row in rows])
