"""The progress sink for the terminal: live steps and a bar on a TTY, plain lines otherwise."""

from __future__ import annotations

import sys

from envgen.docker import ProgressSink, sink_for


def console_sink() -> ProgressSink:
    return sink_for(sys.stderr)
