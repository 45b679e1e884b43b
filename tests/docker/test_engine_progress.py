"""Progress parsing and sinks on builder output (no engine needed; kept with the engine tests). The output of both
builders this machine runs is recorded (tests/fixtures/buildlog/README.md: BuildKit through the 20.10 CLI, the
classic builder through the SDK); the buildx layout is written here (no buildx on this machine to record it), as are
the chunk boundaries of the split-chunk case."""

from __future__ import annotations

import io
import json
from pathlib import Path

from envgen.docker import LiveSink, PlainSink, StepEvent, sink_for
from envgen.docker.buildlog import BuildkitPlainParser, ClassicStreamParser

BUILDLOG = Path(__file__).resolve().parents[1] / "fixtures" / "buildlog"
FAILING_STEP = 'RUN echo "compiling [x]"; echo "error: no rule" >&2; exit 2'

# Written here, not recorded: buildx 0.14's plain layout, two stages; the failing step prints after an interleaved
# vertex
BUILDX_LINES = """\
#0 building with "default" instance using docker driver
#1 [internal] load build definition from Dockerfile
#1 DONE 0.0s
#4 [builder 1/3] FROM docker.io/library/debian:bookworm-slim
#4 CACHED
#5 [builder 2/3] RUN echo a
#5 CACHED
#6 [builder 3/3] RUN make
#6 0.211 compiling [x]
#7 [stage-1 2/2] COPY --from=builder /out /out
#6 0.420 error: no rule
#6 ERROR: process "/bin/sh -c make" did not complete successfully: exit code: 2
------
 > [builder 3/3] RUN make:
------
ERROR: failed to solve: process "/bin/sh -c make" did not complete successfully: exit code: 2
"""


def test_buildkit_parser_stages_cache_and_error() -> None:
    events: list[StepEvent] = []
    parser = BuildkitPlainParser(events.append)
    for line in BUILDX_LINES.splitlines():
        parser.feed(line + "\n")
    assert [s.name for s in parser.steps] == [
        "FROM docker.io/library/debian:bookworm-slim", "RUN echo a", "RUN make",
        "COPY --from=builder /out /out",
    ]
    assert parser.total() == 5  # 3 + 2 from the two stages
    assert parser.cached == 2
    assert parser.failed is not None and parser.failed.name == "RUN make"
    assert parser.error.endswith("exit code: 2")
    assert parser.failure_tail() == "compiling [x]\nerror: no rule"
    assert events[-1].status == "error" and events[-1].step == 3


def test_buildkit_parser_on_this_engines_recorded_output() -> None:
    """BuildKit's real plain output for a failing build: the cached steps, the failing one, its output and error.
    The FROM vertex carries a concurrent build's label ([runtime 1/9]): it must not count as a 9-step stage."""
    from envgen.docker.buildlog import stage_labels

    events: list[StepEvent] = []
    parser = BuildkitPlainParser(events.append, stage_labels((BUILDLOG / "Dockerfile").read_text(encoding="utf-8")))
    for line in (BUILDLOG / "buildkit-legacy-plain.txt").read_text(encoding="utf-8").splitlines():
        parser.feed(line + "\n")
    assert [s.name for s in parser.steps] == ["FROM docker.io/library/debian:bookworm-slim", "RUN echo a > /a",
                                              FAILING_STEP]
    assert parser.total() == 3 and parser.cached == 2
    assert parser.failed is not None and parser.failed.name == FAILING_STEP
    assert parser.error == f"executor failed running [/bin/sh -c {FAILING_STEP[4:]}]: exit code: 2"
    assert parser.failure_tail() == "compiling [x]\nerror: no rule"
    assert [(e.step, e.status) for e in events if e.status != "start"] == [(1, "cached"), (2, "cached"), (3, "error")]


def test_classic_parser_on_the_sdks_recorded_stream() -> None:
    """The classic builder's real chunks (the SDK's decoded stream): the step line and its newline arrive as two
    chunks, stderr comes coloured, the error as its own chunk."""
    events: list[StepEvent] = []
    lines: list[str] = []
    parser = ClassicStreamParser(events.append, lines.append)
    for chunk in json.loads((BUILDLOG / "classic-stream.json").read_text(encoding="utf-8")):
        parser.feed(chunk)
    assert [s.name for s in parser.steps] == ["FROM debian:bookworm-slim AS builder", "RUN echo a > /a", FAILING_STEP]
    assert parser.cached == 1
    assert [(e.step, e.status) for e in events if e.status != "start"] == [(1, "done"), (2, "cached"), (3, "error")]
    assert parser.failure_tail().splitlines()[:2] == ["error: no rule", "compiling [x]"]
    assert lines[-1].startswith("ERROR: The command '/bin/sh -c echo \"compiling [x]\"") and "code: 2" in lines[-1]


def test_classic_parser_split_chunks() -> None:
    """Chunk boundaries written here, in the middle of a step line (the recorded stream splits only before the
    newline)."""
    events: list[StepEvent] = []
    lines: list[str] = []
    parser = ClassicStreamParser(events.append, lines.append)
    chunks: list[dict[str, object]] = [
        {"stream": "Step 1/3 : FROM debian:bookworm-slim\n"}, {"stream": " ---> 1a2b\n"},
        {"stream": "Step 2/3 : RUN echo hi\n ---> Using cache\n ---> 3c4d\n"},
        {"stream": "Step 3/3 : RUN echo par"}, {"stream": "tial; exit 1\n ---> Running in 99\n"},
        {"stream": "\x1b[91moops\n\x1b[0m"},
        {"error": "The command '/bin/sh -c echo partial; exit 1' returned a non-zero code: 1",
         "errorDetail": {"code": 1}},
    ]
    for chunk in chunks:
        parser.feed(chunk)
    assert [s.name for s in parser.steps] == ["FROM debian:bookworm-slim", "RUN echo hi",
                                              "RUN echo partial; exit 1"]
    assert parser.cached == 1
    assert [(e.step, e.status) for e in events if e.status != "start"] == [(1, "done"), (2, "cached"),
                                                                          (3, "error")]
    assert parser.failure_tail().splitlines()[0] == "oops"


def test_plain_sink_lines() -> None:
    out = io.StringIO()
    sink = PlainSink(out)
    sink.start("building x")
    sink.step(StepEvent(1, 2, "FROM debian", "start"))
    sink.step(StepEvent(1, 2, "FROM debian", "cached"))
    sink.step(StepEvent(2, 2, "RUN [\"echo\", \"x\"]", "done", 1.25))
    sink.finish(True, "sha256:abc")
    text = out.getvalue().splitlines()
    assert text[0] == "building x"
    assert text[1] == "[1/2] FROM debian  CACHED"
    assert text[2] == '[2/2] RUN ["echo", "x"]  done 1.2s'
    assert text[3].startswith("ok: sha256:abc")


def test_plain_sink_says_a_long_step_is_running() -> None:
    """Issue 38: pip steps were silent for 150-265 s on a non-terminal. A step that runs says so every heartbeat
    it prints anything, with its last line; a quick one adds nothing."""
    now = [0.0]
    out = io.StringIO()
    sink = PlainSink(out, heartbeat_s=30, clock=lambda: now[0])
    sink.start("building z")
    sink.step(StepEvent(3, 5, "RUN pip install -r requirements.lock", "start"))
    now[0] = 10.0
    sink.output("Collecting torch==2.13.0+cpu")  # 10 s after the last line: quiet
    now[0] = 95.0
    sink.output("Installing collected packages: torch")
    now[0] = 100.0
    sink.output("more")  # 5 s after the heartbeat: quiet
    sink.step(StepEvent(3, 5, "RUN pip install -r requirements.lock", "done", 120.0))
    sink.output("after the step")  # no step running: quiet
    lines = out.getvalue().splitlines()
    assert lines[1] == ("    [3/5] RUN pip install -r requirements.lock running 95s: Installing collected packages: "
                        "torch"), lines
    assert len(lines) == 3 and lines[2].startswith("[3/5] RUN pip install"), lines


def test_live_sink_and_choice() -> None:
    out = io.StringIO()
    assert isinstance(sink_for(out), PlainSink)  # StringIO is not a terminal
    sink = LiveSink(out)
    sink.start("building y")
    sink.step(StepEvent(1, 2, "RUN [bold]not markup[/bold]", "start"))
    sink.output("some [red]output")
    sink.step(StepEvent(1, 2, "RUN [bold]not markup[/bold]", "done", 0.5))
    sink.step(StepEvent(2, 2, "RUN false", "error"))
    sink.finish(False, "step 2/2 failed")
    text = out.getvalue()
    assert "RUN [bold]not markup[/bold]" in text and "[1/2]" in text
    assert "FAILED" in text and "step 2/2 failed" in text


def test_vertex_shared_with_a_concurrent_build_does_not_inflate_the_total() -> None:
    """A FROM vertex shared with another build on the engine keeps that build's label ([build 1/5])."""
    from envgen.docker.buildlog import stage_labels

    dockerfile = "FROM debian:bookworm-slim\nRUN a\nRUN b\n"
    assert stage_labels(dockerfile) == {""}
    assert stage_labels("FROM x AS builder\nRUN a\nFROM --platform=linux/amd64 y\nCOPY --from=builder / /\n") \
        == {"builder", "stage-1"}
    events: list[StepEvent] = []
    parser = BuildkitPlainParser(events.append, stage_labels(dockerfile))
    for line in ["#4 [build 1/5] FROM docker.io/library/debian:bookworm-slim", "#4 CACHED",
                 "#5 [2/3] RUN a", "#5 DONE 0.1s", "#6 [3/3] RUN b", "#6 DONE 0.1s"]:
        parser.feed(line)
    assert parser.total() == 3 and len(parser.steps) == 3
    assert [(e.step, e.total) for e in events if e.status != "start"] == [(1, 1), (2, 3), (3, 3)]
