"""Commands that read profiles and the knowledge base: profiles, show, schema, check (its body and parameters:
``envgen.cli.check``), suggest, init."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from envgen.cli.check import HELP as CHECK_HELP
from envgen.cli.check import PARAMS as CHECK_PARAMS
from envgen.cli.common import echo_json, err, handles_errors
from envgen.cli.typed import typer_function
from envgen.errors import InputError


def profiles_cmd(as_json: bool = typer.Option(False, "--json", help="Machine-readable output.")) -> None:
    """List built-in and user profiles."""
    from envgen.profile.listing import profile_rows, rows_table

    rows = profile_rows()
    if as_json:
        echo_json(rows)
    else:
        typer.echo(rows_table(rows))


def show_cmd(profile: str = typer.Argument(..., help="Profile name or path to a YAML file."),
             platform: str | None = typer.Option(None, "--platform", metavar="linux/amd64|linux/arm64",
                                                 help="Show what this platform installs (default: each of the "
                                                      "profile's platforms, when it names others than linux/amd64).")
             ) -> None:
    """Print the fully resolved profile (extends merged, defaults filled) as YAML; per platform, what each installs."""
    import yaml

    from envgen.pipeline.session import Session
    from envgen.plan.image import plan_image
    from envgen.profile import load_profile
    from envgen.profile.loader import profile_notes

    kb = Session().kb  # the cache `check` reads
    loaded = load_profile(profile, kb=kb)
    plan = plan_image(loaded, kb)  # the defaults the knowledge base gives (a torch tag's CUDA) are planning's
    notes = profile_notes(loaded)
    for line in [*(notes.defaults if notes else []), *plan.defaults]:
        typer.echo(f"# default applied: {line}")
    for line in notes.lifted if notes else []:
        typer.echo(f"# framework moved: {line}")
    for line in plan.notes:  # choices the plan made that the profile did not give (CUDA once: plan.cuda_once)
        typer.echo(f"# plan: {line}")
    from envgen.plan.platforms import platform_lines
    from envgen.profile.values import PLATFORMS

    if platform is not None and platform not in PLATFORMS:
        raise InputError(f"option --platform = {platform!r} is not known", fix=f"use {' or '.join(PLATFORMS)}")
    shown = [platform] if platform else [] if plan.profile.platforms == ["linux/amd64"] else plan.profile.platforms
    for line in platform_lines(plan, kb, list(shown)):
        typer.echo(f"# platform {line}")
    data = plan.profile.model_dump(mode="json", exclude={"extends"})
    typer.echo(yaml.safe_dump(data, sort_keys=False), nl=False)


def schema_cmd() -> None:
    """Print the JSON Schema of the profile format (generated from envgen's typed model)."""
    from envgen.profile.schema import schema_text

    typer.echo(schema_text(), nl=False)


def _check(**values: Any) -> None:
    from envgen.cli.check import check

    code = check(**values, echo=typer.echo)
    if code:
        raise typer.Exit(code)




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
        None, "-o", "--output", metavar="FILE",
        help="Write the profile here (two profiles: FILE-tensorflow.yaml, FILE-pytorch.yaml)."
    ),
) -> None:
    """Find the newest stack the knowledge base says works for a GPU and driver, and write it as a profile."""
    from envgen.check.findings import parse_driver
    from envgen.pipeline.session import Session
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
    result = suggest(Session().kb, load_recipes(), request)
    written = []
    for path, text in outputs(result, out):
        if path is None:
            typer.echo(("---\n" if not result.single else "") + text, nl=False)
        else:
            from envgen.files import USER_FILE, write_atomically

            write_atomically(path, text, USER_FILE)
            written.append(path)
    err(summary(result, written))


def _refuse_init_options(out: Path | None, force: bool, python: str | None) -> None:
    if out is not None and out.exists() and not force:
        raise InputError(f"option -o = {str(out)!r}: the file exists", fix="choose another file, or add --force")
    if python is not None and not (len(python.split(".")) in (2, 3) and all(p.isdigit() for p in python.split("."))):
        raise InputError(f"option --python = {python!r} is not a Python version", fix="write it as 3.11")


def init_cmd(
    out: Path | None = typer.Option(None, "-o", "--output", metavar="FILE",
                                    help="Write the profile here (its name is the file's)."),
    gpu: str | None = typer.Option(None, "--gpu", help="Target GPU (a GPU profile, as envgen suggest finds it); "
                                                       "left out: a CPU profile."),
    frameworks: str | None = typer.Option(None, "--frameworks", help="tensorflow,pytorch (optionally pinned); "
                                                                     "left out: pytorch with --gpu, none without."),
    python: str | None = typer.Option(None, "--python", help="Python X.Y (CPU default 3.11)."),
    driver: str | None = typer.Option(None, "--driver", help="Host driver version (with --gpu)."),
    force: bool = typer.Option(False, "--force", help="Replace an existing file."),
    source: Path | None = typer.Option(None, "--from", help="Adopt what you have: a requirements.txt, an "
                                       "environment.yml, a pyproject.toml, a setup.py (read, never run), a Dockerfile "
                                       "(of any name), an image on the engine, or a Python environment (a venv or "
                                       "its python); each value's comment names its line."),
    group: str | None = typer.Option(None, "--group", help="With --from pyproject.toml: also a dependency group "
                                     "(else the extra of that name); with setup.py: an extra."),
    base: str | None = typer.Option(None, "--base", help="With --from: the base image (default: a plain base whose "
                                                         "python3 is the profile's)."),
) -> None:
    """Write a first profile from a few options (no questions), or adopt one with --from: it passes `envgen check`
    (or check's findings say why not). --gpu here reads this host's GPUs and driver."""
    from envgen.check.findings import parse_driver
    from envgen.pipeline.session import Session
    from envgen.suggest.init import InitRequest, init_profile
    from envgen.suggest.recipes import load_recipes
    from envgen.suggest.search import parse_frameworks
    from envgen.suggest.write import file_profile_name

    _refuse_init_options(out, force, python)
    if source is not None:
        from envgen.cli.cmd_adopt import init_from, refuse_mixed

        refuse_mixed(frameworks)
        code = init_from(source, out, gpu, driver, python, group, base,
                         file_profile_name(out) if out else "my-profile")
        if code:
            raise typer.Exit(code)
        return
    request = InitRequest(name=file_profile_name(out) if out else "my-profile",
                          frameworks=parse_frameworks(frameworks) if frameworks else {}, gpu=gpu,
                          driver=parse_driver(driver), python=python)
    text = init_profile(Session().kb, load_recipes(), request)
    if out is None:
        typer.echo(text, nl=False)
        return
    from envgen.files import USER_FILE, write_atomically

    write_atomically(out, text, USER_FILE)
    err(f"wrote {out} (profile {request.name}); next: envgen check {out}")


def register(app: typer.Typer) -> None:
    """Add these commands to ``app``, in the order help lists them."""
    app.command("profiles")(handles_errors(profiles_cmd))
    app.command("show")(handles_errors(show_cmd))
    app.command("schema")(handles_errors(schema_cmd))
    app.command("check")(handles_errors(typer_function(CHECK_PARAMS, _check, CHECK_HELP)))
    app.command("suggest")(handles_errors(suggest_cmd))
    app.command("init")(handles_errors(init_cmd))
