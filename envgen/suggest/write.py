"""The profile(s) `envgen suggest` found, as commented YAML, and the one-screen summary."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import yaml

from envgen.suggest.search import Suggestion, SuggestResult


def file_profile_name(path: Path) -> str:
    """The profile name a file is found by (its stem), made a valid name: lower case, letters, digits, . _ -."""
    name = re.sub(r"[^a-z0-9._-]+", "-", path.stem.lower()).strip("-._")
    # between letters and digits a name holds one '.', one '_', '__' or dashes: any other run becomes one '-'
    name = re.sub(r"[._-]{2,}", lambda m: m.group() if m.group() == "__" or set(m.group()) == {"-"} else "-", name)
    return name[:63].rstrip("-._") or "suggested"


def profile_text(result: SuggestResult, s: Suggestion, name: str | None = None, via: str | None = None) -> str:
    """The profile of ``s`` as commented YAML; ``via``: the command that asked suggest for it (`envgen init`)."""
    req = result.request
    host = f"--gpu {req.gpu!r}" + (f" --driver {req.driver}" if req.driver else "")
    command = (f"envgen suggest {host} --frameworks {','.join(result.request.frameworks)}"
               f"{' --python ' + req.python if req.python else ''} --prefer {req.prefer}")
    lines = [f"# Written by `{via}` ({command})." if via else f"# Written by `{command}`.",
             f"# {result.gpu_label}: compute capability {result.cc}. Every choice below and the rows it rests on:"]
    for comment in s.comments:
        lines += textwrap.wrap(comment, width=116, initial_indent="# - ", subsequent_indent="#   ")
    warnings = [f for f in s.findings if f.severity == "warning"]
    for f in warnings:
        lines += textwrap.wrap(f"check warning {f.code}: {f.message}", width=116, initial_indent="# ! ",
                               subsequent_indent="#   ")
    lines.append(f"# Verify: envgen check <this file> {host}")
    profile = {**s.profile, "name": name} if name else s.profile  # a file's profile is found by the file's name
    body = yaml.safe_dump(profile, sort_keys=False, default_flow_style=None, width=120)
    return "\n".join(lines) + "\n" + body


def summary(result: SuggestResult, written: list[Path]) -> str:
    out = []
    if result.single:
        s = result.chosen[0]
        out.append(f"{result.gpu_label} (compute capability {result.cc}): {s.candidate.label()}")
        if result.newer_with_warnings is not None:
            w = result.newer_with_warnings
            first = next(f for f in w.findings if f.severity == "warning")
            out.append(f"newer, with warnings: {w.candidate.label()} ({first.code}: {first.message})")
    else:
        out.append(f"no single image can hold {' and '.join(result.request.frameworks)} for {result.gpu_label}: "
                   f"{result.split_reason}")
        out.append("two profiles instead: " + "; ".join(s.candidate.label() for s in result.chosen))
    out += [f"wrote {p}" for p in written]
    out.append(f"({result.checked} candidate stacks checked)")
    return "\n".join(out)


def outputs(result: SuggestResult, out: Path | None) -> list[tuple[Path | None, str]]:
    """(path or None for stdout, text) per profile; two profiles go to FILE-tensorflow.yaml / FILE-pytorch.yaml."""
    if out is None:
        return [(None, profile_text(result, s)) for s in result.chosen]
    if result.single:
        return [(out, profile_text(result, result.chosen[0], file_profile_name(out)))]
    names = ["tensorflow" if s.candidate.tf else "pytorch" for s in result.chosen]
    paths = [out.with_name(f"{out.stem}-{n}{out.suffix or '.yaml'}") for n in names]
    return [(p, profile_text(result, s, file_profile_name(p))) for p, s in zip(paths, result.chosen, strict=True)]
