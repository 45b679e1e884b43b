"""A Dockerfile's stages and steps (``render.stages``) written for one builder: the one switch between the two
Dockerfile variants.

A step declares what it reaches: the build scripts it runs (``templates/sh/``; the scripts those source or run
come with them), cache directories, apt's caches, the build secrets, the wheelhouse, other bind mounts. BuildKit
(``Dockerfile``) gets a ``--mount`` for each, so a layer's cache key holds exactly what it runs: a script another
layer runs (extras.sh, shipped only when packages.pip adds something) leaves the environment layer cached. The
classic builder (``Dockerfile.classic``, Docker SDK) has no mounts and no secrets: a step's scripts are copied in
by a COPY line just before it, a build stage copies the wheelhouse in (a ``Wheelhouse`` step), and the scripts
empty the caches themselves.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from envgen import layout
from envgen.errors import RenderError
from envgen.render.stages import CopyFrom, Run, Stage, Step, Wheelhouse

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
    """Writes stages and their steps (``render.stages``) for one builder (``buildkit``), with the scripts' closures
    (``script_closures``)."""

    buildkit: bool
    closures: Mapping[str, tuple[str, ...]]

    def scripts(self, entries: Iterable[str]) -> tuple[str, ...]:
        """The scripts ``entries`` need, each once, sorted."""
        out: set[str] = set()
        for entry in entries:
            if entry not in self.closures:
                raise RenderError(f"build script {entry} (named by a step) is not among envgen's scripts")
            out |= set(self.closures[entry])
        return tuple(sorted(out))

    @staticmethod
    def comment(lines: Iterable[str]) -> str:
        """Comment lines, each ending in a newline."""
        return "".join(f"# {line}\n" for line in lines)

    def opening(self, stage: Stage) -> str:
        """The blank lines before the stage, its comment and its FROM line."""
        return "\n" * stage.gap + self.comment(stage.comment) + f"FROM {stage.base} AS {stage.name}\n"

    def step(self, step: Step) -> str:
        """One step's lines, each ending in a newline (none: a step this builder does without)."""
        if isinstance(step, Run):
            return self.comment(step.comment) + self.run(step)
        if isinstance(step, CopyFrom):
            return f"COPY --from={step.stage} {step.source} {step.target}\n"
        if isinstance(step, Wheelhouse):  # BuildKit binds the wheelhouse per step instead
            return "" if self.buildkit else f"COPY {layout.CONTEXT_WHEELS}/ {layout.WHEELS}/\n"
        return self.comment(step.comment) + f"{step.keyword} {step.value}\n"

    def run(self, step: Run) -> str:
        """``RUN`` and what the step reaches. BuildKit: a mount for each, each on a continued line. Classic: the
        scripts it runs copied in by a COPY line of their own just before it (the rest it cannot have)."""
        names = self.scripts(step.scripts)
        if not self.buildkit:
            sources = " ".join(f"{layout.CONTEXT_SCRIPTS}/{name}" for name in names)
            return (f"COPY {sources} {layout.SCRIPTS}/\n" if names else "") + f"RUN {step.command}\n"
        mounts = [f"--mount=type=cache,target={target},sharing=locked" for target in (APT_CACHES if step.apt else ())]
        mounts += [f"--mount=type=cache,target={target}" for target in step.caches]
        if step.secrets:
            mounts += [f"--mount=type=secret,id={secret},required=false" for secret in layout.SECRET_IDS]
        if step.wheels:
            mounts.append(f"--mount=type=bind,source={layout.CONTEXT_WHEELS},target={layout.WHEELS}")
        mounts += [f"--mount=type=bind,{'from=' + bind.stage + ',' if bind.stage else ''}source={bind.source},"
                   f"target={bind.target}" for bind in step.binds]
        mounts += [f"--mount=type=bind,source={layout.CONTEXT_SCRIPTS}/{name},target={layout.SCRIPTS}/{name}"
                   for name in names]
        return "RUN " + "".join(mount + NEXT_LINE for mount in mounts) + step.command + "\n"
