"""Plain-text rendering of a `DoctorReport` for `envgen doctor` (the JSON form is `DoctorReport.to_json`)."""

from __future__ import annotations

from envgen.host.doctor import DoctorReport
from envgen.host.model import HostFacts
from envgen.host.route import spec_summary
from envgen.table import format_table

VERDICT_WORDS = {"runs": "runs here", "runs-with-warning": "runs, with a warning", "cannot-run": "cannot run"}


def _docker_line(facts: HostFacts) -> str:
    docker = facts.docker
    if not docker.reachable:
        return f"not reachable: {docker.error}"
    buildkit = {True: "BuildKit available", False: "no BuildKit (classic builder)", None: "BuildKit unknown"}
    builder = f" via {docker.builder}" if docker.builder else ""
    os_name = f", {docker.operating_system}" if docker.operating_system else ""
    if docker.engine == "podman":
        return f"Podman {docker.server_version} (its Docker-compatible API){os_name}; " + (
            "builds with podman build (build secrets, cache mounts)" if docker.builder == "podman" else
            "classic builds through the compat API (no podman CLI: no build secrets)")
    name = "Docker " if docker.engine == "docker" else ""
    return f"{name}{docker.server_version}{os_name}; {buildkit[docker.buildkit]}{builder}"


def _gpu_lines(facts: HostFacts) -> list[str]:
    if not facts.gpus:
        return [f"GPUs:            none ({facts.gpu_error})"]
    lines = [f"Driver:          {facts.driver or 'unknown'}"
             + (f" (supports CUDA up to {facts.cuda_driver_api})" if facts.cuda_driver_api else "")
             + f"  [read with {facts.gpu_source}]"]
    for gpu in facts.gpus:
        cc = f"compute capability {gpu.compute_capability or '?'}"
        via = f" (from {gpu.cc_source})" if gpu.cc_source and gpu.cc_source != facts.gpu_source else ""
        memory = f", {gpu.memory_mib} MiB" if gpu.memory_mib else ""
        lines.append(f"GPU {gpu.index}:           {gpu.name}: {cc}{via}{memory}")
    return lines


def _cdi_lines(facts: HostFacts) -> list[str]:
    cdi = facts.cdi
    if not facts.docker.reachable:
        return []
    state = f"enabled (spec directories {', '.join(cdi.spec_dirs)})" if cdi.enabled else \
        "not enabled (the engine lists no CDI spec directories)"
    return [f"CDI:             {state}", *(f"CDI spec:        {spec_summary(spec)}" for spec in cdi.specs)]


def _route_line(facts: HostFacts) -> str:
    access = facts.gpu_access
    if access.route is None:
        return access.detail
    how = {"runtime": "--gpus (the NVIDIA runtime)", "cdi": "CDI (--device nvidia.com/gpu=...)"}[access.route]
    return f"{how}: {access.detail}"


def format_facts(facts: HostFacts) -> str:
    runtime = facts.nvidia_runtime
    lines = [
        f"Docker engine:   {_docker_line(facts)}",
        f"NVIDIA runtime:  {runtime.status}: {runtime.detail}",
        *_cdi_lines(facts),
        f"GPU route:       {_route_line(facts)}",
        *_gpu_lines(facts),
        f"WSL2:            {'yes (Windows driver minimums apply)' if facts.wsl else 'no'}",
    ]
    lines.extend(f"Note:            {note}" for note in facts.notes)
    return "\n".join(lines)


def format_report(report: DoctorReport) -> str:
    parts = [format_facts(report.facts)]
    if report.verdicts:
        rows = []
        for verdict in report.verdicts:
            first = verdict.reasons[0].message if verdict.reasons else ""
            more = f" (+{len(verdict.reasons) - 1} more)" if len(verdict.reasons) > 1 else ""
            rows.append((verdict.profile, VERDICT_WORDS[verdict.verdict], first + more))
        parts.append(format_table(("PROFILE", "VERDICT", "WHY"), rows))
        fixes = []
        for verdict in report.verdicts:
            for reason in verdict.reasons:
                if reason.severity != "info" and reason.fix:
                    line = f"- {verdict.profile}: {reason.message}\n  fix: {reason.fix}"
                    if line not in fixes:
                        fixes.append(line)
        if fixes:
            parts.append("What to do:\n" + "\n".join(fixes))
    return "\n\n".join(parts)
