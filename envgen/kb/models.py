"""Row types of the knowledge base: strict records (``envgen.records``: unknown keys are errors, validated by
pydantic when the YAML is read), each with a ``source`` and a ``cite()`` that names the data file, the row and the
source."""

from __future__ import annotations

import re
from dataclasses import field
from typing import Annotated, ClassVar, Literal

from envgen.records import Length, Matches, Record

_VERSION_RE = re.compile(r"^\d+(\.\d+){0,3}[a-z0-9]*$")
_CC_RE = re.compile(r"^\d+\.\d$")


def _check(pattern: re.Pattern[str], what: str) -> Matches:
    return Matches(pattern, what, message="{value} is not a {what}")


Ver = Annotated[str, _check(_VERSION_RE, 'version (quote it in YAML: "2.10", not 2.10)')]
CC = Annotated[str, _check(_CC_RE, 'compute capability such as "8.6"')]
Source = Annotated[str, Length(min=4)]


class Row(Record):
    """A knowledge-base row. Subclasses set ``FILE`` and implement ``key``."""

    FILE: ClassVar[str] = ""

    source: Source
    # True when the row's facts were not confirmed in its source: a rule resting on it alone never gives an
    # error (check_profile turns such an error into a warning that says so)
    unverified: bool = False

    @property
    def key(self) -> str:
        raise NotImplementedError

    def cite(self) -> str:
        return f"{self.FILE}#{self.key}: {self.source}"


class TensorflowBuild(Row):
    FILE: ClassVar[str] = "tensorflow.yaml"
    series: Ver
    python_min: Ver
    python_max: Ver
    cuda: Ver
    cudnn: Ver
    gpu_package: Literal["tensorflow", "tensorflow-gpu", "tensorflow[and-cuda]"]
    gpu_capable_packages: list[str]
    gpu_stub: bool = False
    # the GPU code of the Linux x86-64 wheel, read from its fat binaries (like TorchVariant's): SASS cubins
    # and PTX; empty when not read. arch_source names the wheel and its sha256.
    arch_list: list[str] = field(default_factory=list)
    ptx: list[str] = field(default_factory=list)
    arch_source: str = ""
    notes: str = ""

    @property
    def key(self) -> str:
        return self.series


class TensorflowPtxFailure(Row):
    """GPUs on which TensorFlow's wheels fail, rather than JIT-compile, when they carry only older PTX (reported in
    TensorFlow's own issues); check makes the PTX-JIT warning an error there."""

    FILE: ClassVar[str] = "tensorflow.yaml"
    compute_capabilities: list[CC]
    reported: list[Ver]  # the TensorFlow releases (series) the cited issues report failing
    error: str  # what TensorFlow logs

    @property
    def key(self) -> str:
        return "ptx-fails-" + "-".join(self.compute_capabilities)


class TensorflowPackage(Row):
    """A TensorFlow pip distribution that exists from a later release on (tensorflow_packages.yaml)."""

    FILE: ClassVar[str] = "tensorflow_packages.yaml"
    package: Literal["tensorflow-cpu", "tensorflow[and-cuda]"]
    since: Ver

    @property
    def key(self) -> str:
        return self.package


class TorchVariant(Row):
    FILE: ClassVar[str] = "pytorch.yaml"
    tag: Annotated[
        str, _check(re.compile(r"^(cu\d{2,3}|cpu|rocm[0-9.]+)$"), "variant tag such as cu121 or cpu")
    ]
    cuda: Ver | None
    arch_list: list[str]
    ptx: list[str] = field(default_factory=list)
    index_url: str
    # PyPI's plain ``torch==VERSION`` wheel is this build (read from the wheel: torch/version.py's cuda, as the
    # row's source says): a profile that names no build gets it from PyPI, no index of PyTorch's needed
    pypi: bool = False

    @property
    def key(self) -> str:
        return self.tag

    @property
    def find_links(self) -> bool:
        """True when ``index_url`` is a --find-links page (old torch_stable.html), not an index."""
        return self.index_url.endswith(".html")


class TorchRelease(Row):
    FILE: ClassVar[str] = "pytorch.yaml"
    version: Ver
    torchvision: Ver | None
    torchaudio: Ver | None
    python_min: Ver
    python_max: Ver
    # Pythons with wheels that upstream's release matrix calls experimental ("3.12 experimental" for 2.2/2.3)
    python_experimental: list[Ver] = field(default_factory=list)
    # the newest Python the paired torchvision and torchaudio wheels cover, where it is below torch's own window
    # (torch 1.13 has 3.11 wheels, torchvision 0.14 none): the torch/torchvision/torchaudio set installs up to here
    companions_python_max: Ver | None = None
    torchaudio_variant: bool = True
    variants: list[TorchVariant]

    @property
    def key(self) -> str:
        return self.version

    def cite_variant(self, variant: TorchVariant) -> str:
        return f"{self.FILE}#{self.version}+{variant.tag}: {variant.source}"


class CudaToolkit(Row):
    FILE: ClassVar[str] = "cuda.yaml"
    version: Ver
    driver_linux_min: Ver
    driver_windows_min: Ver
    minor_compat_driver_min: Ver | None = None
    minor_compat_driver_windows_min: Ver | None = None
    cc_min: CC
    cc_max: CC
    notes: str = ""

    @property
    def key(self) -> str:
        return self.version


class CudnnRelease(Row):
    FILE: ClassVar[str] = "cudnn.yaml"
    version: Ver
    cuda: list[str]

    @property
    def key(self) -> str:
        return self.version


class GpuModel(Row):
    FILE: ClassVar[str] = "gpus.yaml"
    name: str
    aliases: list[str] = field(default_factory=list)
    compute_capability: CC
    architecture: str
    memory_gb: float | int | None = None
    segment: Literal["desktop", "laptop", "workstation", "datacenter", "synthetic"] = "desktop"
    notes: str = ""

    @property
    def key(self) -> str:
        return self.name

    @property
    def sm(self) -> str:
        return "sm_" + self.compute_capability.replace(".", "")


class GpuArchitecture(Row):
    """An architecture's compute capabilities, the first CUDA Toolkit that supports them and, once dropped, the last
    driver branch that does (NVIDIA's CUDA Toolkit, Driver, and Architecture Matrix). A driver older than the first
    toolkit's driver branch does not know the GPU; one newer than the last branch no longer drives it."""

    FILE: ClassVar[str] = "gpu_drivers.yaml"
    architecture: str
    compute_capabilities: list[CC]
    first_cuda: Ver
    last_driver_branch: int | None = None  # "R580" -> 580; None: still supported

    @property
    def key(self) -> str:
        return self.architecture


class NgcRelease(Row):
    FILE: ClassVar[str] = "ngc.yaml"
    image: str
    tag: str
    framework: Literal["tensorflow", "pytorch"]
    cuda: Ver
    python: Ver
    # None where the release's own notes (as read) do not state the fact: never filled from a neighbouring
    # release. No driver_min: the release is held to its CUDA's minimum (cuda.yaml); no cc_min: to the family's
    # floor and its CUDA's.
    framework_version: str | None = None
    cudnn: Ver | None = None
    ubuntu: Ver | None = None
    driver_min: Ver | None = None
    cc_min: CC | None = None
    datacenter_drivers: list[str] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f"{self.image}:{self.tag}"


class NgcFamily(Row):
    """Rules shared by every monthly release of NVIDIA's framework images (apply even without a release row)."""

    FILE: ClassVar[str] = "ngc.yaml"
    images: list[str]
    cc_min: CC
    # GPU segments (gpus.yaml) that may run a release below its driver minimum through CUDA forward compatibility
    forward_compat_segments: list[str]

    @property
    def key(self) -> str:
        return "family"


class CudaTagRelease(Record):
    """One patch release of the nvidia/cuda tags, as NVIDIA's supported-tags.md / unsupported-tags.md list it."""

    patch: Ver
    # supported: in supported-tags.md; end-of-life: in unsupported-tags.md ("these tags still exist");
    # deleted: removed from the registry (named in a deletion notice, in neither list)
    status: Literal["supported", "end-of-life", "deleted"]
    os: list[str] = field(default_factory=list)  # OSes with base/runtime/devel tags (empty for deleted)
    cudnn: str | None = None  # the -cudnnN- suffix of this patch's cuDNN tags ("8", "9", "" bare); None: none
    cudnn_os: list[str] = field(default_factory=list)  # OSes that also have the cuDNN runtime/devel tags
    eol_on: str | None = None  # NVIDIA's EOL chart: "Marked EOL on" (YYYY-MM-DD)
    deletion_planned: str | None = None  # NVIDIA's EOL chart: "Est deletion date" (YYYY-MM-DD)
    # False for a patch known only from a partial list (cog's table names the cudnn-devel Ubuntu tags): an OS or
    # flavour it does not name is unknown, not proven absent
    complete: bool = True


class CudaImageRow(Row):
    """One CUDA minor of the nvidia/cuda tag scheme. ``releases`` (when given) lists each patch's tags as
    NVIDIA publishes them; ``patches``/``os``/``cudnn`` are their union."""

    FILE: ClassVar[str] = "base_images.yaml"
    cuda: Ver
    status: Literal["available", "deleted"]
    patches: list[str]
    os: list[str]
    cudnn: list[str]  # cuDNN tag suffixes published: "8" for -cudnn8-, "" for a bare -cudnn-
    cudnn_bare: Ver | None = None  # the cuDNN major a bare -cudnn- tag carries (cuDNN 9 from CUDA 12.4 on)
    releases: list[CudaTagRelease] = field(default_factory=list)
    notes: str = ""

    @property
    def key(self) -> str:
        return f"nvidia/cuda:{self.cuda}"

    def release(self, patch: str) -> CudaTagRelease | None:
        return next((r for r in self.releases if r.patch == patch), None)


class OsImageRow(Row):
    FILE: ClassVar[str] = "base_images.yaml"
    image: str
    tags: list[str]
    os: str
    python: Ver
    status: Literal["available", "deleted"]
    digest: str | None = None
    # The C library's version: the newest manylinux_2_X wheel the OS can load is X = its minor.
    glibc: Ver | None = None
    # The user and group names the image's /etc/passwd and /etc/group hold (a profile's user.name must be another);
    # empty: not recorded. ``accounts_source`` says how they are known.
    accounts: list[str] = field(default_factory=list)
    accounts_source: str | None = None

    @property
    def key(self) -> str:
        return f"{self.image}:{self.tags[0]}"


ImageStatus = Literal["available", "end-of-life", "deleted", "unknown"]


class BaseImageInfo(Row):
    """The answer of ``kb.base_image``: what is known about one image reference."""

    FILE: ClassVar[str] = "base_images.yaml"
    image: str
    status: ImageStatus
    cuda: str | None = None
    cudnn: str | None = None
    os: str | None = None
    python: str | None = None
    digest: str | None = None
    # nvidia/cuda's tag flavour: "base" carries only the CUDA runtime's minimum (no libraries), "runtime", "devel"
    flavor: str | None = None
    reason: str = ""
    row_key: str = ""

    @property
    def key(self) -> str:
        return self.row_key or self.image


class PlatformRow(Row):
    """A host platform whose CUDA driver is not the Linux one (WSL 2: the Windows driver serves CUDA)."""

    FILE: ClassVar[str] = "cuda.yaml"
    name: str  # "wsl2"
    driver_table: Literal["linux", "windows"]  # which column of the CUDA table's driver minimums applies
    driver_min: Ver  # the oldest driver that serves CUDA on this platform at all
    cc_min: Ver  # the oldest GPU architecture the platform's CUDA support covers
    notes: str = ""

    @property
    def key(self) -> str:
        return f"platforms.{self.name}"
