"""Host facts as plain, immutable data: what the doctor reports and the gate checks.

Nothing here runs commands or imports pydantic: the facts must be collectable on a machine that has only
the standard library (the GPU machine), and serialisable to JSON for `envgen doctor --json`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from envgen.host.cdi import CdiSpec

# The NVIDIA runtime alone (CDI is judged apart, in CdiFacts; "cdi" is kept for facts recorded before
# the two were told apart).
RuntimeStatus = Literal["registered", "cdi", "hook", "missing", "unknown"]


@dataclass(frozen=True)
class Probe:
    """The raw answer of one fact source: its output text, or why there is none."""

    output: str | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.output is not None and self.output.strip() != ""


@dataclass(frozen=True)
class GpuFact:
    index: int
    name: str
    compute_capability: str | None = None
    memory_mib: int | None = None
    # where the compute capability came from: "nvml", "nvidia-smi", "kb" or "" when unknown
    cc_source: str = ""


@dataclass(frozen=True)
class DockerFacts:
    reachable: bool
    server_version: str | None = None
    error: str | None = None
    buildkit: bool | None = None
    builder: str | None = None  # "buildx", "buildkit-legacy", "podman", "classic", or None when not detected
    runtimes: tuple[str, ...] = ()
    default_runtime: str | None = None
    operating_system: str | None = None
    kernel_version: str | None = None
    cdi_spec_dirs: tuple[str, ...] = ()
    engine: str | None = None  # "docker" or "podman" when the engine named itself


@dataclass(frozen=True)
class RuntimeFacts:
    """Whether the engine has the NVIDIA runtime (`--gpus` / a device request with the gpu capability)."""

    status: RuntimeStatus
    detail: str


@dataclass(frozen=True)
class CdiFacts:
    """CDI on this engine: whether it reads specs (`docker info`'s CDI spec directories, Docker >= 25
    with the `cdi` feature) and what the spec files there declare."""

    enabled: bool = False
    spec_dirs: tuple[str, ...] = ()
    specs: tuple[CdiSpec, ...] = ()


@dataclass(frozen=True)
class GpuAccess:
    """Which route a GPU container takes here (``auto``): "runtime", "cdi", or None when neither works;
    each route's own verdict, and the fixes when neither works."""

    route: Literal["runtime", "cdi"] | None = None
    detail: str = "not judged"
    runtime_ok: bool = False
    cdi_ok: bool = False
    fixes: tuple[str, ...] = ()


@dataclass(frozen=True)
class HostFacts:
    gpus: tuple[GpuFact, ...]
    driver: str | None
    cuda_driver_api: str | None  # the newest CUDA the driver supports ("CUDA Version" of nvidia-smi)
    gpu_source: str | None  # "nvml", "nvidia-smi --query-gpu", "nvidia-smi -q", "nvidia-smi", or None
    gpu_error: str | None  # why no GPU facts could be read, when none could
    docker: DockerFacts
    nvidia_runtime: RuntimeFacts
    wsl: bool
    notes: tuple[str, ...] = field(default_factory=tuple)
    cdi: CdiFacts = field(default_factory=CdiFacts)
    gpu_access: GpuAccess = field(default_factory=GpuAccess)

    @property
    def platform(self) -> Literal["linux", "wsl2"]:
        """Whose driver serves CUDA: inside WSL 2 the Windows driver (its minimums and WSL's own limits apply)."""
        return "wsl2" if self.wsl else "linux"

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["platform"] = self.platform
        return data
