"""The `envgen` command line: a thin layer over the library.

Each command parses options, calls one library function and prints its result. Library errors
(`envgen.errors.EnvgenError`) become one line on stderr and the error's exit code. Imports of
the heavy layers happen inside the commands, so `envgen --help` stays instant.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import typer

from envgen.cli.check import HELP as CHECK_HELP
from envgen.cli.check import PARAMS as CHECK_PARAMS
from envgen.cli.errors import error_lines
from envgen.cli.typed import typer_function
from envgen.errors import InputError

app = typer.Typer(
    name="envgen",
    help="Reproducible, validated GPU deep-learning environments in containers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # plain click help: Typer's rich help costs ~70 ms of imports (rich, markdown-it) on every `--help`
    rich_markup_mode=None,
)

F = TypeVar("F", bound=Callable[..., Any])


def _err(message: str) -> None:
    typer.echo(message, err=True)


def handles_errors(func: F) -> F:
    """Map library errors to one line and an exit code; Ctrl-C to exit 130 (``envgen.cli.errors``)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (Exception, KeyboardInterrupt) as exc:
            mapped = error_lines(exc)
            if mapped is None:
                raise
            lines, code = mapped
            for line in lines:
                _err(line)
            raise typer.Exit(code) from None

    return wrapper  # type: ignore[return-value]


def _route_env(gpu_route: str | None) -> dict[str, str] | None:
    """--gpu-route for one command: the environment with $ENVGEN_GPU_ROUTE set (None: unchanged)."""
    if gpu_route is None:
        return None
    from envgen.config import GPU_ROUTE_ENV, check_gpu_route

    return {**os.environ, GPU_ROUTE_ENV: check_gpu_route(gpu_route, "option --gpu-route")}


def _echo_json(data: Any) -> None:
    import json

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
    from envgen.profile.loader import profile_notes

    loaded = load_profile(profile)
    notes = profile_notes(loaded)
    for line in notes.defaults if notes else []:
        typer.echo(f"# default applied: {line}")
    for line in notes.lifted if notes else []:
        typer.echo(f"# framework moved: {line}")
    data = loaded.model_dump(mode="json", exclude={"extends"})
    typer.echo(yaml.safe_dump(data, sort_keys=False), nl=False)


@app.command("schema")
@handles_errors
def schema_cmd() -> None:
    """Print the JSON Schema of the profile format (generated from envgen's typed model)."""
    from envgen.profile.schema import schema_text

    typer.echo(schema_text(), nl=False)


def _check(**values: Any) -> None:
    from envgen.cli.check import check

    code = check(**values, echo=typer.echo)
    if code:
        raise typer.Exit(code)


app.command("check")(handles_errors(typer_function(CHECK_PARAMS, _check, CHECK_HELP)))


@app.command("suggest")
@handles_errors
def suggest_cmd(
    gpu: str | None = typer.Option(None, "--gpu", help="Target GPU name, e.g. 'RTX 3090'."),
    compute_capability: str | None = typer.Option(
        None, "--compute-capability", help="Or its compute capability, e.g. 8.6."
    ),
    frameworks: str = typer.Option(
        ..., "--frameworks", help="tensorflow,pytorch (optionally pinned: tensorflow==2.15)."
    ),
    driver: str | None = typer.Option(None, "--driver", help="Host driver version, e.g. 470.82.01."),
    python: str | None = typer.Option(None, "--python", help="Python X.Y the environment must have."),
    prefer: str = typer.Option(
        "newest", "--prefer",
        help="newest (default) | lts (settled releases: not the newest series, patched; then the oldest driver).",
    ),
    out: Path | None = typer.Option(
        None, "-o", "--output", help="Write the profile here (two profiles: FILE-tensorflow.yaml, FILE-pytorch.yaml)."
    ),
) -> None:
    """Find the newest stack the knowledge base says works for a GPU and driver, and write it as a profile."""
    from envgen.check.findings import parse_driver
    from envgen.kb.cache import cache_dir, load_kb_cached
    from envgen.suggest.recipes import load_recipes
    from envgen.suggest.search import Request, parse_frameworks, suggest
    from envgen.suggest.write import outputs, summary

    if (gpu is None) == (compute_capability is None):
        raise InputError("give exactly one of --gpu and --compute-capability", fix="for example --gpu 'RTX 3090'")
    if prefer not in ("newest", "lts"):
        raise InputError(f"option --prefer = {prefer!r} is not known", fix="use newest or lts")
    if python is not None and not (len(python.split(".")) in (2, 3) and all(p.isdigit() for p in python.split("."))):
        raise InputError(f"option --python = {python!r} is not a Python version", fix="write it as 3.10")
    request = Request(gpu=gpu or compute_capability or "", frameworks=parse_frameworks(frameworks),
                      driver=parse_driver(driver), python=python,
                      prefer="lts" if prefer == "lts" else "newest")
    result = suggest(load_kb_cached(cache_dir(os.environ)), load_recipes(), request)
    written = []
    for path, text in outputs(result, out):
        if path is None:
            typer.echo(("---\n" if not result.single else "") + text, nl=False)
        else:
            from envgen.files import USER_FILE, write_atomically

            write_atomically(path, text, USER_FILE)
            written.append(path)
    _err(summary(result, written))


@app.command("init")
@handles_errors
def init_cmd(
    out: Path | None = typer.Option(None, "-o", "--output", help="Write the profile here (its name is the file's)."),
    gpu: str | None = typer.Option(None, "--gpu", help="Target GPU (a GPU profile, as envgen suggest finds it); "
                                                       "left out: a CPU profile."),
    frameworks: str | None = typer.Option(None, "--frameworks", help="tensorflow,pytorch (optionally pinned); "
                                                                     "left out: pytorch with --gpu, none without."),
    python: str | None = typer.Option(None, "--python", help="Python X.Y (CPU default 3.11)."),
    driver: str | None = typer.Option(None, "--driver", help="Host driver version (with --gpu)."),
    force: bool = typer.Option(False, "--force", help="Replace an existing file."),
) -> None:
    """Write a first profile from a few options (no questions): it passes `envgen check`."""
    from envgen.check.findings import parse_driver
    from envgen.kb.cache import cache_dir, load_kb_cached
    from envgen.suggest.init import InitRequest, init_profile
    from envgen.suggest.recipes import load_recipes
    from envgen.suggest.search import parse_frameworks
    from envgen.suggest.write import file_profile_name

    if out is not None and out.exists() and not force:
        raise InputError(f"option -o = {str(out)!r}: the file exists", fix="choose another file, or add --force")
    if python is not None and not (len(python.split(".")) in (2, 3) and all(p.isdigit() for p in python.split("."))):
        raise InputError(f"option --python = {python!r} is not a Python version", fix="write it as 3.11")
    request = InitRequest(name=file_profile_name(out) if out else "my-profile",
                          frameworks=parse_frameworks(frameworks) if frameworks else {}, gpu=gpu,
                          driver=parse_driver(driver), python=python)
    text = init_profile(load_kb_cached(cache_dir(os.environ)), load_recipes(), request)
    if out is None:
        typer.echo(text, nl=False)
        return
    from envgen.files import USER_FILE, write_atomically

    write_atomically(out, text, USER_FILE)
    _err(f"wrote {out} (profile {request.name}); next: envgen check {out}")


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
        from envgen.render.core import docker_build_command

        typer.echo(f"build it with: {docker_build_command(result)}")


@app.command("export")
@handles_errors
def export_cmd(
    profiles: list[str] = typer.Argument(..., help="One or more profiles (bake takes several)."),
    fmt: str = typer.Option(..., "--format", help="devcontainer | compose | apptainer | bake | k8s | slurm"),
    out: Path = typer.Option(Path("build/exports"), "-o", "--output", help="Directory to write into."),
    gpus: int = typer.Option(1, "--gpus", min=1, help="GPUs a k8s Job or Slurm job asks for (GPU profiles)."),
    gpu_route: str | None = typer.Option(None, "--gpu-route", help="runtime | cdi: how a compose service or dev "
                                         "container asks for GPUs (--gpus, or --device nvidia.com/gpu=all)."),
    registry: str | None = typer.Option(None, "--registry", metavar="REGISTRY",
                                        help="Where you push the images (host[:port]/path): what a k8s Job, an "
                                             "sbatch script or --bootstrap docker pulls (default: config registry)."),
    bootstrap: str = typer.Option("docker-daemon", "--bootstrap", metavar="docker-daemon|docker",
                                  help="Apptainer: build from the image on this host (docker-daemon) or from "
                                       "the registry (docker)."),
) -> None:
    """Export profiles for the rest of the ecosystem: VS Code, Compose, Apptainer, buildx bake,
    Kubernetes Jobs, Slurm batch scripts."""
    from envgen.pipeline.prepare import export_profiles

    if gpu_route is not None and gpu_route not in ("runtime", "cdi"):
        raise InputError(f"option --gpu-route = {gpu_route!r} is not valid for an export", fix="use runtime or cdi")
    if bootstrap not in ("docker-daemon", "docker"):
        raise InputError(f"option --bootstrap = {bootstrap!r} is not valid", fix="use docker-daemon or docker")
    for path in export_profiles(profiles, fmt, out, gpus=gpus, gpu_route=gpu_route, registry=registry,
                                bootstrap=bootstrap):
        typer.echo(f"wrote {path}")
    from envgen.pipeline.prepare import unbuilt_images

    for name, tag in unbuilt_images(profiles, fmt):  # the export names an image this host does not hold yet
        typer.echo(f"note: {tag} is not built here yet: run `envgen build {name}` before opening it", err=True)


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
        from envgen.lock.lock_conda import lock_conda

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
    from envgen.lock.lock import lock

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
    no_check: bool = typer.Option(False, "--no-check", help="Build even if the compatibility check finds "
                                  "errors (prints them as warnings); the smoke test still decides."),
    gpu_route: str | None = typer.Option(None, "--gpu-route", help="auto | runtime | cdi: how GPUs reach the "
                                         "container (default: config gpu_route, else auto)."),
) -> None:
    """Check, render, build, smoke-test and record an image for a profile."""
    from envgen.pipeline.build import build
    from envgen.pipeline.ui import console_sink

    if builder not in (None, "buildkit", "classic"):
        raise InputError(f"option --builder = {builder!r} is not known", fix="use buildkit or classic")
    outcome = build(profile, smoke=not no_smoke, push=push, builder=builder, wheelhouse=wheelhouse,
                    offline=offline, registry=registry, sink=console_sink(), echo=typer.echo,
                    check=not no_check, env=_route_env(gpu_route))
    typer.echo(outcome.summary())


@app.command("smoke")
@handles_errors
def smoke_cmd(
    target: str = typer.Argument(..., help="Image reference or profile name."),
    gpus: str | None = typer.Option(None, "--gpus", help="all | N | none (default: what the profile needs)"),
    as_json: bool = typer.Option(False, "--json", help="Print the JSON report."),
    tier: str | None = typer.Option(None, "--tier", help="libraries | gpu | all (default: what this host can "
                                    "run: the library tier alone where no GPU can be handed out)"),
    gpu_route: str | None = typer.Option(None, "--gpu-route", help="auto | runtime | cdi: how GPUs reach the "
                                         "container (default: config gpu_route, else auto)."),
) -> None:
    """Run the built-in smoke test inside an image and record the result against its image ID."""
    from envgen.pipeline.smoke import report_json, smoke

    report = smoke(target, gpus=gpus, tier=tier, env=_route_env(gpu_route))
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
    gpu_route: str | None = typer.Option(None, "--gpu-route", help="auto | runtime | cdi: how GPUs reach the "
                                         "container (default: config gpu_route, else auto)."),
) -> None:
    """Start a container from a validated image, with GPUs, the working directory and your UID."""
    from envgen.pipeline.run import run

    code = run(target, command=list(ctx.args), gpus=gpus, workdir=workdir, force=force,
               out=sys.stdout.write, env=_route_env(gpu_route))
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
    gpu_route: str | None = typer.Option(None, "--gpu-route", help="auto | runtime | cdi: how GPUs reach the "
                                         "container (default: config gpu_route, else auto)."),
) -> None:
    """Fetch a prebuilt image; accept it only if its labels match the local profile's hash."""
    from envgen.pipeline.registry import pull

    typer.echo(pull(profile, registry=registry, smoke=not no_smoke, env=_route_env(gpu_route)))


@app.command("save")
@handles_errors
def save_cmd(
    target: str = typer.Argument(..., help="Profile name or image reference (a validated image)."),
    out: Path = typer.Option(..., "-o", "--output", help="Bundle file to write."),
) -> None:
    """Write a validated image, its validation record and sealed report into one offline bundle."""
    from envgen.pipeline.bundle import save

    typer.echo(save(target, out, echo=typer.echo))


@app.command("load")
@handles_errors
def load_cmd(bundle: Path = typer.Argument(..., help="Bundle file written by `envgen save`.")) -> None:
    """Verify an offline bundle (checksums, labels) and load its image; it stays 'sealed, not
    validated on this host' until `envgen smoke` or the first `envgen run` passes here."""
    from envgen.pipeline.bundle import load

    typer.echo(load(bundle, echo=typer.echo))


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


# What help shows for a value (Typer's plain help would show <str>, <list[str]>, <path>): by the parameter's name,
# else by its type.
_METAVARS = {"profile": "PROFILE", "profiles": "PROFILE", "gpu": "GPU", "compute_capability": "X.Y",
             "driver": "VERSION", "out": "DIR", "wheelhouse": "DIR", "workdir": "DIR", "builder": "buildkit|classic",
             "fmt": "FORMAT", "gpus": "N", "python": "X.Y", "tier": "TIER", "bundle": "FILE", "image": "IMAGE",
             "conda_channel": "CHANNEL", "gpu_route": "runtime|cdi", "command": "COMMAND"}
_TYPE_METAVARS = {"str": "TEXT", "Path": "PATH", "int": "N", "float": "NUMBER"}


def _version(value: bool) -> None:
    if value:
        from envgen import __version__

        typer.echo(f"envgen {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print envgen's version and exit.")) -> None:
    """Reproducible, validated GPU deep-learning environments in containers."""


def command() -> Any:
    """The click command behind ``app``, every value's metavariable named (``--gpu GPU``, ``PROFILE``)."""
    root = typer.main.get_command(app)
    for sub in [root, *getattr(root, "commands", {}).values()]:
        for param in sub.params:
            if param.metavar is None and not getattr(param, "is_flag", False):
                bare = param.bare_type() if callable(getattr(param, "bare_type", None)) else ""
                param.metavar = _METAVARS.get(param.name or "") or _TYPE_METAVARS.get(str(bare), "VALUE")
            if getattr(param, "param_type_name", "") == "argument":  # the name says it: no "<str>" after it
                param.display_type_rich = lambda ctx: None
    return root
