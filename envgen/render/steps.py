"""A Dockerfile's RUN steps and what each one reaches, emitted for one builder: the one switch between the two
Dockerfile variants.

A step declares what it reaches: the build scripts it runs (``templates/sh/``; the scripts those source or run
come with them), cache directories, apt's caches, the build secrets, the wheelhouse, other bind mounts. BuildKit
(``Dockerfile``) gets a ``--mount`` for each, so a layer's cache key holds exactly what it runs: a script another
layer runs (extras.sh, shipped only when packages.pip adds something) leaves the environment layer cached. The
classic builder (``Dockerfile.classic``, Docker SDK) has no mounts and no secrets: a step's scripts are copied in
by a COPY line just before it, a build stage copies the wheelhouse in (``wheels``), and the scripts empty the
caches themselves.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from envgen import layout
from envgen.errors import RenderError

NEXT_LINE = " \\\n    "  # a RUN's fragments: each on a continued line of its own
_USES = re.compile(r"\$here/([A-Za-z0-9_.-]+\.sh)")
APT_CACHES = ("/var/cache/apt", "/var/lib/apt/lists")


def script_closures(directory: Path) -> dict[str, tuple[str, ...]]:
    """Script name -> itself and every script it sources or runs (``$here/NAME.sh``), sorted."""
    uses = {path.name: set(_USES.findall(path.read_text(encoding="utf-8"))) for path in directory.glob("*.sh")}
    out: dict[str, tuple[str, ...]] = {}
    for name in uses:
        seen, todo = set(), {name}
        while todo:
            current = todo.pop()
            if current not in uses:
                raise RenderError(f"build script {current} (used by {name}) is not in {directory}")
            seen.add(current)
            todo |= uses[current] - seen
        out[name] = tuple(sorted(seen))
    return out


@dataclass(frozen=True)
class Emitter:
    """Writes steps for one builder (``buildkit``) from the scripts' closures (``script_closures``)."""

    buildkit: bool
    closures: Mapping[str, tuple[str, ...]]

    def scripts(self, entries: Iterable[str]) -> tuple[str, ...]:
        """The scripts ``entries`` need, each once, sorted."""
        out: set[str] = set()
        for entry in filter(None, entries):  # a template writes "" for a script a step does not run
            if entry not in self.closures:
                raise RenderError(f"build script {entry} (named by a template) is not among envgen's scripts")
            out |= set(self.closures[entry])
        return tuple(sorted(out))

    def run(self, *scripts: str, caches: Iterable[str] = (), apt: bool = False, secrets: bool = False,
            wheels: bool = False, binds: Iterable[str] = ()) -> str:
        """``RUN`` and what the step reaches. BuildKit: a mount for each, each on a continued line. Classic: the
        scripts it runs copied in by a COPY line of their own just before it (the rest it cannot have)."""
        names = self.scripts(scripts)
        if not self.buildkit:
            sources = " ".join(f"{layout.CONTEXT_SCRIPTS}/{name}" for name in names)
            return (f"COPY {sources} {layout.SCRIPTS}/\n" if names else "") + "RUN "
        mounts = [f"--mount=type=cache,target={target},sharing=locked" for target in (APT_CACHES if apt else ())]
        mounts += [f"--mount=type=cache,target={target}" for target in caches]
        if secrets:
            mounts += [f"--mount=type=secret,id={secret},required=false" for secret in layout.SECRET_IDS]
        if wheels:
            mounts.append(f"--mount=type=bind,source={layout.CONTEXT_WHEELS},target={layout.WHEELS}")
        mounts += [f"--mount=type=bind,{bind}" for bind in binds]
        mounts += [f"--mount=type=bind,source={layout.CONTEXT_SCRIPTS}/{name},target={layout.SCRIPTS}/{name}"
                   for name in names]
        return "RUN " + "".join(mount + NEXT_LINE for mount in mounts)

    def wheels(self) -> str:
        """Classic builder: the COPY line that brings the wheelhouse into a build stage (BuildKit binds it per
        step instead: nothing)."""
        return "" if self.buildkit else f"COPY {layout.CONTEXT_WHEELS}/ {layout.WHEELS}/\n"
