"""The doctor: host facts plus, for each profile, a verdict (runs / runs-with-warning / cannot-run) and why.

Compatibility rules are not repeated here: each profile goes through `envgen.check.check_profile` with a
`HostSpec` built from the facts, and the findings that the host adds (those absent when the same profile
is checked with no host) decide the verdict. The doctor adds only what `check_profile` cannot know: no
Docker engine, no NVIDIA container runtime, no GPU on a machine asked to run a GPU profile.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from envgen.host.cdi import PATH_LISTS
from envgen.host.engine_errors import NO_RUNTIME_FIX
from envgen.host.model import HostFacts
from envgen.host.route import CDI_SOURCE

Verdict = Literal["runs", "runs-with-warning", "cannot-run"]
SCHEMA = "envgen.doctor/1"

NO_DOCKER_FIX = "install Docker Engine (Debian/Ubuntu: `sudo apt-get install docker.io`) and start it " \
    "(`sudo systemctl start docker`), or run scripts/host-setup; check with `docker info`"
HOOK_ONLY_FIX = "if `docker run --gpus all` fails with 'could not select device driver', restart Docker " \
    "(`sudo systemctl restart docker`) or register the runtime with `sudo nvidia-ctk runtime configure`"
NO_GPU_FIX = "run it on a machine with an NVIDIA GPU and driver (`nvidia-smi` must list the GPU), " \
    "or choose a CPU profile (gpu.required: false)"


@dataclass(frozen=True)
class Reason:
    severity: Literal["error", "warning", "info"]
    code: str
    message: str
    fix: str
    source: str = ""

    def to_json(self) -> dict[str, str]:
        return {"severity": self.severity, "code": self.code, "message": self.message, "fix": self.fix,
                "source": self.source}


@dataclass(frozen=True)
class ProfileVerdict:
    profile: str
    verdict: Verdict
    reasons: tuple[Reason, ...]
    profile_findings: int = 0  # host-independent error/warning findings (`envgen check PROFILE` lists them)

    def to_json(self) -> dict[str, Any]:
        return {"profile": self.profile, "verdict": self.verdict,
                "reasons": [r.to_json() for r in self.reasons], "profile_findings": self.profile_findings}


@dataclass(frozen=True)
class DoctorReport:
    facts: HostFacts
    verdicts: tuple[ProfileVerdict, ...]
    envgen_version: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "envgen_version": self.envgen_version, "host": self.facts.to_json(),
                "profiles": [v.to_json() for v in self.verdicts]}


def host_spec(facts: HostFacts, kb: Any) -> Any:
    """The `HostSpec` check_profile takes: each distinct GPU by name when the KB knows that name (nicer
    messages), else by its compute capability; the driver; the platform whose driver minimums apply."""
    from envgen.check.findings import HostSpec

    gpus: list[str] = []
    for gpu in facts.gpus:
        model = _kb_gpu(kb, gpu.name)
        if model is not None and (gpu.compute_capability in (None, str(model.compute_capability))):
            label = gpu.name
        else:
            label = gpu.compute_capability or gpu.name
        if label not in gpus:
            gpus.append(label)
    from envgen.check.findings import parse_driver
    from envgen.errors import InputError

    try:  # a driver string the host reported oddly ("N/A") is treated as unknown, not as bad user input
        driver = parse_driver(facts.driver, option="the host driver")
    except InputError:
        driver = None
    return HostSpec(gpus=gpus, driver=driver, platform=facts.platform)


def _kb_gpu(kb: Any, name: str) -> Any:
    try:
        return kb.gpu(name)
    except Exception:
        return None


def host_reasons(facts: HostFacts, profile: Any) -> list[Reason]:
    """What stops or endangers a run before any compatibility rule: the engine, the runtime, the GPU."""
    reasons: list[Reason] = []
    if not facts.docker.reachable:
        reasons.append(Reason("error", "host-no-docker",
                              f"no Docker engine reachable ({facts.docker.error})", NO_DOCKER_FIX))
    if not profile.gpu.required:
        return reasons
    if not facts.gpus:
        message = f"profile needs an NVIDIA GPU; none found here ({facts.gpu_error})"
        reasons.append(Reason("error", "host-no-gpu", message, NO_GPU_FIX))
    reasons.extend(route_reasons(facts))
    for gpu in facts.gpus:
        if gpu.compute_capability is None:
            reasons.append(Reason("warning", "host-gpu-unknown",
                                  f"compute capability of {gpu.name!r} unknown: kernels cannot be checked",
                                  "install nvidia-ml-py (pip install nvidia-ml-py) or a newer driver whose "
                                  "nvidia-smi reports compute_cap"))
    return reasons


def route_reasons(facts: HostFacts) -> list[Reason]:
    """How a GPU reaches a container here (the NVIDIA runtime, or CDI), and what stops it."""
    if not facts.docker.reachable:
        return []
    access, runtime = facts.gpu_access, facts.nvidia_runtime
    if access.route is None:
        return [Reason("error", "host-no-nvidia-runtime",
                       "the Docker engine cannot hand GPUs to containers: " + access.detail.removeprefix("none: "),
                       "; ".join(access.fixes) or NO_RUNTIME_FIX, CDI_SOURCE)]
    reasons: list[Reason] = []
    if access.route == "runtime" and runtime.status == "hook":
        reasons.append(Reason("warning", "host-nvidia-runtime-unregistered",
                              "the nvidia runtime is not registered with the engine; " + runtime.detail,
                              HOOK_ONLY_FIX))
    if access.route == "cdi":
        overriding = sorted({item.split("=", 1)[0] for spec in facts.cdi.specs if spec.is_nvidia_gpu
                             for item in spec.env if item.split("=", 1)[0] in PATH_LISTS})
        if overriding:
            reasons.append(Reason(
                "info", "host-cdi-env",
                f"the CDI spec sets {', '.join(overriding)} in every GPU container, replacing the image's own: "
                "envgen sets the image's entries again in the containers it starts; a plain `docker run "
                "--device nvidia.com/gpu=all` of the image does not",
                "generate the spec with `nvidia-ctk cdi generate` (its spec mounts the driver and runs ldconfig "
                "instead), or start the image with `envgen run`", CDI_SOURCE))
    return reasons


def _key(finding: Any) -> tuple[str, str]:
    return finding.code, finding.message


def check_reasons(facts: HostFacts, profile: Any, kb: Any, plan: Any = None) -> tuple[list[Reason], int]:
    """Findings that exist because of this host, and the count of the profile's own errors/warnings. ``plan``: the
    profile's plan when the caller made it (else made here, once: it does not depend on the host)."""
    from envgen.check import check_profile
    from envgen.plan.image import plan_image

    plan = plan if plan is not None else plan_image(profile, kb)
    alone = check_profile(profile, kb, plan=plan)
    spec = host_spec(facts, kb)
    here = check_profile(profile, kb, host=spec, plan=plan)
    baseline = {_key(f) for f in alone}
    # check judges a GPU the profile names and the host has once, under the profile's name: its findings are
    # this host's too
    models = {m.name for m in map(kb.gpu, spec.gpus) if m is not None}
    labels = {*spec.gpus, *(t for t in profile.gpu.targets if (m := kb.gpu(t)) is not None and m.name in models)}
    reasons = [
        Reason(f.severity, f.code, f.message, f.fix, f.source) for f in here
        if _key(f) not in baseline or any(label in f.message for label in labels)
    ]
    own = sum(1 for f in alone if f.severity in ("error", "warning"))
    return reasons, own


def verdict_of(reasons: Iterable[Reason]) -> Verdict:
    severities = {r.severity for r in reasons}
    if "error" in severities:
        return "cannot-run"
    if "warning" in severities:
        return "runs-with-warning"
    return "runs"


def verdict_for(facts: HostFacts, profile: Any, kb: Any, plan: Any = None) -> ProfileVerdict:
    reasons = host_reasons(facts, profile)
    found, own = check_reasons(facts, profile, kb, plan)
    reasons.extend(found)
    order = {"error": 0, "warning": 1, "info": 2}
    reasons.sort(key=lambda r: order[r.severity])
    return ProfileVerdict(profile.name, verdict_of(reasons), tuple(reasons), own)


def doctor(facts: HostFacts, profiles: Iterable[Any], kb: Any, plans: Iterable[Any] | None = None) -> DoctorReport:
    """``plans``: each profile's plan (None where it could not be planned: judged as check judges it), when the
    caller made them."""
    from envgen import __version__

    profiles = list(profiles)
    planned = list(plans) if plans is not None else [None] * len(profiles)
    return DoctorReport(facts, tuple(verdict_for(facts, p, kb, plan) for p, plan in zip(profiles, planned,
                                                                                          strict=True)), __version__)
