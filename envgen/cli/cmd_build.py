"""Commands that build and start containers: build, smoke, run."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from envgen.cli.common import gpu_route_option, handles_errors, route_env
from envgen.errors import InputError
from envgen.layout import WORKSPACE


def build_cmd(
    profile: str = typer.Argument(..., help="Profile name or path to a YAML file."),
    no_smoke: bool = typer.Option(False, "--no-smoke", help="Skip the smoke test (image stays unvalidated)."),
    push: bool = typer.Option(False, "--push", help="Push to the registry after a passing smoke test."),
    builder: str | None = typer.Option(None, "--builder", help="buildkit | classic (default: detect)."),
    wheelhouse: Path | None = typer.Option(None, "--wheelhouse", help="Local wheel directory (pip --find-links)."),
    offline: bool = typer.Option(False, "--offline", help="Install only from the wheelhouse."),
    registry: str | None = typer.Option(None, "--registry", help="Registry for --push."),
    no_check: bool = typer.Option(False, "--no-check", help="Build even if the compatibility check finds "
                                  "errors (prints them as warnings); the smoke test still decides."),
    compression: str = typer.Option("gzip", "--compression", metavar="gzip|zstd",
                                    help="The layers' compression: gzip (every engine pulls it) or zstd (smaller, "
                                         "faster pulls; BuildKit on Docker >= 26, pulled by Docker >= 23)."),
    gpu_route: str | None = gpu_route_option(),
) -> None:
    """Check, render, build, smoke-test and record an image for a profile."""
    from envgen.pipeline.build import build
    from envgen.pipeline.session import Session
    from envgen.pipeline.ui import console_sink

    if builder not in (None, "buildkit", "classic"):
        raise InputError(f"option --builder = {builder!r} is not known", fix="use buildkit or classic")
    from envgen.pipeline import platforms as several

    wanted = several.several_platforms(profile, route_env(gpu_route))
    if wanted is not None:  # one manifest list in the registry (--push is implied), each platform smoke-tested
        several.refuse_options(builder=builder, wheelhouse=wheelhouse, offline=offline, compression=compression)
        typer.echo(several.build_platforms(profile, wanted, registry=registry, smoke=not no_smoke, sink=console_sink(),
                                           echo=typer.echo, env=route_env(gpu_route), check=not no_check,
                                           session=Session(route_env(gpu_route))).summary())
        return
    outcome = build(profile, smoke=not no_smoke, push=push, builder=builder, wheelhouse=wheelhouse,
                    offline=offline, registry=registry, sink=console_sink(), echo=typer.echo,
                    check=not no_check, session=Session(route_env(gpu_route)), compression=compression)
    typer.echo(outcome.summary())


def smoke_cmd(
    target: str = typer.Argument(..., metavar="IMAGE|PROFILE", help="Image reference or profile name."),
    gpus: str | None = typer.Option(None, "--gpus", help="all | N | none (default: what the profile needs)"),
    as_json: bool = typer.Option(False, "--json", help="Print the JSON report."),
    tier: str | None = typer.Option(None, "--tier", help="libraries | gpu | all (default: what this host can "
                                    "run: the library tier alone where no GPU can be handed out)"),
    gpu_route: str | None = gpu_route_option(),
    python: str | None = typer.Option(None, "--python", metavar="PATH",
                                      help="An image envgen did not build: the interpreter to probe with (default: "
                                           "python3/python on PATH, /opt/conda, a venv)."),
) -> None:
    """Run the built-in smoke test inside an image (any image with a Python: the probe is copied into a container
    that is never committed) and record the result against its image ID."""
    from envgen.pipeline.session import Session
    from envgen.pipeline.smoke import report_json
    from envgen.pipeline.smoke_foreign import smoke_any

    env = route_env(gpu_route)
    report = smoke_any(target, gpus=gpus, tier=tier, env=env, python=python, session=Session(env))
    typer.echo(report_json(report) if as_json else report.table())
    if not report.passed:
        raise typer.Exit(1)


def run_cmd(
    ctx: typer.Context,
    target: str = typer.Argument(..., metavar="PROFILE|IMAGE [--] COMMAND...",
                                 help="Profile name or image reference, then the command to run in the container."),
    gpus: str | None = typer.Option(None, "--gpus", help="all | N | none (default: what the image's profile needs)"),
    workdir: Path | None = typer.Option(None, "--workdir", help=f"Directory to mount at {WORKSPACE} (default: .)."),
    force: bool = typer.Option(False, "--force", help="Run even if the image has not passed its smoke test."),
    as_root: bool = typer.Option(False, "--as-root", help="Run as uid 0 when envgen runs as root (default: the "
                                                          "image's own user)."),
    gpu_route: str | None = gpu_route_option(),
) -> None:
    """Start a container from a validated image, with GPUs, the working directory and your UID."""
    from envgen.pipeline.run import run
    from envgen.pipeline.session import Session

    code = run(target, command=list(ctx.args), gpus=gpus, workdir=workdir, force=force,
               out=sys.stdout.write, as_root=as_root, session=Session(route_env(gpu_route)))
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    """Add these commands to ``app``, in the order help lists them."""
    app.command("build")(handles_errors(build_cmd))
    app.command("smoke")(handles_errors(smoke_cmd))
    extra_args = {"allow_extra_args": True, "ignore_unknown_options": True}  # run passes COMMAND through
    app.command("run", context_settings=extra_args)(handles_errors(run_cmd))
