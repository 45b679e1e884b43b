"""The build context as bytes in memory: path -> content, plus which paths are executable."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2

from envgen import layout
from envgen.paths import probe_dir
from envgen.render.dockerfile import dockerfile_context
from envgen.render.hashing import pretty_json
from envgen.render.jinja import bytecode_cache, make_environment, render_template
from envgen.render.plan import CONTENT_HASH_TOKEN, SHORT_HASH_TOKEN, TemplateInput, tool_lines
from envgen.render.scripts import build_scripts

DOCKERFILE_TEMPLATE = "docker/Dockerfile.j2"  # both variants; its context adds the stages (template_context)
# path in the context -> template; rendered with the plan's context (buildkit flag where it matters)
TEXT_FILES: tuple[tuple[str, str, bool], ...] = (
    ("Dockerfile", DOCKERFILE_TEMPLATE, True),
    ("Dockerfile.classic", DOCKERFILE_TEMPLATE, False),
    ("requirements.lock", "context/requirements.lock.j2", True),
    ("requirements.extra.txt", "context/requirements.extra.txt.j2", True),
    (".dockerignore", "context/dockerignore.j2", True),
    ("envgen/envgen-smoke", "context/envgen-smoke.j2", True),
    ("envgen/envgen-entrypoint", "context/envgen-entrypoint.j2", True),
    ("wheels/README.txt", "context/wheels-README.txt.j2", True),
)
# A base_provides base: the versions it holds, pip's -c (plan: ImagePlan.base_constraints).
BASE_FILES: tuple[tuple[str, str, bool], ...] = ((layout.BASE_CONSTRAINTS, "context/constraints.base.txt.j2", True),)
EXECUTABLE = frozenset({"envgen/envgen-smoke", "envgen/envgen-entrypoint"})
PROBE_PREFIX = "envgen/probe/"


@dataclass(frozen=True)
class ContextFiles:
    files: Mapping[str, bytes]  # rendered with the hash placeholders
    executable: frozenset[str]


def probe_files(directory: Path | None = None) -> dict[str, bytes]:
    """The smoke probe as shipped: regular files only, no caches, sorted."""
    root = directory or probe_dir()
    out: dict[str, bytes] = {}
    if not root.is_dir():
        return out
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if not path.is_file() or "__pycache__" in rel.parts or path.suffix in (".pyc", ".pyo"):
            continue
        out[PROBE_PREFIX + rel.as_posix()] = path.read_bytes()
    return out


def profile_document(plan: TemplateInput) -> dict[str, Any]:
    """/etc/envgen/profile.json: the profile's identity (no mirrors), the expected facts and the preflight's."""
    doc = dict(plan.profile.identity())
    doc["expected"] = dict(plan.expected)
    doc["preflight"] = dict(plan.preflight)
    return doc


def render_document(plan: TemplateInput) -> dict[str, Any]:
    """envgen/render.json: the lock information of this context."""
    doc: dict[str, Any] = {
        "schema": "envgen.render/1",
        "envgen_version": plan.version,
        "profile": plan.profile.name,
        "profile_hash": plan.profile_hash,
        "content_hash": CONTENT_HASH_TOKEN,
        "tag": f"envgen/{plan.profile.name}:{SHORT_HASH_TOKEN}",
        "installer": plan.installer,
        "base": {
            "image": plan.base.image,
            "from": plan.base.from_ref,
            "digest": plan.base.digest,
            "local_base": plan.base.local,
        },
        "pins": {
            "apt": list(plan.pins.apt),
            "conda": list(plan.pins.conda),
            "pip": list(plan.pins.pip),
            "pip_extra": list(plan.pins.pip_extra),
        },
        "pip_sources": {"index_urls": list(plan.pip.index_urls), "find_links": list(plan.pip.find_links)},
        "environment": dict(plan.env),
    }
    if plan.conda_env:
        doc["pins"]["conda_python"] = plan.image.installer_part.conda_python
        doc["pins"]["conda_pip"] = f"pip=={plan.conda_pip}"
        doc["micromamba"] = dict(plan.micromamba)
    if plan.lock is not None:
        doc["lock"] = {
            "file": plan.lock.file_name,
            "environment": [entry.pin for entry in plan.lock.environment],
            "extras": [entry.pin for entry in plan.lock.extras],
            "tools": [entry.pin for entry in plan.lock.tools],
            "apt": [entry.line for entry in plan.lock.apt],
            "base_digest": plan.lock.base_digest,
            "base_image_id": plan.lock.base_image_id,
            "source_date_epoch": plan.lock.source_date_epoch,
            "installer": "uv (BuildKit), pip (classic builder)" if plan.uv_install else "pip",
        }
        if plan.platform_locks:  # what each platform's files hold (requirements.<TARGETARCH>.lock)
            doc["lock"]["platforms"] = {arch: {"environment": [e.pin for e in lock.environment],
                                               "extras": [e.pin for e in lock.extras],
                                               "tools": [e.pin for e in lock.tools]}
                                        for arch, lock in plan.platform_locks}
    return doc


def platform_requirements(plan: TemplateInput, env: jinja2.Environment) -> dict[str, bytes]:
    """Each platform's locked sets, where the plan gives one lock per platform: requirements.<TARGETARCH>.lock and
    requirements.extra.<TARGETARCH>.txt, which BuildKit's installing steps pick by TARGETARCH (render.dockerfile)."""
    out = {}
    for arch, lock in plan.platform_locks:
        context = {**plan.context(buildkit=True), "lock": lock, "tool_requirements": tool_lines(lock),
                   "lock_platform": f"linux/{arch}"}
        for path, template in ((f"requirements.{arch}.lock", "context/requirements.lock.j2"),
                               (f"requirements.extra.{arch}.txt", "context/requirements.extra.txt.j2")):
            out[path] = render_template(env, template, context).encode("utf-8")
    return out


def template_context(plan: TemplateInput, template: str, buildkit: bool) -> dict[str, Any]:
    """The plan's context (``TemplateInput.context``); a Dockerfile's adds its stages and the emitter that writes
    them for the builder (``render.dockerfile``)."""
    context = plan.context(buildkit=buildkit)
    if template == DOCKERFILE_TEMPLATE:
        context.update(dockerfile_context(plan, buildkit))
    return context


def render_files(plan: TemplateInput, env: jinja2.Environment | None = None) -> ContextFiles:
    env = env or make_environment(cache=bytecode_cache())
    out: dict[str, bytes] = {}
    # the installer's own files (plan.installers: environment.yml; uv's fetch-uv.py for a locked uv install, and
    # requirements.cuda.txt where it installs a CUDA layer)
    specs = (TEXT_FILES + plan.image.installer_part.files(plan.uv_install, bool(plan.cuda_wheels))
             + (BASE_FILES if plan.pins.base else ()))
    for path, template, buildkit in specs:
        out[path] = render_template(env, template, template_context(plan, template, buildkit)).encode("utf-8")
    out.update(platform_requirements(plan, env))
    out.update(build_scripts(out[name].decode("utf-8") for name in ("Dockerfile", "Dockerfile.classic")))
    if plan.conda_lock is not None:
        out["environment.lock.txt"] = plan.conda_lock.encode("utf-8")
    out["envgen/profile.json"] = pretty_json(profile_document(plan)).encode("utf-8")
    out["envgen/render.json"] = pretty_json(render_document(plan)).encode("utf-8")
    out.update(probe_files())
    return ContextFiles(files=dict(sorted(out.items())), executable=EXECUTABLE)
