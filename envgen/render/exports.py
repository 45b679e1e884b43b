"""Exports for the rest of the ecosystem: VS Code devcontainer, docker compose, Apptainer, and a
``docker buildx bake`` file that builds many profiles on one (possibly remote) BuildKit builder."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import jinja2

from envgen import __version__, layout
from envgen.config import UserConfig
from envgen.errors import InputError, RenderError
from envgen.files import EXECUTABLE, USER_FILE, write_atomically
from envgen.plan.image import ImagePlan
from envgen.plan.selection import cel_selector, node_affinity_terms
from envgen.profile.loader import profile_arg
from envgen.profile.model import Profile
from envgen.render.core import RenderedContext, image_tag, render_in_memory, write_context
from envgen.render.jinja import make_environment, render_template
from envgen.vocabulary import ARGS_FORWARDED, DEFAULT_SHM_SIZE, LABEL_CONTENT_HASH, LABEL_PROFILE, LABEL_PROFILE_HASH

# Build args the bake file forwards from the environment (the mirror/proxy args of the Dockerfiles).
BAKE_ARGS = ARGS_FORWARDED


@dataclass(frozen=True)
class ExportItem:
    profile: Profile
    tag: str
    content_hash: str
    gpu: bool
    target: str = ""
    context: str = ""


@dataclass(frozen=True)
class ExportOptions:
    """What an export needs beyond the profiles: known registry references by digest (profile name ->
    ``registry/profile@sha256:...``, gathered by the pipeline from the engine where it can) and the
    GPUs a cluster job asks for."""

    images: Mapping[str, str] = field(default_factory=dict)
    gpus: int = 1
    # how a compose service or a dev container asks for its GPUs: "runtime" (the NVIDIA runtime, `--gpus`,
    # `driver: nvidia`) or "cdi" (`--device nvidia.com/gpu=all`, `driver: cdi` with device_ids)
    gpu_route: Literal["runtime", "cdi"] = "runtime"
    # where the user pushes images (`export --registry`; None: the configured registry): what a k8s Job, an
    # sbatch script and an Apptainer `Bootstrap: docker` definition pull
    registry: str | None = None
    # Apptainer: "docker-daemon" (the image `envgen build` made, on this host) or "docker" (from the registry)
    bootstrap: Literal["docker-daemon", "docker"] = "docker-daemon"
    # the project a compose service mounts at /workspace (the directory `envgen export` ran in); None: the
    # compose file's own directory
    project: Path | None = None
    # replace export files that exist with other contents (a hand-edited docker-compose.yml is kept otherwise)
    force: bool = False
    # Slurm: what runs the image on the node: Apptainer (a SIF), or Docker / Podman (the registry image)
    runtime: Literal["apptainer", "docker", "podman", "pyxis"] = "apptainer"
    # Slurm: a job array (sbatch --array syntax, "0-9" or "1,3,5"): one image, one job, many tasks
    array: str | None = None


# Each format writes from the rendered contexts, their plans inside (``RenderedContext.plan.image``): no KB.
Exporter = Callable[[Sequence[RenderedContext], UserConfig, Path, jinja2.Environment, ExportOptions], dict[str, str]]


def _item(ctx: RenderedContext, config: UserConfig) -> ExportItem:
    """The image an export runs: the one `envgen build` tags, in the user's namespace."""
    profile = ctx.plan.profile
    return ExportItem(profile, image_tag(profile.name, ctx.content_hash, config.namespace), ctx.content_hash,
                      profile.is_gpu, target=profile.name.replace(".", "-"))


def _single(ctx: RenderedContext, config: UserConfig) -> dict[str, object]:
    item = _item(ctx, config)
    return {"profile": item.profile, "profile_arg": profile_arg(item.profile), "tag": item.tag, "gpu": item.gpu,
            "version": __version__, "profile_hash": ctx.plan.profile_hash, "content_hash": ctx.content_hash,
            "env": ctx.plan.env, "layout": layout}


def _devcontainer(ctxs: Sequence[RenderedContext], config: UserConfig, out: Path,
                  env: jinja2.Environment, options: ExportOptions) -> dict[str, str]:
    files = {}
    for ctx in ctxs:
        path = ".devcontainer/devcontainer.json" if len(ctxs) == 1 else \
            f".devcontainer/{ctx.plan.profile.name}/devcontainer.json"
        files[path] = render_template(env, "exports/devcontainer.json.j2",
                                      {**_single(ctx, config), "gpu_route": options.gpu_route})
    return files


def _compose(ctxs: Sequence[RenderedContext], config: UserConfig, out: Path,
             env: jinja2.Environment, options: ExportOptions) -> dict[str, str]:
    # compose reads a relative volume source from the compose file's directory: the project, seen from there
    project = os.path.relpath(options.project.resolve(), out.resolve()) if options.project else "./"
    context = {"items": [_item(c, config) for c in ctxs], "version": __version__, "gpu_route": options.gpu_route,
               "project": project if project.startswith(".") else f"./{project}", "layout": layout}
    return {"docker-compose.yml": render_template(env, "exports/docker-compose.yml.j2", context)}


def _registry_image(ctx: RenderedContext, config: UserConfig, options: ExportOptions) -> str:
    """The image as the cluster pulls it: a known digest, else ``REGISTRY/PROFILE:HASH12``; without a registry
    (envgen has no default one) the local reference ``NAMESPACE/PROFILE:HASH``, which the export says."""
    profile = ctx.plan.profile
    registry = (options.registry or config.registry or "").rstrip("/")
    if profile.name in options.images:
        return options.images[profile.name]
    if not registry:
        return image_tag(profile.name, ctx.content_hash, config.namespace)
    return f"{registry}/{profile.name}:{ctx.content_hash[:12]}"


def _apptainer(ctxs: Sequence[RenderedContext], config: UserConfig, out: Path,
               env: jinja2.Environment, options: ExportOptions) -> dict[str, str]:
    template = "exports/apptainer.def.j2"
    files = {}
    if options.bootstrap == "docker" and not (options.registry or config.registry):
        raise InputError("option --bootstrap docker needs a registry: Apptainer pulls the image from it",
                         fix="pass --registry HOST[:PORT][/PATH] (where `envgen push` put it), or use "
                             "--bootstrap docker-daemon to build from the image on this host")
    for c in ctxs:
        single = _single(c, config)
        origin = _registry_image(c, config, options) if options.bootstrap == "docker" else single["tag"]
        labels = ((LABEL_PROFILE, c.plan.profile.name), (LABEL_PROFILE_HASH, c.plan.profile_hash),
                  (LABEL_CONTENT_HASH, c.content_hash))
        files[f"{c.plan.profile.name}.def"] = render_template(
            env, template, {**single, "bootstrap": options.bootstrap, "from_ref": origin, "labels": labels})
    return files


def _bake(ctxs: Sequence[RenderedContext], config: UserConfig, out: Path,
          env: jinja2.Environment, options: ExportOptions) -> dict[str, str]:
    """Renders each profile's context into out/contexts/<profile>/ and one docker-bake.hcl."""
    items: list[ExportItem] = []
    secrets: dict[str, str] = {}
    for ctx in ctxs:
        # the mirrors' logins (a netrc) go to the user's state directory, never into the export
        result = write_context(ctx, out / "contexts" / ctx.plan.profile.name, config.state_dir / "secrets")
        secrets.update(result.secrets)
        base = _item(ctx, config)
        items.append(ExportItem(base.profile, image_tag(base.profile.name, result.content_hash, config.namespace),
                                result.content_hash, base.gpu, base.target,
                                f"contexts/{ctx.plan.profile.name}"))
    context = {"items": items, "version": __version__, "registry": config.registry, "arg_names": BAKE_ARGS,
               "secrets": sorted(secrets.items()), "label_profile": LABEL_PROFILE}
    return {"docker-bake.hcl": render_template(env, "exports/docker-bake.hcl.j2", context)}


RUNTIME_NAMES = {"apptainer": "Apptainer", "docker": "Docker", "podman": "Podman", "pyxis": "pyxis (enroot)"}


def pyxis_image(image: str) -> str:
    """An image reference as pyxis/enroot take it: the registry host before a "#" (``localhost:5000/envgen/x:1``
    -> ``localhost:5000#envgen/x:1``); a Docker Hub reference as it is."""
    head, sep, rest = image.partition("/")
    if sep and ("." in head or ":" in head or head == "localhost"):
        return f"{head}#{rest}"
    return image
# sbatch --array: indexes and ranges (with a step ":N"), comma-separated, and an optional "%N" task limit
_ARRAY = re.compile(r"\d+(?:-\d+(?::\d+)?)?(?:,\d+(?:-\d+(?::\d+)?)?)*(?:%\d+)?")


def job_name(profile_name: str) -> str:
    """A Kubernetes object name / Slurm job name: DNS-1123 label, at most 63 characters."""
    name = re.sub(r"[^a-z0-9-]+", "-", f"envgen-{profile_name}".lower())
    return re.sub(r"-{2,}", "-", name)[:63].strip("-")


def k8s_quantity(docker_size: str) -> str:
    """Docker's binary size units ("2g", "512m") as a Kubernetes quantity ("2Gi", "512Mi")."""
    m = re.fullmatch(r"(\d+)([kmg]?)b?", docker_size.strip().lower())
    if not m:
        raise RenderError(f"shared-memory size {docker_size!r} is not in Docker's size syntax")
    return m.group(1) + {"": "", "k": "Ki", "m": "Mi", "g": "Gi"}[m.group(2)]


def _cluster_context(ctx: RenderedContext, config: UserConfig, options: ExportOptions, file_name: str
                     ) -> dict[str, object]:
    profile = ctx.plan.profile
    pinned = options.images.get(profile.name)
    return {**_single(ctx, config), "job_name": job_name(profile.name), "label_profile": profile.name,
            "registry_given": bool(options.registry or config.registry),
            "file_name": file_name, "gpus": options.gpus, "pinned": bool(pinned),
            "image": _registry_image(ctx, config, options),
            "shm_docker": DEFAULT_SHM_SIZE, "shm_k8s": k8s_quantity(DEFAULT_SHM_SIZE), "runtime": options.runtime,
            "runtime_name": RUNTIME_NAMES[options.runtime], "array": options.array,
            "pyxis_image": pyxis_image(_registry_image(ctx, config, options))}


def _selection_context(ctx: RenderedContext) -> dict[str, object]:
    """The node selection of a cluster export, as the plan made it from its preflight facts (``plan.selection``)."""
    sel = ctx.plan.image.node_selection
    if sel is None:
        return {"affinity": [], "cel": "", "affinity_note": ""}
    served = ", ".join(sel.ccs) if sel.ccs else "any (the frameworks' GPU code was not read)"
    note = (f"driver >= {sel.driver_floor or 'any'}, compute capability {served} "
            "(the GPUs of envgen's knowledge base that its code runs on)")
    return {"affinity": node_affinity_terms(sel), "cel": cel_selector(sel), "affinity_note": note}


def _k8s(ctxs: Sequence[RenderedContext], config: UserConfig, out: Path,
         env: jinja2.Environment, options: ExportOptions) -> dict[str, str]:
    """A Job per profile; for a GPU profile also its DRA variant (``<profile>.dra.yaml``)."""
    files = {}
    for ctx in ctxs:
        name = f"{ctx.plan.profile.name}.job.yaml"
        context = {**_cluster_context(ctx, config, options, name), **_selection_context(ctx)}
        files[name] = render_template(env, "exports/k8s-job.yaml.j2", context)
        if context["cel"]:
            dra = f"{ctx.plan.profile.name}.dra.yaml"
            files[dra] = render_template(env, "exports/k8s-dra.yaml.j2", {**context, "file_name": dra})
    return files


def _slurm(ctxs: Sequence[RenderedContext], config: UserConfig, out: Path,
           env: jinja2.Environment, options: ExportOptions) -> dict[str, str]:
    """An sbatch script per profile, plus the Apptainer definition its SIF is built from (Apptainer runtime)."""
    if options.array is not None and not _ARRAY.fullmatch(options.array):
        raise InputError(f"option --array = {options.array!r} is not an sbatch array",
                         fix="use a range or list of task IDs: 0-9, 1,3,5, or 0-99%10")
    files = _apptainer(ctxs, config, out, env, options) if options.runtime == "apptainer" else {}
    for ctx in ctxs:
        name = f"{ctx.plan.profile.name}.sbatch"
        files[name] = render_template(env, "exports/slurm.sbatch.j2", _cluster_context(ctx, config, options, name))
    return files


EXPORT_FORMATS: dict[str, Exporter] = {
    "apptainer": _apptainer,
    "bake": _bake,
    "compose": _compose,
    "devcontainer": _devcontainer,
    "k8s": _k8s,
    "slurm": _slurm,
}
# Files an export writes that must be executable.
EXECUTABLE_SUFFIXES = (".sbatch",)


def export(
    plans: Sequence[ImagePlan],
    format: str,
    out: Path,
    config: UserConfig | None = None,
    options: ExportOptions | None = None,
    contexts: Sequence[RenderedContext] | None = None,
) -> list[Path]:
    """Write the export files for the profiles of ``plans`` (the command's one plan of each) under ``out``; returns
    the paths written. ``contexts``: their renders, in the same order, when the caller made them."""
    if format not in EXPORT_FORMATS:
        raise InputError(f"unknown export format {format!r}",
                         fix=f"use one of: {', '.join(sorted(EXPORT_FORMATS))}")
    if not plans:
        raise InputError("export needs at least one profile")
    config = config or UserConfig()
    env = make_environment()
    if contexts is not None and len(contexts) != len(plans):
        raise InputError(f"export was given {len(contexts)} renders for {len(plans)} profiles")
    contexts = list(contexts) if contexts is not None else [render_in_memory(plan, config) for plan in plans]
    options = options or ExportOptions()
    files = EXPORT_FORMATS[format](contexts, config, out, env, options)
    changed = sorted(rel for rel, text in files.items()
                     if (out / rel).is_file() and (out / rel).read_text(encoding="utf-8", errors="replace") != text)
    if changed and not options.force:  # before anything is written
        raise InputError(f"{out / changed[0]} exists with other contents" + (
            f" (and {len(changed) - 1} more)" if len(changed) > 1 else "") + ": the export would replace it",
            fix="pass --force to replace it, or -o another directory")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for rel, text in sorted(files.items()):
        path = out / rel
        write_atomically(path, text, EXECUTABLE if path.name.endswith(EXECUTABLE_SUFFIXES) else USER_FILE)
        written.append(path)
    return written


__all__ = ["EXPORT_FORMATS", "ExportOptions", "export", "job_name", "k8s_quantity"]
