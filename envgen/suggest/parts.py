"""The parts a suggested stack is made of: the TensorFlow and torch builds from :mod:`envgen.kb.builds` that
match the request (each with how it gets its CUDA libraries), and a candidate: one or both, and a Python."""

from __future__ import annotations

from dataclasses import dataclass

from envgen.kb import KnowledgeBase, TensorflowBuild
from envgen.kb.builds import TorchBuild, tensorflow_builds, torch_builds
from envgen.kb.libraries import FrameworkLibraries, TensorflowLibraries
from envgen.kb.versions import same_prefix
from envgen.suggest.recipes import Recipes, TorchWheels
from envgen.suggest.request import Request


@dataclass(frozen=True)
class TfPart:
    build: TensorflowBuild
    version: str
    libraries: TensorflowLibraries | None  # None: tensorflow[and-cuda] brings its own
    rank: int


@dataclass(frozen=True)
class TorchPart:
    build: TorchBuild
    libraries: FrameworkLibraries | None  # the KB row: how this release finds its CUDA libraries
    wheels: TorchWheels | None  # the exact nvidia-cudnn pins of its NVIDIA wheel dependencies, where recorded
    rank: int

    @property
    def cudnn_major(self) -> int | None:
        """The cuDNN major its NVIDIA wheel dependencies pull; None: the wheel bundles private copies."""
        if self.libraries is None or self.libraries.provision != "wheel_deps":
            return None
        return self.libraries.cudnn_major


@dataclass(frozen=True)
class Candidate:
    tf: TfPart | None
    torch: TorchPart | None
    python: str
    cudnn_pin: str | None = None  # a shared nvidia-cudnn pin both frameworks load

    def label(self) -> str:
        parts = []
        if self.tf:
            parts.append(f"tensorflow {self.tf.version}")
        if self.torch:
            parts.append(f"torch {self.torch.build.label}")
        return " + ".join(parts) + f", Python {self.python}"


def _matches(version: str, prefix: str | None) -> bool:
    return prefix is None or same_prefix(prefix, version)



def tf_parts(kb: KnowledgeBase, recipes: Recipes, req: Request, cc: str) -> list[TfPart]:
    out: list[TfPart] = []
    for build in tensorflow_builds(kb, cc, req.driver):
        version = recipes.tf_version(build.series)
        if not _matches(version, req.frameworks.get("tensorflow")):
            continue
        if build.gpu_package == "tensorflow[and-cuda]":
            libraries = None
        else:
            libraries = kb.tf_libraries(build.cuda)
            if libraries is None:
                continue  # no recorded way to give this build its CUDA libraries
        out.append(TfPart(build, version, libraries, len(out)))
    return out


def torch_parts(kb: KnowledgeBase, recipes: Recipes, req: Request, cc: str) -> list[TorchPart]:
    out: list[TorchPart] = []
    ranks: dict[str, int] = {}
    for build in torch_builds(kb, cc, req.driver):
        if not _matches(build.release.version, req.frameworks.get("pytorch")):
            continue
        rank = ranks.setdefault(build.release.version, len(ranks))
        libraries = kb.framework_libraries_for("pytorch", build.release.version, None)
        out.append(TorchPart(build, libraries, recipes.torch_wheels_for(build.release.version), rank))
    return out


def cudas(c: Candidate) -> list[str]:
    out = []
    if c.tf:
        out.append(c.tf.build.cuda)
    if c.torch:
        out.append(c.torch.build.cuda)
    return out
