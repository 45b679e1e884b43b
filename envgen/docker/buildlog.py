"""Turn builder output into step events: BuildKit's ``--progress=plain`` lines, the classic
builder's JSON stream and buildah's (``podman build``) lines. Pure parsing; no Docker access."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from envgen.docker.progress import StepEvent, StepStatus

TAIL_LINES = 20
_KEEP_LINES = 200

# "#5 [2/4] RUN apt-get update", "#9 [builder 3/7] COPY . /src", "#12 [stage-1 2/2] COPY --from=..."
_BK_STEP = re.compile(r"^#(\d+) \[(?:(.+?) )?(\d+)/(\d+)\] (.*)$")
_BK_DONE = re.compile(r"^#(\d+) DONE (\d+(?:\.\d+)?)s$")
_BK_CACHED = re.compile(r"^#(\d+) CACHED$")
_BK_CANCELED = re.compile(r"^#(\d+) CANCELED$")
_BK_ERROR = re.compile(r"^#(\d+) ERROR:? ?(.*)$")
_BK_OUTPUT = re.compile(r"^#(\d+) (\d+\.\d+) ?(.*)$")
_BK_OTHER = re.compile(r"^#(\d+) (.*)$")
# "Step 2/3 : RUN ...", and Podman's compat API's (buildah's) "STEP 2/3: RUN ..." (its stage prefix dropped)
_CLASSIC_STEP = re.compile(r"^(?:Step (\d+)/(\d+) : |(?:\[\d+/\d+\] )?STEP (\d+)/(\d+): )(.*)$")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_EXIT_CODE = re.compile(r"(?:exit code: |returned a non-zero code: |exit status )(\d+)\s*$")


def short_error(error: str) -> str:
    """``executor failed running [/bin/sh -c ...]: exit code: 3`` -> ``exit code 3``; else unchanged."""
    match = _EXIT_CODE.search(error)
    return f"exit code {match.group(1)}" if match else error


@dataclass
class _Step:
    number: int
    name: str
    output: deque[str] = field(default_factory=lambda: deque(maxlen=_KEEP_LINES))
    status: StepStatus = "start"


@dataclass
class StepTracker:
    """Shared bookkeeping: steps seen, cached, the failing one, and recent output for the error tail."""

    emit: Callable[[StepEvent], None]
    steps: list[_Step] = field(default_factory=list)
    failed: _Step | None = None
    error: str = ""
    canceled: bool = False  # the builder reported the failing step as cancelled (SIGINT to the CLI)
    # a step's own ERROR line was seen: the build failed. BuildKit then cancels the steps running beside it
    # (`#N CANCELED`, sometimes printed before the ERROR line), which is no interruption.
    step_failed: bool = False
    recent: deque[str] = field(default_factory=lambda: deque(maxlen=_KEEP_LINES))

    def total(self) -> int:
        return len(self.steps)

    @property
    def cached(self) -> int:
        return sum(1 for s in self.steps if s.status == "cached")

    def _event(self, step: _Step, status: StepStatus, duration: float | None, total: int) -> None:
        step.status = status
        self.emit(StepEvent(step.number, max(total, step.number), step.name, status, duration))

    def failure_tail(self, lines: int = TAIL_LINES) -> str:
        source = self.failed.output if self.failed and self.failed.output else self.recent
        return "\n".join(list(source)[-lines:])


_FROM = re.compile(r"^\s*FROM\s+(?:--\S+\s+)*\S+(?:\s+AS\s+(\S+))?\s*$", re.IGNORECASE)


def stage_labels(dockerfile_text: str) -> set[str]:
    """The stage labels BuildKit prints in ``[label i/n]``: "" for a single-stage Dockerfile, else the
    ``AS`` name or ``stage-N``."""
    names = [m.group(1) for m in map(_FROM.match, dockerfile_text.splitlines()) if m]
    if len(names) <= 1:
        return {""}
    return {name or f"stage-{i}" for i, name in enumerate(names)}


class BuildkitPlainParser(StepTracker):
    """Parses ``--progress=plain`` output line by line (works for buildx and DOCKER_BUILDKIT=1 on 20.10).

    BuildKit shares identical vertices between concurrent builds on one engine, and a shared vertex
    keeps the ``[stage i/n]`` label of the build that asked for it first. ``stages`` (from
    :func:`stage_labels`) lets the step total count only this Dockerfile's stages.
    """

    def __init__(self, emit: Callable[[StepEvent], None], stages: set[str] | None = None) -> None:
        super().__init__(emit)
        self._vertex: dict[str, _Step] = {}
        self._stage_sizes: dict[str, int] = {}
        self._stages = stages

    def total(self) -> int:
        own = (size for label, size in self._stage_sizes.items() if self._stages is None or label in self._stages)
        return max(sum(own), len(self.steps))

    def feed(self, line: str) -> str | None:
        """Parse one line; returns the text of a step's output line (for the sink), else None."""
        line = line.rstrip("\r\n")
        if not line.strip():
            return None
        self.recent.append(line)
        match = _BK_STEP.match(line)
        if match:
            vertex, stage, _, size, name = match.groups()
            self._stage_sizes[stage or ""] = int(size)
            if vertex not in self._vertex:
                step = _Step(len(self.steps) + 1, name)
                self._vertex[vertex] = step
                self.steps.append(step)
                self._event(step, "start", None, self.total())
            return None
        match = _BK_CACHED.match(line)
        if match:
            self._finish(match.group(1), "cached", None)
            return None
        match = _BK_DONE.match(line)
        if match:
            self._finish(match.group(1), "done", float(match.group(2)))
            return None
        match = _BK_CANCELED.match(line)
        if match:
            canceled = self._vertex.get(match.group(1))
            self.canceled = True
            if canceled is not None and self.failed is None:
                self.failed = canceled
                self._finish(match.group(1), "error", None)
            return None
        match = _BK_ERROR.match(line)
        if match:
            failing = self._vertex.get(match.group(1))
            self.error = match.group(2).strip()
            if failing is not None:
                self.step_failed = True
                self.failed = failing
                self._finish(match.group(1), "error", None)
            return None
        match = _BK_OUTPUT.match(line)
        if match and match.group(1) in self._vertex:
            self._vertex[match.group(1)].output.append(match.group(3))
            return str(match.group(3))
        return None

    def _finish(self, vertex: str, status: StepStatus, duration: float | None) -> None:
        step = self._vertex.get(vertex)
        if step is not None and step.status == "start":
            self._event(step, status, duration, self.total())


class ClassicStreamParser(StepTracker):
    """Parses the classic builder's decoded JSON chunks (``{"stream": ...}``, ``{"error": ...}``,
    ``{"aux": {"ID": ...}}``). ``lines`` receives every output line, for the log."""

    def __init__(self, emit: Callable[[StepEvent], None], lines: Callable[[str], None]) -> None:
        super().__init__(emit)
        self._lines = lines
        self._buffer = ""
        self._current: _Step | None = None
        self._total = 0
        self.image_id: str | None = None

    def total(self) -> int:
        return max(self._total, len(self.steps))

    def feed(self, chunk: dict[str, object]) -> None:
        aux = chunk.get("aux")
        if isinstance(aux, dict) and isinstance(aux.get("ID"), str):
            self.image_id = aux["ID"]
        text = chunk.get("stream")
        if isinstance(text, str):
            self._buffer += text
            while "\n" in self._buffer:
                line, self._buffer = self._buffer.split("\n", 1)
                self._line(line.rstrip("\r"))
        error = chunk.get("error")
        if isinstance(error, str):
            self.close()
            self.error = error.strip()
            self._lines(f"ERROR: {self.error}")
            self.recent.append(self.error)
            if self._current is not None:
                self._current.output.append(self.error)
                self.failed = self._current
                self._event(self._current, "error", None, self.total())
                self._current = None

    def close(self) -> None:
        if self._buffer:
            line, self._buffer = self._buffer, ""
            self._line(line)

    def finish_last(self) -> None:
        """Call after a successful stream: the last step has no following "Step" line to close it."""
        self.close()
        if self._current is not None and self._current.status == "start":
            self._event(self._current, "done", None, self.total())
        self._current = None

    def _line(self, line: str) -> None:
        line = _ANSI.sub("", line)
        self._lines(line)
        if not line.strip():
            return
        self.recent.append(line)
        match = _CLASSIC_STEP.match(line)
        if match:
            if self._current is not None and self._current.status == "start":
                self._event(self._current, "done", None, self.total())
            self._total = int(match.group(2) or match.group(4))
            self._current = _Step(len(self.steps) + 1, match.group(5))
            self.steps.append(self._current)
            self._event(self._current, "start", None, self.total())
            return
        if self._current is None:
            return
        stripped = line.strip()
        if stripped == "---> Using cache" or stripped.startswith("--> Using cache "):
            self._event(self._current, "cached", None, self.total())
        elif not stripped.startswith(("--->", "-->", "COMMIT", "Removing intermediate container")):
            self._current.output.append(line)


# buildah (podman build): "STEP 2/3: RUN ...", "[2/2] STEP 1/3: FROM ..." in a multi-stage build
_BUILDAH_STEP = re.compile(r"^(?:\[(\d+)/\d+\] )?STEP (\d+)/(\d+): (.*)$")
_BUILDAH_CACHED = re.compile(r"^--> Using cache [0-9a-f]+$")
_BUILDAH_DONE = re.compile(r"^--> [0-9a-f]+$")
_BUILDAH_ERROR = re.compile(r"^Error: (.*)$")


class BuildahParser(StepTracker):
    """Parses ``podman build`` output line by line: a step starts at ``STEP i/n:``, ends cached at ``--> Using
    cache``, done at ``--> <id>`` (or at the next step: FROM prints no id); ``Error:`` fails the open step."""

    def __init__(self, emit: Callable[[StepEvent], None]) -> None:
        super().__init__(emit)
        self._stage_sizes: dict[str, int] = {}
        self._current: _Step | None = None

    def total(self) -> int:
        return max(sum(self._stage_sizes.values()), len(self.steps))

    def feed(self, line: str) -> str | None:
        """Parse one line; returns the text of a step's output line (for the sink), else None."""
        line = _ANSI.sub("", line.rstrip("\r\n"))
        if not line.strip():
            return None
        self.recent.append(line)
        match = _BUILDAH_STEP.match(line)
        if match:
            stage, _, size, name = match.groups()
            self._stage_sizes[stage or "1"] = int(size)
            self._close("done")
            self._current = _Step(len(self.steps) + 1, name)
            self.steps.append(self._current)
            self._event(self._current, "start", None, self.total())
            return None
        if _BUILDAH_CACHED.match(line):
            self._close("cached")
            return None
        if _BUILDAH_DONE.match(line) or line == "COMMIT" or line.startswith("COMMIT "):
            self._close("done")
            return None
        match = _BUILDAH_ERROR.match(line)
        if match:
            self.error = match.group(1).strip()
            if self._current is not None:
                self.failed = self._current
                self._close("error")
            return None
        if self._current is not None:
            self._current.output.append(line)
            return line
        return None

    def _close(self, status: StepStatus) -> None:
        if self._current is not None and self._current.status == "start":
            self._event(self._current, status, None, self.total())
        self._current = None
