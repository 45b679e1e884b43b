"""What the runtime image leaves out of its Python environment (issue #44): the rows of ``leave_out.yaml`` that
leave something out (tests inside site-packages, documentation, static libraries, headers; each with the paths a
package loads at runtime kept), as the command the build script ``templates/sh/slim.sh`` runs at the end of each
step that installs into the environment or the extras directory, in the same step, so that no layer ever holds what
it removes. None where the profile says ``slim: false`` (everything kept).

The symbol tables (``strip_symbols.yaml``, ``StripPlan``): after the leave-out, in the same step, templates/sh/strip.sh
strips the ELF files the step's distributions installed, where each one's own licence allows a modified copy, with
GNU strip from a stage of its own (``STRIP_STAGE``, made by strip-tool.sh) that never reaches the image. None where
the profile says ``slim: false`` or ``slim: {strip_symbols: false}``.

A kept path that only a compiler reads (``compiler: true``: torch's headers) is kept for certain where the image's
apt set goes beyond the Python setup's own (packages.apt, the runtime compilers: one may be a compiler); elsewhere
slim.sh keeps it only if it finds a C or C++ compiler in the image when it runs (the base's, or the environment's
own conda compilers): with none, torch.utils.cpp_extension and inductor's C++ backend cannot run at all."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import PurePosixPath

from envgen import layout
from envgen.kb import KnowledgeBase
from envgen.kb.leave_out import LeaveOut
from envgen.kb.strip import StripLicence, StripRefused, StripTool
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
    if not profile.leaves_out:
        return None
    rules = tuple(row for row in kb.leave_out if row.leave_out)
    return LeaveOutPlan(rules, apt_compiler) if rules else None


STRIP_SCRIPT = "strip.sh"
STRIP_TOOL_SCRIPT = "strip-tool.sh"
STRIP_STAGE = "strip"
STRIP_DIR = "/opt/envgen-strip"  # GNU strip and its libraries in the strip stage (strip-tool.sh); never in the image


@dataclass(frozen=True)
class StripPlan:
    """The symbol tables the runtime image strips (``strip_symbols.yaml``): the tool, its flags, which sections make
    a file worth rewriting, the licences that allow a modified copy and the distributions never rewritten."""

    tool: StripTool
    licences: tuple[StripLicence, ...]
    refused: tuple[StripRefused, ...]

    @property
    def package(self) -> str:
        """What the strip stage installs (the base's package manager; the plan's apt pins where the lock has it)."""
        return self.tool.package

    def words(self) -> tuple[str, ...]:
        """strip.sh's options, one line each: the flags and sections, each licence, each refused pattern."""
        return (" ".join([*(f"-f {flag}" for flag in self.tool.flags),
                          *(f"-s {shlex.quote(section)}" for section in self.tool.sections)]),
                *(f"-{'n' if row.notice else 'l'} {shlex.quote('|'.join(row.spellings))}" for row in self.licences),
                " ".join(f"-x {shlex.quote(pattern)}" for row in self.refused for pattern in row.distributions))

    def command(self, directory: str, next_line: str = " ") -> str:
        """The shell command that strips what the distributions installed in ``directory``."""
        return (f"sh {layout.SCRIPTS}/{STRIP_SCRIPT} {directory} {STRIP_DIR} -m {manifest_name(directory)}"
                + "".join(next_line + word for word in self.words() if word))


def manifest_name(directory: str) -> str:
    """The list of what strip.sh rewrote, under ``directory``/share/envgen: stripped.txt in the environment; the
    extras directory's its own name (the runtime stage copies it into the environment beside the other)."""
    return "stripped.txt" if directory == layout.ENV else f"stripped-{PurePosixPath(directory).name}.txt"


def strip_plan(profile: Profile, kb: KnowledgeBase) -> StripPlan | None:
    """The profile's plan: the first strip_tools row with the licence tables; None with ``slim: false`` or
    ``slim: {strip_symbols: false}``."""
    if not profile.strips_symbols or not kb.strip_tools:
        return None
    return StripPlan(kb.strip_tools[0], tuple(kb.strip_licences), tuple(kb.strip_refused))
