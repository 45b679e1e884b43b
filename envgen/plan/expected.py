"""What the smoke probe compares the image against (``/etc/envgen/profile.json``'s ``expected``): one typed
document with a schema id, made from the image plan; the probe (stdlib only) reads it as JSON, and nothing of the
profile's own fields as expectations. envgen.expected/2 adds ``torchvision`` and ``torchaudio`` (the probe read them
from the profile's ``frameworks`` before). envgen.expected/3 adds ``distributions`` (what the import check imports: the
frameworks, the ``packages.pip`` lines whose marker holds, the conda packages; the probe read the profile's
``frameworks`` and ``packages`` lists before) and ``base_provides.envgen_env`` (where envgen's own environment is:
the probe spells no image path)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Literal

from envgen.kb.versions import vtuple
from envgen.plan.requirements import PlannedRequirement, split_pin
from envgen.plan.stack import Stack
from envgen.profile.requirements import canonical
from envgen.records import Record

EXPECTED_SCHEMA = "envgen.expected/3"


class _Document(Record):
    """A part of the document: frozen, no key beyond its fields, and read by key as the JSON is
    (``expected["libraries"]``)."""

    __pydantic_config__ = {"extra": "forbid"}  # noqa: RUF012 (pydantic's config, read only)

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)


class ExpectedLibrary(_Document):
    """One soname the GPU frameworks load, the version it was built with, who needs it, who provides it."""

    soname: str
    family: str
    min_version: str | None
    cuda_major: int | None  # None: a soname a wheel loads whose CUDA major neither it nor the wheel says
    needed_by: list[str]
    providers: list[str]
    # framework -> provision (search_path | wheel_deps | bundled); a packages.pip distribution -> dt_needed (its
    # wheel's objects name it: wheel_libraries.yaml)
    how: dict[str, str]


class ExpectedTarget(_Document):
    name: str
    compute_capability: str | None


class ExpectedBase(_Document):
    """The frameworks the base image provides (``base_provides``), the interpreter whose environment holds them, and
    the other distributions it holds (``base_provides.packages``)."""

    python: str
    frameworks: dict[str, str]  # frameworks: key -> the version declared
    # envgen's own environment (layout.ENV): a provided framework imported from there is not the base's; None where the
    # base's interpreter lives in it (a base envgen built: its environment is the one envgen's goes on top of)
    envgen_env: str | None
    packages: dict[str, str] | None = None  # PEP 503 name -> the version declared; written only when some are named


class ExpectedExtension(_Document):
    """A GPU extension package of packages.pip (kb/data/extensions.yaml): the probe imports it and calls it once."""

    package: str
    module: str
    version: str


DistributionKind = Literal["framework", "pip", "conda"]


class ExpectedDistribution(_Document):
    """One distribution the import check imports: a framework (its own checks say when it is missing), a
    ``packages.pip`` line whose marker holds in the image (missing: a failure), a conda package (maybe no Python
    distribution at all: missing says nothing)."""

    name: str  # PEP 503: "opencv-python-headless", "tensorflow-cpu"
    kind: DistributionKind
    specifier: str  # "==2.12.0", ">=1.20,<2", "" (unpinned); a conda spec's "=1.26.4"
    marker: str | None  # the line's environment marker (the plan found it holds; the probe evaluates it again)
    origin: str  # where it was asked for: "frameworks.tensorflow", "packages.pip[2]", "packages.conda[0]"


class Expected(_Document):
    python: str
    tensorflow: str | None
    tensorflow_cuda: str | None
    tensorflow_cudnn: str | None
    torch: str | None
    torch_cuda: str | None  # the CUDA of the torch build the plan chose (None: a CPU build, or no torch)
    torchvision: str | None
    torchaudio: str | None
    cuda: str | None
    cudnn: str | None
    gpu_required: bool
    arch_list: list[str]
    ptx: list[str]
    libraries: list[ExpectedLibrary] | None  # None: the base's own frameworks find theirs (base_provides)
    gpu_targets: list[ExpectedTarget]
    distributions: list[ExpectedDistribution]  # what the import check imports, in install order
    base_provides: ExpectedBase | None = None  # written only when the profile has base_provides
    extensions: list[ExpectedExtension] | None = None  # written only when packages.pip has one
    schema_id: str = EXPECTED_SCHEMA

    def document(self) -> dict[str, Any]:
        """The JSON the probe reads, its schema id under ``schema`` (as the smoke report's)."""
        doc = self.model_dump(mode="json", exclude={"schema_id"})
        for key in ("base_provides", "extensions"):
            if doc[key] is None:
                del doc[key]
        if doc.get("base_provides") and doc["base_provides"]["packages"] is None:
            del doc["base_provides"]["packages"]
        return {"schema": self.schema_id, **doc}


def expected_libraries(stack: Stack) -> list[ExpectedLibrary]:
    """What the smoke test's library tier loads: each soname a GPU framework of the image needs, the version
    it was built with (cudart, cuDNN), who needs it, and the wheel that provides it."""
    merged: dict[str, dict[str, Any]] = {}
    for need in stack.libraries.needs:
        entry = merged.setdefault(need.soname, {
            "soname": need.soname, "family": need.family, "min_version": need.min_version,
            "cuda_major": need.cuda_major, "needed_by": [], "providers": [], "how": {}})
        if need.framework not in entry["needed_by"]:
            entry["needed_by"].append(need.framework)
        entry["how"][need.framework] = need.provision
        older = entry["min_version"] is None or vtuple(need.min_version or "0") > vtuple(entry["min_version"])
        if need.min_version and older:
            entry["min_version"] = need.min_version
        if need.distribution and need.distribution not in entry["providers"]:
            entry["providers"].append(need.distribution)
    _wheel_needs(stack, merged)
    return [ExpectedLibrary(**merged[k]) for k in sorted(merged)]


def _wheel_needs(stack: Stack, merged: dict[str, dict[str, Any]]) -> None:
    """Add the CUDA libraries the recorded wheels of ``packages.pip`` load (``Stack.wheel_libraries``), so the probe
    loads what check found provided."""
    needs = stack.wheel_libraries.needs
    majors = {n.distribution: {m.cuda_major for m in needs if m.distribution == n.distribution and m.cuda_major}
              for n in needs}
    for need in needs:
        if need.optional and need.provided_by is None:
            continue  # an optional feature's library the image lacks: check says so (wheel-lib-optional)
        wheel_major = majors[need.distribution]
        major = need.cuda_major or (next(iter(wheel_major)) if len(wheel_major) == 1 else None)
        entry = merged.setdefault(need.soname, {
            "soname": need.soname, "family": need.family, "min_version": None, "cuda_major": major,
            "needed_by": [], "providers": [], "how": {}})
        if need.distribution not in entry["needed_by"]:
            entry["needed_by"].append(need.distribution)
        entry["how"][need.distribution] = "dt_needed"
        if need.provided_by and need.provided_by not in entry["providers"]:
            entry["providers"].append(need.provided_by)


# a framework pin's distribution -> its key under the profile's ``frameworks`` (TensorFlow's has several names)
_FRAMEWORK_KEYS = {"torch": "pytorch", "torchvision": "torchvision", "torchaudio": "torchaudio"}


def expected_distributions(framework_pins: Iterable[str], requirements: Iterable[PlannedRequirement],
                           conda: Iterable[str]) -> list[ExpectedDistribution]:
    """What the import check imports, in install order, each name once: the frameworks' pins (installed or the
    base's own), the ``packages.pip`` lines whose marker holds in the image, the conda packages."""
    out: dict[str, ExpectedDistribution] = {}
    for pin in framework_pins:
        name, _, version = split_pin(pin)
        out.setdefault(name, ExpectedDistribution(name=name, kind="framework", specifier=f"=={version}", marker=None,
                                                  origin=f"frameworks.{_FRAMEWORK_KEYS.get(name, 'tensorflow')}"))
    for req in requirements:
        if req.applies:
            out.setdefault(req.name, ExpectedDistribution(name=req.name, kind="pip", specifier=req.specifier,
                                                          marker=req.marker, origin=req.origin))
    for index, spec in enumerate(conda):
        head = spec.split("::")[-1].strip()
        name = re.split(r"[=<>!~ \[]", head, maxsplit=1)[0]
        out.setdefault(canonical(name), ExpectedDistribution(name=canonical(name), kind="conda",
                                                             specifier=head[len(name):].strip(), marker=None,
                                                             origin=f"packages.conda[{index}]"))
    return list(out.values())
