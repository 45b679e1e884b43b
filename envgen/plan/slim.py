"""What the runtime image leaves out of its Python environment (issue #44): the rows of ``leave_out.yaml`` that
leave something out (tests inside site-packages, documentation, static libraries, headers; each with the paths a
package loads at runtime kept), as the command the build script ``templates/sh/slim.sh`` runs at the end of each
step that installs into the environment or the extras directory, in the same step, so that no layer ever holds what
it removes. None where the profile says ``slim: false`` (everything kept)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from envgen import layout
from envgen.kb import KnowledgeBase
from envgen.kb.leave_out import LeaveOut
from envgen.profile import Profile

SCRIPT = "slim.sh"


@dataclass(frozen=True)
class LeaveOutPlan:
    """The rules a runtime image applies, in the data file's order."""

    rules: tuple[LeaveOut, ...]

    def words(self) -> tuple[str, ...]:
        """slim.sh's arguments, one line each: a rule (``-r NAME``, ``-d|-f PATTERN`` for each pattern), then
        ``-k KEPT`` for each path it keeps."""
        out = []
        for rule in self.rules:
            out.append(" ".join([f"-r {rule.name}", *(f"-{rule.kind} {shlex.quote(path)}" for path in rule.paths)]))
            out += [f"-k {shlex.quote(kept.path)}" for kept in rule.keep]
        return tuple(out)

    def command(self, directory: str, next_line: str = " ") -> str:
        """The shell command that leaves the rules' paths out of ``directory``, each rule after ``next_line``."""
        return f"sh {layout.SCRIPTS}/{SCRIPT} {directory}" + "".join(next_line + word for word in self.words())


def leave_out_plan(profile: Profile, kb: KnowledgeBase) -> LeaveOutPlan | None:
    """The profile's plan: every row of ``leave_out.yaml`` that leaves something out; None with ``slim: false``."""
    if not profile.slim:
        return None
    rules = tuple(row for row in kb.leave_out if row.leave_out)
    return LeaveOutPlan(rules) if rules else None
