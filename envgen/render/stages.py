"""A Dockerfile as typed stages and steps: what the installer classes (``render/dockerfile.py``) return for one
profile and the emitter (``render/steps.py``) writes for one builder.

A ``Stage`` is a ``FROM``: its name, what it builds on (the base through ``BASE_IMAGE``, an earlier stage, or an
image such as the base's devel twin), its steps in order. A step is an instruction: a ``Run`` declares everything it
reaches (the build scripts it runs, cache directories, apt's caches, the build secrets, the wheelhouse, other bind
mounts), a ``CopyFrom`` what it takes from an earlier stage, ``Wheelhouse`` the classic builder's copy of the
wheels into a build stage, an ``Instruction`` any other line (ARG, ENV, WORKDIR, COPY from the context, SHELL,
USER). What a stage mounts and copies is read from its steps, never stated twice.
"""

from __future__ import annotations

from dataclasses import dataclass

BASE_IMAGE = "${BASE_IMAGE}"  # the base, through the build argument declared before the first FROM
SHELL_FORM = '["/bin/bash", "-o", "pipefail", "-eu", "-c"]'


@dataclass(frozen=True)
class Instruction:
    """One instruction written as it is (``keyword value``), after its comment lines."""

    keyword: str
    value: str
    comment: tuple[str, ...] = ()


@dataclass(frozen=True)
class Bind:
    """A bind mount beside the scripts and the wheelhouse: a file of the context, or a path of an earlier stage."""

    source: str
    target: str
    stage: str | None = None  # the stage it comes from; None: the build context


@dataclass(frozen=True)
class Run:
    """A ``RUN``: its command and everything it reaches. ``scripts``: the build scripts it names (templates/sh/; the
    scripts those source or run come with them); ``caches``: cache directories; ``apt``: apt's caches; ``secrets``:
    the build secrets; ``wheels``: the wheelhouse; ``binds``: other bind mounts."""

    command: str
    scripts: tuple[str, ...] = ()
    caches: tuple[str, ...] = ()
    apt: bool = False
    secrets: bool = False
    wheels: bool = False
    binds: tuple[Bind, ...] = ()
    comment: tuple[str, ...] = ()


@dataclass(frozen=True)
class CopyFrom:
    """``COPY --from=stage source target``: a result of an earlier stage."""

    stage: str
    source: str
    target: str


@dataclass(frozen=True)
class Wheelhouse:
    """The wheelhouse in a build stage: the classic builder copies it in here; BuildKit binds it per step."""


Step = Instruction | Run | CopyFrom | Wheelhouse


@dataclass(frozen=True)
class Stage:
    """One ``FROM ... AS name`` and its steps; ``comment``: the lines above the FROM; ``gap``: blank lines before."""

    name: str
    base: str
    steps: tuple[Step, ...]
    comment: tuple[str, ...] = ()
    gap: int = 1

    @property
    def runs(self) -> tuple[Run, ...]:
        return tuple(step for step in self.steps if isinstance(step, Run))

    @property
    def scripts(self) -> tuple[str, ...]:
        """The build scripts its RUN steps name, each once, sorted (their closures: ``steps.Emitter.scripts``)."""
        return tuple(sorted({script for run in self.runs for script in run.scripts}))

    @property
    def caches(self) -> tuple[str, ...]:
        return tuple(sorted({cache for run in self.runs for cache in run.caches}))

    @property
    def secrets(self) -> bool:
        return any(run.secrets for run in self.runs)

    @property
    def copies_from(self) -> tuple[str, ...]:
        """The earlier stages it takes something from (a ``COPY --from`` or a RUN's bind mount ``from=``), in the
        order of its steps, each once. Its base, when that is a stage, is ``base``."""
        found = [step.stage for step in self.steps if isinstance(step, CopyFrom)]
        found += [bind.stage for run in self.runs for bind in run.binds if bind.stage is not None]
        return tuple(dict.fromkeys(found))

