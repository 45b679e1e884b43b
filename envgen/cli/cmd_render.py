"""Commands that write build contexts and files: render, export, lock."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import typer

from envgen.cli.common import handles_errors
from envgen.cli.render import HELP as RENDER_HELP
from envgen.cli.render import PARAMS as RENDER_PARAMS
from envgen.cli.typed import typer_function
from envgen.errors import InputError


def _render(**values: Any) -> None:
    from envgen.cli.render import render

    render(**values, echo=typer.echo)


def export_cmd(
    profiles: list[str] = typer.Argument(..., help="One or more profiles (bake takes several)."),
    fmt: str = typer.Option(..., "--format", help="devcontainer | compose | apptainer | bake | k8s | slurm"),
    out: Path = typer.Option(Path("build/exports"), "-o", "--output", help="Directory to write into."),
    gpus: int = typer.Option(1, "--gpus", min=1, help="GPUs a k8s Job or Slurm job asks for (GPU profiles)."),
    gpu_route: str | None = typer.Option(None, "--gpu-route", help="runtime | cdi: how a compose service or dev "
                                         "container asks for GPUs (--gpus, or --device nvidia.com/gpu=all)."),
    registry: str | None = typer.Option(None, "--registry", metavar="REGISTRY",
                                        help="Where you push the images (host[:port]/path): what a k8s Job, an "
                                             "sbatch script or --bootstrap docker pulls (default: the config's "
                                             "registry; none: the local image)."),
    bootstrap: str = typer.Option("docker-daemon", "--bootstrap", metavar="docker-daemon|docker",
                                  help="Apptainer: build from the image on this host (docker-daemon) or from "
                                       "the registry (docker)."),
    force: bool = typer.Option(False, "--force", help="Replace export files that exist with other contents."),
    runtime: str = typer.Option("apptainer", "--runtime", metavar="apptainer|docker|podman|pyxis",
                                help="Slurm: what runs the image on the node (Apptainer's SIF, or the registry "
                                     "image with Docker, Podman or pyxis/enroot: srun --container-image)."),
    array: str | None = typer.Option(None, "--array", metavar="INDEXES",
                                     help="Slurm: run the job as an array (sbatch --array: 0-9, 1,3,5)."),
) -> None:
    """Export profiles for the rest of the ecosystem: VS Code, Compose, Apptainer, buildx bake,
    Kubernetes Jobs, Slurm batch scripts."""
    from envgen.pipeline.prepare import export_planned, registry_note
    from envgen.pipeline.session import Session

    if gpu_route is not None and gpu_route not in ("runtime", "cdi"):
        raise InputError(f"option --gpu-route = {gpu_route!r} is not valid for an export", fix="use runtime or cdi")
    if bootstrap not in ("docker-daemon", "docker"):
        raise InputError(f"option --bootstrap = {bootstrap!r} is not valid", fix="use docker-daemon or docker")
    if runtime not in ("apptainer", "docker", "podman", "pyxis"):
        raise InputError(f"option --runtime = {runtime!r} is not valid", fix="use apptainer, docker, podman or pyxis")
    if fmt != "slurm" and (runtime != "apptainer" or array is not None):
        raise InputError(f"options --runtime and --array are for --format slurm, not {fmt}",
                         fix="drop them, or export --format slurm")
    session = Session()
    exported = export_planned(profiles, fmt, out, session, gpus=gpus, gpu_route=gpu_route, registry=registry,
                              bootstrap=bootstrap, force=force, runtime=runtime, array=array)
    for path in exported.paths:
        typer.echo(f"wrote {path}")
    said = registry_note(profiles, fmt, registry, session=session)
    for note in [*exported.notes, *([said] if said else [])]:
        typer.echo(note, err=True)

    for name, tag in exported.unbuilt:  # the export names an image this host does not hold yet
        typer.echo(f"note: {tag} is not built here yet: run `envgen build {shlex.quote(name)}` before opening it",
                   err=True)


def lock_cmd(
    profile: str = typer.Argument(..., help="Profile name or path to a YAML file (pip profiles)."),
    wheelhouse: Path | None = typer.Option(None, "--wheelhouse", help="Local wheel directory (pip --find-links)."),
    conda_channel: list[str] = typer.Option([], "--conda-channel",
                                            help="NAME=URL: solve conda channel NAME from URL (conda profiles)."),
    platform: list[str] = typer.Option([], "--platform", metavar="linux/amd64|linux/arm64",
                                       help="Lock this platform of the profile (repeatable; default: all of its "
                                            "platforms). Its main platform's set is always locked (pip profiles)."),
) -> None:
    """Pin everything a profile installs into a lock file beside it: <profile>.lock.txt (pip profiles: base
    digest, apt and pip packages, uv) or <profile>.conda.txt (conda profiles: an @EXPLICIT list)."""
    from envgen.lock.command import lock_profile
    from envgen.pipeline.session import Session

    typer.echo(lock_profile(profile, kb=Session().kb, wheelhouse=wheelhouse, channels=conda_channel,
                            platforms=platform))


def register(app: typer.Typer) -> None:
    """Add these commands to ``app``, in the order help lists them."""
    app.command("render")(handles_errors(typer_function(RENDER_PARAMS, _render, RENDER_HELP)))
    app.command("export")(handles_errors(export_cmd))
    app.command("lock")(handles_errors(lock_cmd))
