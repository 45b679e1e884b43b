"""Every refusal the render and the build's preparation can make, in one list (issue #28: render refuses nothing
check let through). A refusal that the profile (and the files beside it) decides is ``seen_by="check"``: the render
raises it through :func:`refuse` and `envgen check` reports the same reason and fix as an error finding
(``check/settings/refusals.py``, and ``check/lock/lockfile.py`` for the lock file). The others depend on what `check` is
not given (the command's options, the output directory, the engine's images) and say so in ``why_not_check``;
``tests/unit/test_refusals.py`` walks the list."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from envgen.errors import InputError
from envgen.kb.families import BaseFamily, PythonSetup

# check: the profile and the files beside it decide; invocation: the command's options and paths; engine: the Docker
# engine's images or a registry; internal: envgen's own templates, scripts and data (a bug, not the user's input)
SeenBy = Literal["check", "invocation", "engine", "internal"]


@dataclass(frozen=True)
class Refusal:
    code: str  # the check finding's code, too
    raised_in: str  # the module that raises it
    seen_by: SeenBy
    summary: str  # what is refused, in a few words
    why_not_check: str = ""  # for seen_by other than "check": what check is not given
    # the check finding's severity: lock-stale stays a warning that says "the build will refuse this lock" (a stale
    # lock is the usual state between an edit and `envgen lock`)
    severity: Literal["error", "warning"] = "error"


REFUSALS: tuple[Refusal, ...] = (
    Refusal("env-replaces-envgen", "envgen.plan.environment", "check",
            "a profile env variable that would replace one envgen sets (PATH, LD_LIBRARY_PATH, NVIDIA_*)"),
    Refusal("base-env-collision", "envgen.render.plan", "check",
            "a base whose own content occupies /opt/env (an image envgen built) under an environment made anew there"),
    Refusal("envgen-base-unnamed", "envgen.pipeline.prepare", "engine",
            "an image envgen built (its labels say so) as the base of a profile that makes its environment anew",
            "the base image's labels, which only the engine has (check recognises an envgen image the profile names: "
            "base_provides.python inside /opt/env)"),
    Refusal("base-provides-conflict", "envgen.render.plan", "check",
            "a packages.pip line naming a distribution base_provides.packages holds, at a version outside the line"),
    Refusal("lock-stale", "envgen.plan.lockfile", "check",
            "a lock beside the profile made for other inputs (python, pins, base, apt packages), or unreadable",
            severity="warning"),
    Refusal("lock-not-pip", "envgen.plan.lockfile", "check",
            "a pip lock file beside a conda profile"),
    Refusal("conda-lock-stale", "envgen.plan.condalock", "check",
            "a conda lock (<profile>.conda.txt) made for other conda specs, or not an explicit list"),
    Refusal("lock-target", "envgen.render.plan", "check",
            "a lock made for another Python or C library (its target: cp311-manylinux_2_36_x86_64)"),
    Refusal("offline-needs-wheelhouse", "envgen.render.plan", "invocation",
            "--offline without a wheelhouse", "the --offline and --wheelhouse options of render/build"),
    Refusal("wheelhouse-missing", "envgen.render.core", "invocation",
            "a --wheelhouse that is not a directory", "the --wheelhouse option of render/build"),
    Refusal("output-not-a-directory", "envgen.render.writer", "invocation",
            "an output path (-o) that exists and is not a directory, or cannot be created or written",
            "the render's -o DIR"),
    Refusal("export-options", "envgen.render.exports", "invocation",
            "an unknown export format, no profile, a shared-memory size not in Docker's syntax",
            "the export command's arguments and --shm-size"),
    Refusal("push-without-smoke", "envgen.pipeline.build", "invocation",
            "--push with --no-smoke", "the build's --push and --no-smoke options"),
    Refusal("local-base-missing", "envgen.lock.lock_base", "engine",
            "a local base image (local_base: true) the engine does not hold, or not the one the lock pins",
            "the engine's images (check reads none)"),
    Refusal("registry-base-gone", "envgen.lock.lock_base", "engine",
            "a base the registry no longer serves at the locked digest, or cannot give a digest or packages for",
            "the registry (check reaches none)"),
    Refusal("template-error", "envgen.render.jinja", "internal",
            "a template that does not render (an undefined value, a missing template)",
            "envgen's own templates: tests/unit/test_render_golden.py renders every built-in profile"),
    Refusal("build-script-missing", "envgen.render.scripts", "internal",
            "a build script a template names that is not in templates/sh",
            "envgen's own scripts: tests/unit/test_build_scripts.py"),
    Refusal("build-script-unshipped", "envgen.render.steps", "internal",
            "a build script a step runs (or one it sources) that envgen does not ship",
            "envgen's own scripts: tests/unit/test_render_steps.py and test_build_scripts.py"),
    Refusal("render-data-invalid", "envgen.render.plan", "internal",
            "a render data file (render/data/*.yaml) that is not a mapping", "envgen's own data"),
)


def refusal(code: str) -> Refusal:
    found = next((r for r in REFUSALS if r.code == code), None)
    if found is None:
        raise KeyError(f"no refusal {code!r} in envgen.plan.refusals.REFUSALS")
    return found


@dataclass(frozen=True)
class Refused:
    """One refusal a profile triggers: the message and fix both the render's error and the check's finding carry."""

    code: str
    message: str
    fix: str

    def error(self) -> InputError:
        return InputError(self.message, fix=self.fix)


def refuse(found: list[Refused]) -> None:
    """Raise the first refusal found (the render's side; check reports them all)."""
    if found:
        raise found[0].error()


def env_collisions(own: Mapping[str, str], profile_env: Mapping[str, str]) -> list[Refused]:
    """The profile's ``env`` variables that would replace one of envgen's own (``own``: what the plan sets)."""
    refusal("env-replaces-envgen")
    return [Refused("env-replaces-envgen", f"profile env {key} would replace envgen's own {key}",
                    f"remove env.{key}") for key in profile_env if key in own]


def base_collisions(family: BaseFamily, setup: PythonSetup, base: str, env_prefix: str) -> list[Refused]:
    """An environment made anew at ``env_prefix`` over a base whose own content is there (an image envgen built,
    recognised by its labels or the profile's base_provides): the build stage cannot write it, and the image would
    mix the two."""
    refusal("base-env-collision")
    occupied = family.occupied(env_prefix)
    if occupied is None or not setup.venv:
        return []
    return [Refused(
        "base-env-collision",
        f"base {base} is an image of family {family.name} whose own environment occupies {occupied}: envgen's "
        f"environment would be made anew at {env_prefix} over it ({family.cite()})",
        "layer on it: installer: pip with base_provides: {python: " + env_prefix + "/bin/python3} (its packages "
        "stay, the profile's go on top), or build on the image the base was built from")]
