"""Run the built-in smoke test inside an image and record the verdict against the image ID."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from envgen import layout
from envgen.config import load_config
from envgen.docker import connect, inspect_image
from envgen.docker.archive import read_file
from envgen.errors import HostIncompatible, InputError, SmokeFailed
from envgen.pipeline.gpus import gpus_for, start_container
from envgen.pipeline.state import Validation, ValidationStore
from envgen.pipeline.tiers import TierChoice, host_facts, host_plan, route_for
from envgen.pipeline.validity import sign_pass
from envgen.smoke.report import SmokeReport
from envgen.vocabulary import LABEL_CONTENT_HASH, LABEL_GPU_REQUIRED, LABEL_PROFILE

if TYPE_CHECKING:
    from docker import DockerClient

    from envgen.docker.run import RunResult
    from envgen.host.route import GpuRoute
    from envgen.pipeline.session import Session

REPORT_MARKER = "@@envgen-smoke-report@@"
PROFILE_IN_IMAGE = layout.PROFILE_JSON
SEALED_REPORT = layout.SEALED_REPORT  # the smoke report a validated image carries (build seals it)
DEFAULT_TIMEOUT_S = 300.0  # Smoke.timeout_s's default
TIMEOUT_MARGIN_S = 60.0
# The probe's log (framework chatter on stderr) first, then a marker, then the JSON report, so one
# stream carries both and the report parses whatever the frameworks printed.
def smoke_command(tier: str = "all") -> list[str]:
    """The probe's command line; ``--tier`` only when not the default, so that images sealed by an
    envgen before the tiers still run."""
    option = "" if tier == "all" else f" --tier {tier}"
    return ["/bin/sh", "-c",
            f"envgen-smoke{option} --out {layout.SMOKE_REPORT}; rc=$?; "
            f"echo '{REPORT_MARKER}'; cat {layout.SMOKE_REPORT} 2>/dev/null; exit $rc"]


def split_output(output: str) -> tuple[str, str]:
    """(probe log, report JSON text) from the container's combined output. stdout and stderr reach the
    engine as two streams, so an error line can land after the marker: only a JSON object after it is the
    report, anything else there belongs to the log."""
    log, marker, report = output.rpartition(REPORT_MARKER)
    if not marker:
        return output, ""
    before, brace, rest = report.partition("{")
    if not brace:
        return log + report, ""
    return log + before, (brace + rest).strip()


def run_smoke(client: DockerClient, image: str, *, gpus: str, profile_name: str, content_hash: str,
              store: ValidationStore, on_output: Callable[[str], None] | None = None,
              timeout_s: float = DEFAULT_TIMEOUT_S, tier: str = "all", route: GpuRoute | None = None) -> SmokeReport:
    """Run the probe in ``image`` (ID or tag), record the result, return the report. ``route``: the GPUs
    by CDI (None: through the NVIDIA runtime).

    The probe keeps to its own budget (the profile's smoke.timeout_s); the host kills the container
    if it overruns that by a margin (a hung driver call, a deadlocked all-reduce)."""
    result = start_container(client, image, smoke_command(tier), gpus=gpus, route=route, on_output=on_output,
                             timeout_s=timeout_s + TIMEOUT_MARGIN_S)
    return record_result(client, image, result, timeout_s=timeout_s, store=store, profile_name=profile_name,
                         content_hash=content_hash)


def record_result(client: DockerClient, image: str, result: RunResult, *, timeout_s: float, store: ValidationStore,
                  profile_name: str, content_hash: str, origin: str = "built") -> SmokeReport:
    """The report of a finished probe run in ``image``, recorded against the image ID (``origin``: "built" for
    envgen's images, "inspected" for one it did not build); SmokeFailed when the run produced no report."""
    if result.timed_out:
        tail = "\n".join(result.output.strip().splitlines()[-15:])
        raise SmokeFailed(f"the smoke test in {image} did not finish within {timeout_s + TIMEOUT_MARGIN_S:.0f}s "
                          "and was stopped", fix="read the probe output above; `envgen doctor` checks the host"
                          ).with_tail(tail)
    log, text = split_output(result.output)
    if not text:
        tail = "\n".join(log.strip().splitlines()[-15:])
        if not tail:
            raise SmokeFailed(f"the smoke test in {image} produced no report (exit {result.exit_code})",
                              fix=f"see the probe output above; is {layout.SMOKE_COMMAND} in the image?")
        from envgen.smoke.report import diagnose_text

        found = diagnose_text(log)
        raise SmokeFailed(
            f"the smoke test in {image} produced no report (exit {result.exit_code}), so no tier is proved; "
            f"last output: {tail.splitlines()[-1]}" + (f"; cause: {found.cause}" if found else ""),
            fix=found.fix if found else None).with_tail(tail)
    report = SmokeReport.from_json(text)
    image_id = inspect_image(client, image)
    validation = Validation(
        image_id=image_id.id if image_id else image,
        status="pass" if report.passed else "fail",
        mode=str(report.raw.get("mode", "")),
        profile=profile_name,
        content_hash=content_hash,
        checked_at=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        report=report.raw,
        tier=(report.tier or "") if report.passed else "",
        origin=origin,
    )
    store.record(validation)
    sign_pass(client, store.dir.parent, validation)  # a pass of an image envgen built: signed about its digest
    return report


def run_planned(client: DockerClient, image: str, plan: TierChoice, **kwargs: Any) -> tuple[SmokeReport, TierChoice]:
    """run_smoke with a tier plan; when the engine refuses the GPU request, the library tier runs alone
    and the returned plan says why the GPU tier did not."""
    try:
        return run_smoke(client, image, gpus=plan.gpus, tier=plan.tiers, route=plan.route, **kwargs), plan
    except HostIncompatible as exc:
        if plan.gpus == "none":
            raise
        fallback = plan.without_gpu(f"the engine refused the GPU request: {exc.one_line()}")
        return run_smoke(client, image, gpus="none", tier="libraries", **kwargs), fallback


def smoke(target: str, *, gpus: str | None = None, tier: str | None = None,
          env: Mapping[str, str] | None = None, session: Session | None = None) -> SmokeReport:
    """`envgen smoke IMAGE|PROFILE`: a profile name means that profile's current image tag. Without
    ``tier``, the tiers this host can run (the library tier alone where no GPU can be handed out). An image
    envgen did not build: ``envgen.pipeline.smoke_foreign.smoke_any``."""
    from envgen.pipeline.resolve import resolve_image
    from envgen.pipeline.session import Session

    if tier is not None and tier not in ("libraries", "gpu", "all"):
        raise InputError(f"option --tier = {tier!r} is not valid", fix="use libraries, gpu or all")
    session = Session.of(session, env)
    env, config = session.env, session.config
    client = connect()
    image = resolve_image(client, target, env, session)
    labels = image.labels
    kwargs = smoke_kwargs(client, image.id, labels, ValidationStore(config.state_dir))
    if tier is not None:
        wanted = gpus_for(labels, gpus) if tier != "libraries" else "none"
        route = route_for(wanted, host_facts(env), load_config(env).gpu_route) if wanted != "none" else None
        return run_smoke(client, image.id, gpus=wanted, tier=tier, route=route, **kwargs)
    gpu_required = labels.get(LABEL_GPU_REQUIRED) != "false"
    report, _plan = run_planned(client, image.id, host_plan(gpu_required, env, gpus), **kwargs)
    return report


def smoke_kwargs(client: DockerClient, image_id: str, labels: Mapping[str, str],
                 store: ValidationStore) -> dict[str, Any]:
    """What a smoke run of an image takes from the image itself: its profile name and content hash (labels), the
    timeout its baked profile sets, and the store the verdict is recorded in."""
    timeout = float(image_profile(client, image_id).get("smoke", {}).get("timeout_s", DEFAULT_TIMEOUT_S))
    return {"profile_name": labels.get(LABEL_PROFILE, ""),
            "content_hash": labels.get(LABEL_CONTENT_HASH, ""), "store": store, "timeout_s": timeout}


def image_profile(client: DockerClient, image_id: str) -> dict[str, Any]:
    """The resolved profile the image carries (/etc/envgen/profile.json), read without starting it;
    {} for an image that has none."""
    raw = read_file(client, image_id, PROFILE_IN_IMAGE)
    try:
        data = json.loads(raw) if raw else {}
    except ValueError:
        data = {}
    return data if isinstance(data, dict) else {}


def report_json(report: SmokeReport) -> str:
    return json.dumps(report.raw, indent=2, sort_keys=True)
