"""What the runtime image leaves out of its Python environment (issue #44): the rows of ``leave_out.yaml`` that
leave something out (tests inside site-packages, documentation, static libraries, headers; each with the paths a
package loads at runtime kept), as the command the build script ``templates/sh/slim.sh`` runs at the end of each
step that installs into the environment or the extras directory, in the same step, so that no layer ever holds what
it removes. None where the profile says ``slim: false`` (everything kept).

A kept path that only a compiler reads (``compiler: true``: torch's headers) is kept for certain where the image's
apt set goes beyond the Python setup's own (packages.apt, the runtime compilers: one may be a compiler); elsewhere
slim.sh keeps it only if it finds a C or C++ compiler in the image when it runs (the base's, or the environment's
own conda compilers): with none, torch.utils.cpp_extension and inductor's C++ backend cannot run at all."""

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
    apt_compiler: bool = True  # the image's apt set may hold a compiler: every kept path kept for certain

    def words(self) -> tuple[str, ...]:
        """slim.sh's arguments, one line each: a rule (``-r NAME``, ``-d|-f PATTERN`` for each pattern), then
        ``-k KEPT`` for each path it keeps (``-c KEPT``: kept where slim.sh finds a compiler in the image)."""
        out = []
        for rule in self.rules:
            out.append(" ".join([f"-r {rule.name}", *(f"-{rule.kind} {shlex.quote(path)}" for path in rule.paths)]))
            out += [f"-{'c' if kept.compiler and not self.apt_compiler else 'k'} {shlex.quote(kept.path)}"
                    for kept in rule.keep]
        return tuple(out)

    def command(self, directory: str, next_line: str = " ") -> str:
        """The shell command that leaves the rules' paths out of ``directory``, each rule after ``next_line``."""
        return f"sh {layout.SCRIPTS}/{SCRIPT} {directory}" + "".join(next_line + word for word in self.words())


def leave_out_plan(profile: Profile, kb: KnowledgeBase, apt_compiler: bool = True) -> LeaveOutPlan | None:
    """The profile's plan: every row of ``leave_out.yaml`` that leaves something out; None with ``slim: false``.
    ``apt_compiler``: the image's apt set may hold a compiler."""
    if not profile.slim:
        return None
    rules = tuple(row for row in kb.leave_out if row.leave_out)
    return LeaveOutPlan(rules, apt_compiler) if rules else None
