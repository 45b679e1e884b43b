"""The knowledge base's tables, one list of rows per data file, and the lookups by key that the queries
(envgen.kb.knowledge) and the cross-table check (envgen.kb.validate) both use."""

from __future__ import annotations

from dataclasses import dataclass, field

from envgen.kb.distributions import FrameworkConda, FrameworkPip, FrameworkRefused
from envgen.kb.engines import EngineArches, EngineArchesUnread, EngineRequires, EngineTrap, EngineUnread
from envgen.kb.extensions import ExtensionPackage, HostCompiler, TorchCudnnPin
from envgen.kb.families import BaseFamily, PythonSetup
from envgen.kb.indexed import NvidiaWheelFile, PinnedRelease
from envgen.kb.leave_out import LeaveOut
from envgen.kb.libraries import CudaLibrary, FrameworkLibraries, TensorflowLibraries
from envgen.kb.models import (
    CudaImageRow,
    CudaToolkit,
    CudnnRelease,
    GpuArchitecture,
    GpuModel,
    NgcFamily,
    NgcRelease,
    OsImageRow,
    PlatformRow,
    Row,
    TensorflowBuild,
    TensorflowPackage,
    TensorflowPtxFailure,
    TorchRelease,
)
from envgen.kb.platforms import GpuRefusal, PlatformWheel
from envgen.kb.pypackages import CommonPipNames, FrameworkRequires, PackageBreak, PipName
from envgen.kb.strip import StripLicence, StripRefused, StripTool
from envgen.kb.versions import minor, same_prefix, vtuple
from envgen.kb.wheel_libraries import GpuBuilds, WheelLibraries


@dataclass(frozen=True)
class Tables:
    tensorflow: list[TensorflowBuild] = field(default_factory=list)
    tensorflow_ptx_failures: list[TensorflowPtxFailure] = field(default_factory=list)
    pytorch: list[TorchRelease] = field(default_factory=list)
    cuda_toolkits: list[CudaToolkit] = field(default_factory=list)
    cudnn_releases: list[CudnnRelease] = field(default_factory=list)
    gpus: list[GpuModel] = field(default_factory=list)
    gpu_architectures: list[GpuArchitecture] = field(default_factory=list)
    ngc_releases: list[NgcRelease] = field(default_factory=list)
    ngc_family: list[NgcFamily] = field(default_factory=list)
    cuda_images: list[CudaImageRow] = field(default_factory=list)
    os_images: list[OsImageRow] = field(default_factory=list)
    platforms: list[PlatformRow] = field(default_factory=list)
    cuda_libraries: list[CudaLibrary] = field(default_factory=list)
    tensorflow_libraries: list[TensorflowLibraries] = field(default_factory=list)
    tensorflow_packages: list[TensorflowPackage] = field(default_factory=list)
    framework_libraries: list[FrameworkLibraries] = field(default_factory=list)
    extensions: list[ExtensionPackage] = field(default_factory=list)
    host_compilers: list[HostCompiler] = field(default_factory=list)
    torch_cudnn_pins: list[TorchCudnnPin] = field(default_factory=list)
    package_breaks: list[PackageBreak] = field(default_factory=list)
    framework_requires: list[FrameworkRequires] = field(default_factory=list)
    pinned_releases: list[PinnedRelease] = field(default_factory=list)
    nvidia_wheel_files: list[NvidiaWheelFile] = field(default_factory=list)
    leave_out: list[LeaveOut] = field(default_factory=list)
    strip_tools: list[StripTool] = field(default_factory=list)
    strip_licences: list[StripLicence] = field(default_factory=list)
    strip_refused: list[StripRefused] = field(default_factory=list)
    engine_requires: list[EngineRequires] = field(default_factory=list)
    engine_unread: list[EngineUnread] = field(default_factory=list)
    engine_traps: list[EngineTrap] = field(default_factory=list)
    engine_arches: list[EngineArches] = field(default_factory=list)
    engine_arches_unread: list[EngineArchesUnread] = field(default_factory=list)
    pip_names: list[PipName] = field(default_factory=list)
    common_pip_names: list[CommonPipNames] = field(default_factory=list)
    framework_pip: list[FrameworkPip] = field(default_factory=list)
    framework_conda: list[FrameworkConda] = field(default_factory=list)
    framework_refused: list[FrameworkRefused] = field(default_factory=list)
    base_families: list[BaseFamily] = field(default_factory=list)
    python_setups: list[PythonSetup] = field(default_factory=list)
    wheel_libraries: list[WheelLibraries] = field(default_factory=list)
    gpu_builds: list[GpuBuilds] = field(default_factory=list)
    platform_wheels: list[PlatformWheel] = field(default_factory=list)
    gpu_refusals: list[GpuRefusal] = field(default_factory=list)

    def cuda(self, version: str) -> CudaToolkit | None:
        want = minor(version)
        return next((row for row in self.cuda_toolkits if row.version == want), None)

    def cudnn(self, version: str) -> CudnnRelease | None:
        """Exact release, else the newest release of the series ("8.9" -> 8.9.7; "8.6.0.163" -> 8.6.0)."""
        matches = [
            row
            for row in self.cudnn_releases
            if same_prefix(version, row.version) or same_prefix(row.version, version)
        ]
        if not matches:
            want = minor(version)
            matches = [row for row in self.cudnn_releases if minor(row.version) == want]
        return max(matches, key=lambda r: vtuple(r.version), default=None)

    @staticmethod
    def cudnn_supports(row: CudnnRelease, cuda: str) -> bool:
        for entry in row.cuda:
            parts = vtuple(entry)
            if len(parts) == 1 and vtuple(cuda)[0] == parts[0]:
                return True
            if len(parts) >= 2 and vtuple(cuda)[:2] == parts[:2]:
                return True
        return False


# top-level key in a data file -> (row model, the Tables field it fills): the loader reads these, so a new table is
# a field above and a line here
TABLES: dict[str, tuple[type[Row], str]] = {
    "tensorflow": (TensorflowBuild, "tensorflow"),
    "tensorflow_ptx_failures": (TensorflowPtxFailure, "tensorflow_ptx_failures"),
    "pytorch": (TorchRelease, "pytorch"),
    "cuda": (CudaToolkit, "cuda_toolkits"),
    "cudnn": (CudnnRelease, "cudnn_releases"),
    "gpus": (GpuModel, "gpus"),
    "gpu_architectures": (GpuArchitecture, "gpu_architectures"),
    "ngc": (NgcRelease, "ngc_releases"),
    "ngc_family": (NgcFamily, "ngc_family"),
    "cuda_images": (CudaImageRow, "cuda_images"),
    "os_images": (OsImageRow, "os_images"),
    "platforms": (PlatformRow, "platforms"),
    "cuda_libraries": (CudaLibrary, "cuda_libraries"),
    "framework_libraries": (FrameworkLibraries, "framework_libraries"),
    "tensorflow_libraries": (TensorflowLibraries, "tensorflow_libraries"),
    "tensorflow_packages": (TensorflowPackage, "tensorflow_packages"),
    "extensions": (ExtensionPackage, "extensions"),
    "host_compilers": (HostCompiler, "host_compilers"),
    "torch_cudnn_pins": (TorchCudnnPin, "torch_cudnn_pins"),
    "python_packages": (PackageBreak, "package_breaks"),
    "framework_requires": (FrameworkRequires, "framework_requires"),
    "pinned_releases": (PinnedRelease, "pinned_releases"),
    "nvidia_wheel_files": (NvidiaWheelFile, "nvidia_wheel_files"),
    "leave_out": (LeaveOut, "leave_out"),
    "strip_tools": (StripTool, "strip_tools"),
    "strip_licences": (StripLicence, "strip_licences"),
    "strip_refused": (StripRefused, "strip_refused"),
    "engine_requires": (EngineRequires, "engine_requires"),
    "engine_unread": (EngineUnread, "engine_unread"),
    "engine_traps": (EngineTrap, "engine_traps"),
    "engine_arches": (EngineArches, "engine_arches"),
    "engine_arches_unread": (EngineArchesUnread, "engine_arches_unread"),
    "framework_pip": (FrameworkPip, "framework_pip"),
    "framework_conda": (FrameworkConda, "framework_conda"),
    "framework_refused": (FrameworkRefused, "framework_refused"),
    "pip_names": (PipName, "pip_names"),
    "common_pip_names": (CommonPipNames, "common_pip_names"),
    "base_families": (BaseFamily, "base_families"),
    "python_setups": (PythonSetup, "python_setups"),
    "wheel_libraries": (WheelLibraries, "wheel_libraries"),
    "gpu_builds": (GpuBuilds, "gpu_builds"),
    "platform_wheels": (PlatformWheel, "platform_wheels"),
    "gpu_refusals": (GpuRefusal, "gpu_refusals"),
}
