"""The leave-out step (``plan.slim``) in a Dockerfile's stages: a RUN of its own at the end of a build stage whose
result the runtime stage copies (the staged installers: the copy takes the stage's last state, so nothing removed
reaches the image), or the tail of the very RUN that installs (uv installs in the runtime stage itself: a later RUN
would only hide the files under a whiteout, the layer below still shipping them)."""

from __future__ import annotations

from dataclasses import replace

from envgen.plan.slim import SCRIPT
from envgen.render.jinja import ARG_LINE
from envgen.render.plan import TemplateInput as Plan
from envgen.render.stages import Run, Stage
from envgen.render.steps import NEXT_LINE

COMMENT = ("What no package loads at runtime is left out of the environment (envgen/kb/data/leave_out.yaml; profile "
           "`slim: false` keeps it).",)


def slim_run(plan: Plan, directory: str) -> Run | None:
    """A RUN that leaves out of ``directory`` what no package loads; None where the profile keeps everything."""
    slim = plan.image.slim
    return None if slim is None else Run(slim.command(directory, ARG_LINE), (SCRIPT,), comment=COMMENT)


def slimmed(stage: Stage, plan: Plan, directory: str) -> Stage:
    """``stage`` with the leave-out RUN for ``directory`` at its end (the stage unchanged with ``slim: false``)."""
    run = slim_run(plan, directory)
    return stage if run is None else replace(stage, steps=(*stage.steps, run))


def slim_tail(plan: Plan, run: Run, directory: str) -> Run:
    """``run`` (an install into ``directory``) followed, in the same RUN, by the leave-out command."""
    slim = plan.image.slim
    if slim is None:
        return run
    return replace(run, command=f"{run.command};{NEXT_LINE}{slim.command(directory, ARG_LINE)}",
                   scripts=(*run.scripts, SCRIPT))
