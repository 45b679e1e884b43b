"""`envgen smoke IMAGE` for an image envgen did not build: the probe (stdlib-only, Python 3.7+) copied into a
container of the image that is never committed (``envgen.docker.foreign``), run with the image's own interpreter
(``--python``, else of the image's Pythons, its entrypoint's, PATH's, conda's and the venvs', the one holding the
most frameworks, which stderr names), both tiers as this host allows, and the
verdict recorded against the image ID as *inspected*: the image is neither sealed nor tagged."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from envgen.docker.foreign import directory_tar, entry_interpreter, run_with_files, with_python
from envgen.errors import GpuRequestRefused, InputError
from envgen.host.engine_errors import host_incompatible
from envgen.layout import PROBE_ENTRY, SMOKE_REPORT
from envgen.paths import probe_dir
from envgen.pipeline.gpus import gpu_kwargs
from envgen.pipeline.session import Session
from envgen.pipeline.smoke import DEFAULT_TIMEOUT_S, REPORT_MARKER, TIMEOUT_MARGIN_S, record_result
from envgen.pipeline.state import ValidationStore
from envgen.pipeline.tiers import TierChoice
from envgen.smoke.report import SmokeReport
from envgen.vocabulary import LABEL_PROFILE

if TYPE_CHECKING:
    from docker import DockerClient

PROBE_PARENT = "/tmp"  # exists in every image with a shell; the probe lands in /tmp/envgen-probe
PROBE_NAME = "envgen-probe"


def probe_command(tier: str, python: str | None, first: str | None = None) -> list[str]:
    """The shell line that finds the interpreter (``python``, else the image's Python holding the frameworks,
    ``first`` its entrypoint's), runs the probe, and prints the marker and the report."""
    option = "" if tier == "all" else f" --tier {tier}"
    return with_python(python, f"{PROBE_PARENT}/{PROBE_NAME}/{PROBE_ENTRY}{option} --out {SMOKE_REPORT}; "
                       f"rc=$?; echo '{REPORT_MARKER}'; cat {SMOKE_REPORT} 2>/dev/null; exit $rc", first)


def smoke_foreign(client: DockerClient, image_id: str, plan: TierChoice, store: ValidationStore,
                  python: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S) -> tuple[SmokeReport, TierChoice]:
    """Probe ``image_id`` with ``plan``'s tiers; where the engine refuses the GPU request, the library tier alone
    (and the returned plan says why)."""
    archive = directory_tar(probe_dir(), PROBE_NAME)
    first = entry_interpreter(client.api.inspect_image(image_id).get("Config") or {})

    def run(tiers: str, gpus: str, chosen: TierChoice) -> SmokeReport:
        keywords = gpu_kwargs(client, image_id, gpus, chosen.route if gpus != "none" else None)
        try:
            result = run_with_files(client, image_id, probe_command(tiers, python, first), archive, PROBE_PARENT,
                                    timeout_s=timeout_s + TIMEOUT_MARGIN_S, **keywords)
        except GpuRequestRefused as refusal:
            raise host_incompatible(refusal) from None
        return record_result(client, image_id, result, timeout_s=timeout_s, store=store, profile_name="",
                             content_hash="", origin="inspected")

    from envgen.errors import HostIncompatible

    try:
        return run(plan.tiers, plan.gpus, plan), plan
    except HostIncompatible as exc:
        if plan.gpus == "none":
            raise
        fallback = plan.without_gpu(f"the engine refused the GPU request: {exc.one_line()}")
        return run("libraries", "none", fallback), fallback


def is_foreign(labels: Mapping[str, str]) -> bool:
    """An image envgen did not build: no io.envgen.profile label."""
    return LABEL_PROFILE not in labels


def smoke_any(target: str, *, gpus: str | None = None, tier: str | None = None,
              env: Mapping[str, str] | None = None, python: str | None = None,
              session: Session | None = None) -> SmokeReport:
    """`envgen smoke TARGET`: envgen's own images (and profiles) by ``envgen.pipeline.smoke.smoke``; any other
    image with the probe copied in, its tiers planned as for a GPU image (the library tier alone where no GPU
    can be handed out, or with ``--tier libraries``)."""
    from envgen.config import load_config
    from envgen.docker import connect
    from envgen.docker.images import inspect_image
    from envgen.pipeline.smoke import smoke
    from envgen.pipeline.tiers import host_plan

    if tier is not None and tier not in ("libraries", "gpu", "all"):
        raise InputError(f"option --tier = {tier!r} is not valid", fix="use libraries, gpu or all")
    client = connect()
    found = inspect_image(client, target)
    if found is None or not is_foreign(found.labels):
        if python is not None:
            raise InputError("option --python: envgen's own images run their probe with the profile's Python",
                             fix="leave --python out (it is for images envgen did not build)")
        return smoke(target, gpus=gpus, tier=tier, env=env, session=session)
    plan = TierChoice("libraries", "none", "--tier libraries") if tier == "libraries" else host_plan(True, env, gpus)
    store = ValidationStore(load_config(env).state_dir)
    return smoke_foreign(client, found.id, plan, store, python)[0]
