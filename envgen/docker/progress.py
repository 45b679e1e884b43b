"""Build progress: events, the sink protocol, and two sinks (plain lines; live display for terminals)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TextIO

StepStatus = Literal["start", "cached", "done", "error"]


@dataclass(frozen=True)
class StepEvent:
    """One change of a build step. ``step`` counts steps in the order they appeared (1-based);
    ``total`` is the number of steps known so far (BuildKit learns stage sizes as it goes)."""

    step: int
    total: int
    name: str  # "RUN pip install ...", as the builder prints it
    status: StepStatus
    duration_s: float | None = None  # for done steps, when the builder reports it


class ProgressSink(Protocol):
    def start(self, title: str) -> None: ...

    def step(self, event: StepEvent) -> None: ...

    def output(self, line: str) -> None: ...  # one raw line of builder output

    def finish(self, ok: bool, summary: str) -> None: ...


class NullSink:
    """Discards everything."""

    def start(self, title: str) -> None:
        pass

    def step(self, event: StepEvent) -> None:
        pass

    def output(self, line: str) -> None:
        pass

    def finish(self, ok: bool, summary: str) -> None:
        pass


def _short(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


class PlainSink:
    """One line per step change, for logs and non-terminals. ``verbose`` also echoes builder output; otherwise a
    step that runs long says so every ``heartbeat_s`` seconds it prints anything, with its last line (a pip step
    was silent for 150-265 s)."""

    def __init__(self, stream: TextIO | None = None, *, verbose: bool = False, width: int = 100,
                 heartbeat_s: float = 30.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._stream = stream
        self._verbose = verbose
        self._width = width
        self._heartbeat_s = heartbeat_s
        self._clock = clock
        self._t0 = clock()
        self._said = self._t0  # when a line was last written
        self._running: tuple[str, float] | None = None  # the step started last: its label and start time

    def _write(self, text: str) -> None:
        stream = self._stream or sys.stderr
        stream.write(text + "\n")
        stream.flush()
        self._said = self._clock()

    def start(self, title: str) -> None:
        self._t0 = time.monotonic()
        self._write(title)

    def step(self, event: StepEvent) -> None:
        if event.status == "start":
            self._running = (f"[{event.step}/{event.total}] {_short(event.name, self._width // 2)}", self._clock())
            return
        self._running = None
        label = {"cached": "CACHED", "done": "done", "error": "ERROR"}[event.status]
        took = f" {event.duration_s:.1f}s" if event.duration_s is not None else ""
        self._write(f"[{event.step}/{event.total}] {_short(event.name, self._width)}  {label}{took}")

    def output(self, line: str) -> None:
        if self._verbose:
            self._write("    " + line)
        elif self._running is not None and line.strip() and self._clock() - self._said >= self._heartbeat_s:
            label, since = self._running
            self._write(f"    {label} running {self._clock() - since:.0f}s: {_short(line, self._width)}")

    def finish(self, ok: bool, summary: str) -> None:
        elapsed = self._clock() - self._t0
        self._write(f"{'ok' if ok else 'FAILED'}: {summary} ({elapsed:.1f}s)")


class LiveSink:
    """A live display for terminals (rich): finished steps scroll above a bar with step i/n and
    elapsed time; the current step and its last output line are shown beside the bar."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream
        self._progress: Any = None
        self._task: Any = None
        self._finished = 0
        self._current = ""

    def start(self, title: str) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TextColumn,
            TimeElapsedColumn,
        )

        console = Console(file=self._stream or sys.stderr)
        console.print(f"[bold]{title}[/bold]", highlight=False)
        self._progress = Progress(
            SpinnerColumn(), BarColumn(bar_width=30), MofNCompleteColumn(), TimeElapsedColumn(),
            TextColumn("{task.description}"), console=console, transient=True,
        )
        self._progress.start()
        self._task = self._progress.add_task("starting", total=None)

    def step(self, event: StepEvent) -> None:
        if self._progress is None:
            return
        from rich.markup import escape

        width = max(20, self._progress.console.width - 60)  # beside the bar
        line_width = max(30, self._progress.console.width - 25)  # a line of its own
        if event.status == "start":
            self._current = escape(_short(event.name, width))
        else:
            self._finished += 1
            mark = {"cached": "[dim]CACHED[/dim]", "done": "[green]done[/green]", "error": "[red]ERROR[/red]"}
            took = f" {event.duration_s:.1f}s" if event.duration_s is not None else ""
            self._progress.console.print(
                f"{escape(f'[{event.step}/{event.total}]')} {escape(_short(event.name, line_width))}  "
                f"{mark[event.status]}{took}",
                highlight=False, markup=True,
            )
        self._progress.update(self._task, total=event.total, completed=min(self._finished, event.total),
                              description=self._current)

    def output(self, line: str) -> None:
        if self._progress is None or not line.strip():
            return
        from rich.markup import escape

        width = max(20, self._progress.console.width - 60)
        self._progress.update(self._task, description=f"{self._current} | {escape(_short(line, width // 2))}")

    def finish(self, ok: bool, summary: str) -> None:
        if self._progress is None:
            return
        self._progress.stop()
        colour = "green" if ok else "red"
        self._progress.console.print(f"[{colour}]{'ok' if ok else 'FAILED'}[/{colour}]: {summary}",
                                     highlight=False)
        self._progress = None


def sink_for(stream: TextIO | None = None) -> ProgressSink:
    """LiveSink on a terminal, PlainSink otherwise."""
    target = stream or sys.stderr
    isatty = getattr(target, "isatty", None)
    return LiveSink(target) if callable(isatty) and isatty() else PlainSink(target)
