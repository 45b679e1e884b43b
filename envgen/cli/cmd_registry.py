"""Commands for images once built: push, pull, save, load, images, doctor."""

from __future__ import annotations

from pathlib import Path

import typer

from envgen.cli.common import echo_json, gpu_route_option, handles_errors, route_env


def push_cmd(
    profile: str = typer.Argument(..., help="Profile name or path."),
    registry: str | None = typer.Option(None, "--registry", help="Registry (default: user config)."),
) -> None:
    """Publish the profile's validated image and its signed validation."""
    from envgen.pipeline.publish import push
    from envgen.pipeline.session import Session

    typer.echo(push(profile, registry=registry, session=Session()))


def pull_cmd(
    profile: str = typer.Argument(..., help="Profile name or path."),
    registry: str | None = typer.Option(None, "--registry", help="Registry (default: user config)."),
    no_smoke: bool = typer.Option(False, "--no-smoke", help="Do not smoke-test now (run will ask for it)."),
    gpu_route: str | None = gpu_route_option(),
    platform: str | None = typer.Option(None, "--platform", metavar="linux/amd64|linux/arm64",
                                        help="Which image of a multi-platform one (default: this host's); another "
                                             "platform's is verified the same way and tagged for export."),
) -> None:
    """Fetch a prebuilt image (of a multi-platform one, this host's platform); accept it only if a trusted key
    signed a validation of its digest and its labels match the local profile's hash."""
    from envgen.pipeline.publish import pull
    from envgen.pipeline.session import Session

    typer.echo(pull(profile, registry=registry, smoke=not no_smoke, session=Session(route_env(gpu_route)),
                    platform=platform))


def save_cmd(
    target: str = typer.Argument(..., help="Profile name or image reference (a validated image)."),
    out: Path = typer.Option(..., "-o", "--output", metavar="FILE", help="Bundle file to write."),
) -> None:
    """Write a validated image, its validation record and sealed report into one offline bundle."""
    from envgen.pipeline.bundle import save

    typer.echo(save(target, out, echo=typer.echo))


def load_cmd(bundle: Path = typer.Argument(..., help="Bundle file written by `envgen save`.")) -> None:
    """Verify an offline bundle (checksums, a trusted key's signed validation of its image, no foreign names)
    and load its image; its first `envgen run` here smoke-tests it."""
    from envgen.pipeline.bundle import load

    typer.echo(load(bundle, echo=typer.echo))


def images_cmd(
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
    size: str | None = typer.Option(None, "--size", metavar="IMAGE|PROFILE",
                                    help="What one image's bytes are: its layers, largest Python distributions and "
                                         "files, and what a runtime image could leave out (nothing is removed)."),
) -> None:
    """Built and pulled images: profile, hash, size, age, validation status."""
    from envgen.pipeline.image_list import image_rows, rows_table

    if size is not None:
        from envgen.pipeline.sizes import report_text, size_report

        report = size_report(size)
        if as_json:
            echo_json(report)
        else:
            typer.echo(report_text(report))
        return
    rows = image_rows()
    if as_json:
        echo_json(rows)
    else:
        typer.echo(rows_table(rows))


def key_cmd(
    action: str = typer.Argument("show", help="show | export | trust FILE | untrust KEYID"),
    argument: str | None = typer.Argument(None, help="trust: a public key file; untrust: a key id."),
    out: Path | None = typer.Option(None, "-o", "--output", metavar="FILE", help="export: write the key here."),
) -> None:
    """The key envgen signs validations with, and the keys whose validations this host trusts."""
    from envgen.config import load_config
    from envgen.pipeline.keys import key_action

    typer.echo(key_action(action, load_config().state_dir, argument, out))


def doctor_cmd(
    profile: str | None = typer.Option(None, "--profile", help="Judge only this profile."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable report."),
    python: Path | None = typer.Option(None, "--python", metavar="PATH", help="Judge a venv, conda env or "
                                       "interpreter on this host instead: its frameworks' builds, the CUDA libraries "
                                       "it loads, its stack against this GPU and driver."),
) -> None:
    """What this host can run: Docker, NVIDIA runtime, GPUs, driver, and a verdict per profile."""
    if python is not None:
        from envgen.cli.cmd_adopt import doctor_python

        raise typer.Exit(doctor_python(python))
    from envgen.pipeline.doctor import doctor_report

    report = doctor_report(profile)
    typer.echo(report.to_json() if as_json else report.table())


def register(app: typer.Typer) -> None:
    """Add these commands to ``app``, in the order help lists them."""
    app.command("push")(handles_errors(push_cmd))
    app.command("pull")(handles_errors(pull_cmd))
    app.command("save")(handles_errors(save_cmd))
    app.command("load")(handles_errors(load_cmd))
    app.command("images")(handles_errors(images_cmd))
    app.command("key")(handles_errors(key_cmd))
    app.command("doctor")(handles_errors(doctor_cmd))
