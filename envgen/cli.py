"""The `envgen` command line: a thin layer over the library.

Each command parses options, calls one library function and prints its result. Library errors
(`envgen.errors.EnvgenError`) become one line on stderr and the error's exit code. Imports of
the heavy layers happen inside the commands, so `envgen --help` stays instant.
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import typer

from envgen.errors import EnvgenError, InputError

app = typer.Typer(
    name="envgen",
    help="Reproducible, validated GPU deep-learning environments in containers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

F = TypeVar("F", bound=Callable[..., Any])


def _err(message: str) -> None:
    typer.echo(message, err=True)


def handles_errors(func: F) -> F:
    """Map library errors to one line and an exit code; Ctrl-C to exit 130."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except EnvgenError as exc:
            tail = getattr(exc, "tail", "")
            if tail:
                _err(tail.rstrip())
            _err(f"error: {exc.one_line()}")
            raise typer.Exit(exc.exit_code) from None
        except KeyboardInterrupt:
            _err("interrupted: envgen tags an image only after its build and smoke test finish; "
                 "run the command again (the build cache is kept)")
            raise typer.Exit(130) from None
        except Exception as exc:
            if not type(exc).__module__.startswith("docker."):
                raise
            # The Docker SDK's own errors (an engine that answers oddly, a refused request): one line.
            _err(f"error: the Docker engine refused the request: {' '.join(str(exc).split())}")
            raise typer.Exit(1) from None

    return wrapper  # type: ignore[return-value]


def _echo_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, sort_keys=True))


# --- profiles --------------------------------------------------------------------------------


@app.command("profiles")
@handles_errors
def profiles_cmd(as_json: bool = typer.Option(False, "--json", help="Machine-readable output.")) -> None:
    """List built-in and user profiles."""
    from envgen.profile.listing import profile_rows, rows_table

    rows = profile_rows()
    if as_json:
        _echo_json(rows)
    else:
        typer.echo(rows_table(rows))


@app.command("show")
@handles_errors
def show_cmd(profile: str = typer.Argument(..., help="Profile name or path to a YAML file.")) -> None:
    """Print the fully resolved profile (extends merged, defaults filled) as YAML."""
    import yaml

    from envgen.profile import load_profile

    data = load_profile(profile).model_dump(mode="json", exclude={"extends"})
    typer.echo(yaml.safe_dump(data, sort_keys=False), nl=False)


@app.command("check")
@handles_errors
def check_cmd(
    profile: str = typer.Argument(..., help="Profile name or path to a YAML file."),
    gpu: list[str] | None = typer.Option(None, "--gpu", help="Target GPU name (repeatable), e.g. 'H100'."),
    compute_capability: list[str] | None = typer.Option(
        None, "--compute-capability", help="Target compute capability (repeatable), e.g. 8.0."
    ),
    driver: str | None = typer.Option(None, "--driver", help="Host driver version, e.g. 535.104.05."),
    platform: str = typer.Option("linux", "--platform", help="Host platform for driver minimums: linux|windows."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable list of findings."),
) -> None:
    """Check a profile against the compatibility knowledge base before anything is built."""
    from envgen.check import HostSpec, check_profile
    from envgen.check.report import findings_to_json, format_findings
    from envgen.kb import load_kb
    from envgen.profile import load_profile

    if platform not in ("linux", "windows"):
        raise InputError(f"option --platform = {platform!r} is not known", fix="use linux or windows")
    loaded = load_profile(profile)
    host = HostSpec(gpus=[*(gpu or []), *(compute_capability or [])], driver=driver,
                    platform="windows" if platform == "windows" else "linux")
    findings = check_profile(loaded, load_kb(), host)
    if as_json:
        _echo_json(findings_to_json(findings))
    else:
        typer.echo(format_findings(findings))
    if any(f.severity == "error" for f in findings):
        raise typer.Exit(1)


# --- render / export -------------------------------------------------------------------------


@app.command("render")
@handles_errors
def render_cmd(
    profile: str = typer.Argument(..., help="Profile name or path to a YAML file."),
    out: Path | None = typer.Option(None, "-o", "--output", help="Output directory (default: build/<profile>)."),
    wheelhouse: Path | None = typer.Option(None, "--wheelhouse", help="Local wheel directory (pip --find-links)."),
    offline: bool = typer.Option(False, "--offline", help="Install only from the wheelhouse (pip --no-index)."),
    as_json: bool = typer.Option(False, "--json", help="Print the result (dir, tag, hashes) as JSON."),
) -> None:
    """Write a complete build context (Dockerfile, environment files, smoke test) for a profile."""
    from envgen.pipeline.prepare import prepare

    prepared = prepare(profile, out=out, wheelhouse=wheelhouse, offline=offline, check=False)
    result = prepared.render
    if as_json:
        _echo_json({"dir": str(result.dir), "tag": result.tag, "profile_hash": result.profile_hash,
                    "content_hash": result.content_hash, "files": sorted(result.files)})
    else:
        typer.echo(f"rendered {prepared.profile.name} into {result.dir} ({len(result.files)} files)")
        typer.echo(f"image tag: {result.tag}")


@app.command("export")
@handles_errors
def export_cmd(
    profiles: list[str] = typer.Argument(..., help="One or more profiles (bake takes several)."),
    fmt: str = typer.Option(..., "--format", help="devcontainer | compose | apptainer | bake"),
    out: Path = typer.Option(Path("build/exports"), "-o", "--output", help="Directory to write into."),
) -> None:
    """Export profiles for the rest of the ecosystem: VS Code, Compose, Apptainer, buildx bake."""
    from envgen.pipeline.prepare import export_profiles

    for path in export_profiles(profiles, fmt, out):
        typer.echo(f"wrote {path}")


@app.command("lock")
@handles_errors
def lock_cmd(
    profile: str = typer.Argument(..., help="Profile name or path to a YAML file (pip profiles)."),
    wheelhouse: Path | None = typer.Option(None, "--wheelhouse", help="Local wheel directory (pip --find-links)."),
    conda_channel: list[str] = typer.Option([], "--conda-channel",
                                            help="NAME=URL: solve conda channel NAME from URL (conda profiles)."),
) -> None:
    """Pin everything a profile installs into a lock file beside it: <profile>.lock.txt (pip profiles: base
    digest, apt and pip packages, uv) or <profile>.conda.txt (conda profiles: an @EXPLICIT list)."""
    from envgen.errors import InputError
    from envgen.profile import load_profile

    if load_profile(profile).installer == "conda":
        from envgen.pipeline.lock_conda import lock_conda

        urls = {}
        for pair in conda_channel:
            name, sep, url = pair.partition("=")
            if not sep or not name or not url:
                raise InputError(f"--conda-channel {pair!r} is not NAME=URL", fix="e.g. --conda-channel "
                                 "conda-forge=https://mirror.example/conda-forge")
            urls[name] = url
        path, count = lock_conda(profile, channel_urls=urls)
        typer.echo(f"locked {profile}: {count} conda package(s) -> {path}")
        return
    from envgen.pipeline.lock import lock

    typer.echo(lock(profile, wheelhouse=wheelhouse).summary())


# --- build / smoke / run ---------------------------------------------------------------------


@app.command("build")
@handles_errors
def build_cmd(
    profile: str = typer.Argument(..., help="Profile name or path to a YAML file."),
    no_smoke: bool = typer.Option(False, "--no-smoke", help="Skip the smoke test (image stays unvalidated)."),
    push: bool = typer.Option(False, "--push", help="Push to the registry after a passing smoke test."),
    builder: str | None = typer.Option(None, "--builder", help="buildkit | classic (default: detect)."),
    wheelhouse: Path | None = typer.Option(None, "--wheelhouse", help="Local wheel directory (pip --find-links)."),
    offline: bool = typer.Option(False, "--offline", help="Install only from the wheelhouse."),
    registry: str | None = typer.Option(None, "--registry", help="Registry for --push."),
) -> None:
    """Check, render, build, smoke-test and record an image for a profile."""
    from envgen.pipeline.build import build
    from envgen.pipeline.ui import console_sink

    if builder not in (None, "buildkit", "classic"):
        raise InputError(f"option --builder = {builder!r} is not known", fix="use buildkit or classic")
    outcome = build(profile, smoke=not no_smoke, push=push, builder=builder, wheelhouse=wheelhouse,
                    offline=offline, registry=registry, sink=console_sink(), echo=typer.echo)
    typer.echo(outcome.summary())


@app.command("smoke")
@handles_errors
def smoke_cmd(
    target: str = typer.Argument(..., help="Image reference or profile name."),
    gpus: str | None = typer.Option(None, "--gpus", help="all | N | none (default: what the profile needs)"),
    as_json: bool = typer.Option(False, "--json", help="Print the JSON report."),
) -> None:
    """Run the built-in smoke test inside an image and record the result against its image ID."""
    from envgen.pipeline.smoke import report_json, smoke

    report = smoke(target, gpus=gpus)
    typer.echo(report_json(report) if as_json else report.table())
    if not report.passed:
        raise typer.Exit(1)


@app.command("run", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
@handles_errors
def run_cmd(
    ctx: typer.Context,
    target: str = typer.Argument(..., help="Profile name or image reference."),
    gpus: str | None = typer.Option(None, "--gpus", help="all | N | none (default: what the image's profile needs)"),
    workdir: Path | None = typer.Option(None, "--workdir", help="Directory to mount at /workspace (default: .)."),
    force: bool = typer.Option(False, "--force", help="Run even if the image has not passed its smoke test."),
) -> None:
    """Start a container from a validated image, with GPUs, the working directory and your UID."""
    from envgen.pipeline.run import run

    code = run(target, command=list(ctx.args), gpus=gpus, workdir=workdir, force=force,
               out=sys.stdout.write)
    raise typer.Exit(code)


# --- registry / images -----------------------------------------------------------------------


@app.command("push")
@handles_errors
def push_cmd(
    profile: str = typer.Argument(..., help="Profile name or path."),
    registry: str | None = typer.Option(None, "--registry", help="Registry (default: user config)."),
) -> None:
    """Publish the profile's validated image."""
    from envgen.pipeline.registry import push

    typer.echo(push(profile, registry=registry))


@app.command("pull")
@handles_errors
def pull_cmd(
    profile: str = typer.Argument(..., help="Profile name or path."),
    registry: str | None = typer.Option(None, "--registry", help="Registry (default: user config)."),
    no_smoke: bool = typer.Option(False, "--no-smoke", help="Do not smoke-test now (run will ask for it)."),
) -> None:
    """Fetch a prebuilt image; accept it only if its labels match the local profile's hash."""
    from envgen.pipeline.registry import pull

    typer.echo(pull(profile, registry=registry, smoke=not no_smoke))


@app.command("images")
@handles_errors
def images_cmd(as_json: bool = typer.Option(False, "--json", help="Machine-readable output.")) -> None:
    """Built and pulled images: profile, hash, size, age, validation status."""
    from envgen.pipeline.images import image_rows, rows_table

    rows = image_rows()
    if as_json:
        _echo_json(rows)
    else:
        typer.echo(rows_table(rows))


@app.command("doctor")
@handles_errors
def doctor_cmd(
    profile: str | None = typer.Option(None, "--profile", help="Judge only this profile."),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable report."),
) -> None:
    """What this host can run: Docker, NVIDIA runtime, GPUs, driver, and a verdict per profile."""
    from envgen.pipeline.doctor import doctor_report

    report = doctor_report(profile)
    typer.echo(report.to_json() if as_json else report.table())


def main() -> None:
    app()
