"""Render's walk after the plan is made (issue #41, "render's calls out after the plan is given"): every call that
leaves envgen/render/ for another envgen module while ``render_in_memory(plan)`` runs, the plan
made beforehand, over the built-in profiles and the golden fixture profiles.

Two figures, as tests/unit/test_layers.py::test_render_calls_out_only_for_the_route_once_given_the_plan sorts them:
"all" counts every distinct (render module -> envgen function) pair; "deciding" leaves out reading the plan's own
objects (a method of a plan/ or profile/ class), the files render ships (paths.py) and records made (records.py):
what is left are the trips out that could still decide something.

    python bench/render_calls_out.py [--json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import envgen

ROOT = str(Path(envgen.__file__).resolve().parent) + "/"
FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "profiles"


def _reads_the_plan(module: str, name: str) -> bool:
    return module in ("paths.py", "records.py") or (module.startswith(("plan/", "profile/")) and "." in name)


def profiled(profiles: list[Any], kb: Any) -> tuple[set[tuple[str, str]], dict[tuple[str, str], int]]:
    """The distinct pairs seen, and how often each deciding pair was called."""
    from envgen.plan.image import plan_image
    from envgen.render.core import render_in_memory

    pairs: set[tuple[str, str]] = set()
    calls: dict[tuple[str, str], int] = {}

    def seen(frame: FrameType, event: str, _arg: object) -> None:
        caller, callee = frame.f_back, frame.f_code.co_filename
        if event != "call" or caller is None or not caller.f_code.co_filename.startswith(ROOT + "render/"):
            return
        if not callee.startswith(ROOT) or callee.startswith(ROOT + "render/"):
            return
        pair = (caller.f_code.co_filename[len(ROOT):], f"{callee[len(ROOT):]}:{frame.f_code.co_qualname}")
        pairs.add(pair)
        if not _reads_the_plan(callee[len(ROOT):], frame.f_code.co_qualname):
            calls[pair] = calls.get(pair, 0) + 1

    for profile in profiles:
        plan = plan_image(profile, kb)
        with _profiled_by(seen):
            render_in_memory(plan)
    return pairs, calls


@contextlib.contextmanager
def _profiled_by(hook: Any) -> Iterator[None]:
    sys.setprofile(hook)
    try:
        yield
    finally:
        sys.setprofile(None)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    from envgen.kb import load_kb
    from envgen.profile import list_profiles, load_profile

    names = [s.name for s in list_profiles({})]
    profiles = [load_profile(n, env={}) for n in names]
    profiles += [load_profile(str(p), env={}) for p in sorted(FIXTURES.glob("*.yaml"))
                 if (Path(__file__).resolve().parents[1] / "tests" / "golden" / "fixtures" / p.stem).is_dir()]
    pairs, calls = profiled(profiles, load_kb())
    deciding = sorted(calls)
    result = {"profiles": len(profiles), "pairs_all": len(pairs), "deciding_pairs": len(deciding),
              "deciding": [f"{a} -> {b} x{calls[(a, b)]}" for a, b in deciding]}
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"{result['profiles']} profiles: {len(pairs)} distinct pairs out of render, {len(deciding)} deciding")
        print("\n".join("  " + line for line in result["deciding"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
