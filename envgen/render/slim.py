"""The leave-out and strip steps (``plan.slim``) in a Dockerfile's stages: a RUN of its own at the end of a build stage
whose result the runtime stage copies (the staged installers: the copy takes the stage's last state, so nothing
removed reaches the image), or the tail of the very RUN that installs (uv installs in the runtime stage itself: a
later RUN would only hide the files under a whiteout, the layer below still shipping them). The strip step runs GNU
strip from the strip stage (``plan.slim.STRIP_STAGE``): bound into the installing RUN (BuildKit), or copied into the
build stage, which is never shipped."""

from __future__ import annotations

from dataclasses import replace

from envgen.plan.slim import SCRIPT, STRIP_DIR, STRIP_SCRIPT, STRIP_STAGE
from envgen.render.jinja import ARG_LINE
from envgen.render.plan import TemplateInput as Plan
from envgen.render.stages import Bind, CopyFrom, Run, Stage
from envgen.render.steps import NEXT_LINE

COMMENT = ("What no package loads at runtime is left out of the environment (envgen/kb/data/leave_out.yaml; profile "
           "`slim: false` keeps it).",)
STRIP_COMMENT = ("The symbol tables the loader never reads are stripped where each distribution's licence allows it "
                 "(envgen/kb/data/strip_symbols.yaml; profile `slim: {strip_symbols: false}` keeps them).",)


def _tail(plan: Plan, directory: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The leave-out and strip commands for ``directory`` (none where the profile keeps everything), the scripts they
    run and their comment lines."""
    slim, strip = plan.image.slim, plan.image.strip
    commands = ((slim.command(directory, ARG_LINE),) if slim else ()) + (
        (strip.command(directory, ARG_LINE),) if strip else ())
    scripts = ((SCRIPT,) if slim else ()) + ((STRIP_SCRIPT,) if strip else ())
    return commands, scripts, (COMMENT if slim else ()) + (STRIP_COMMENT if strip else ())


def slim_run(plan: Plan, directory: str) -> Run | None:
    """A RUN that leaves out of ``directory`` what no package loads and strips its symbol tables; None where the
    profile keeps everything."""
    commands, scripts, comment = _tail(plan, directory)
    return Run(f";{NEXT_LINE}".join(commands), scripts, comment=comment) if commands else None


def slimmed(stage: Stage, plan: Plan, directory: str) -> Stage:
    """``stage`` with the leave-out RUN for ``directory`` at its end, strip's files copied in before it where it
    strips (the stage unchanged with ``slim: false``)."""
    run = slim_run(plan, directory)
    if run is None:
        return stage
    tool = (CopyFrom(STRIP_STAGE, STRIP_DIR, STRIP_DIR),) if plan.image.strip else ()
    return replace(stage, steps=(*stage.steps, *tool, run))


def slim_tail(plan: Plan, run: Run, directory: str) -> Run:
    """``run`` (an install into ``directory``) followed, in the same RUN, by the leave-out and strip commands (strip
    bound from its stage)."""
    commands, scripts, _ = _tail(plan, directory)
    if not commands:
        return run
    binds = (Bind(STRIP_DIR, STRIP_DIR, stage=STRIP_STAGE),) if plan.image.strip else ()
    return replace(run, command=f";{NEXT_LINE}".join((run.command, *commands)), scripts=(*run.scripts, *scripts),
                   binds=(*run.binds, *binds))
