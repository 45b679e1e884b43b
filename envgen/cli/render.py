"""`envgen render`: its parameters (written once, ``envgen.cli.spec``), what it does, and the fast path that runs
it without starting Typer (Typer parses its options through pydantic: about a fifth of a render's start-up)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from envgen.cli.spec import Param, argument, echo, option, run_parsed, switch

Echo = Callable[..., None]

HELP = "Write a complete build context (Dockerfile, environment files, smoke test) for a profile."
PARAMS: tuple[Param, ...] = (
    argument("profile", "Profile name or path to a YAML file."),
    option("out", "--output", "Output directory (default: build/<profile>).", aliases=("-o",)),
    option("wheelhouse", "--wheelhouse", "Local wheel directory (pip --find-links)."),
    switch("offline", "--offline", "Install only from the wheelhouse (pip --no-index)."),
    switch("as_json", "--json", "Print the result (dir, tag, hashes) as JSON."),
)


def render(profile: str, out: str | None, wheelhouse: str | None, offline: bool, as_json: bool,
           echo: Echo = echo) -> int:
    """Write ``profile``'s build context; print where, its tag and the plain `docker build` of it."""
    from envgen.pipeline.prepare import prepare
    from envgen.pipeline.session import Session

    prepared = prepare(profile, out=Path(out) if out else None, wheelhouse=Path(wheelhouse) if wheelhouse else None,
                       offline=offline, check=False, session=Session())
    result = prepared.render
    for note in prepared.notes:
        echo(note, err=True)
    if as_json:
        import json

        echo(json.dumps({"dir": str(result.dir), "tag": result.tag, "profile_hash": result.profile_hash,
                         "content_hash": result.content_hash, "files": sorted(result.files)}, indent=2, sort_keys=True))
    else:
        import os

        from envgen.cache import cache_dir
        from envgen.docker.builder import detect_builder  # not envgen.docker: its builds, runs and registry code
        from envgen.render.core import docker_build_command

        echo(f"rendered {prepared.profile.name} into {result.dir} ({len(result.files)} files)")
        echo(f"image tag: {result.tag}")
        line, gives_up = docker_build_command(result, detect_builder(cache=cache_dir(os.environ)))
        echo(f"build it with: {line}")
        if gives_up:
            echo(f"note: {gives_up}")
    from envgen.pipeline.prepare import check_notes

    for note in check_notes(profile, prepared.profile, prepared.findings):
        echo(note, err=True)
    return 0


def fast(argv: Sequence[str]) -> int | None:
    """Run `envgen render ARGV` without Typer; None when the command line is not a plain, well-formed one."""
    return run_parsed(PARAMS, render, argv)
