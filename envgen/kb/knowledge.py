"""The knowledge base object and its (pure) queries."""

from __future__ import annotations

import functools
import re
from collections.abc import Collection

from envgen.errors import KnowledgeBaseError
from envgen.kb.cuda_tags import cuda_image
from envgen.kb.distributions import FrameworkNames
from envgen.kb.distributions import framework_names as names_of
from envgen.kb.engines import EngineRequires
from envgen.kb.extensions import ExtensionPackage
from envgen.kb.families import BaseFamily, BaseQuery, PythonSetup, family_for
from envgen.kb.images import parse_image
from envgen.kb.libraries import CudaLibrary, FrameworkLibraries, TensorflowLibraries
from envgen.kb.models import (
    BaseImageInfo,
    GpuArchitecture,
    GpuModel,
    NgcFamily,
    NgcRelease,
    OsImageRow,
    PlatformRow,
    Row,
    TensorflowBuild,
    TorchRelease,
    TorchVariant,
)
from envgen.kb.names import model_number, normalise
from envgen.kb.pypackages import FrameworkRequires, PipName
from envgen.kb.tables import Tables
from envgen.kb.versions import minor, same_version, vtuple

# compute capability queries: "8.6", "sm_86" / "sm_120", and bare "86" / "120" (only when plausible)
_CC_DOTTED = re.compile(r"^(\d{1,2})\.(\d)$")
_CC_SM = re.compile(r"^sm_(\d{1,2})(\d)$")
_CC_BARE = re.compile(r"^(\d{1,2})(\d)$")


class KnowledgeBase(Tables):
    """The tables (envgen.kb.tables: a frozen dataclass, whose fields, __init__ and __eq__ this class inherits) and
    the pure queries over them."""

    # --- consistency -------------------------------------------------------------------------

    def problems(self) -> list[str]:
        """Cross-table inconsistencies (empty when consistent)."""
        from envgen.kb.validate import problems  # lazy: not on the path of `envgen check`

        return problems(self)

    def validate(self) -> None:
        """Raise :class:`KnowledgeBaseError` listing every inconsistency."""
        found = self.problems()
        if found:
            raise KnowledgeBaseError(f"{len(found)} knowledge-base inconsistencies: " + "; ".join(found))

    # --- CUDA libraries ---------------------------------------------------------------------

    def cuda_library(self, family: str) -> CudaLibrary | None:
        return next((row for row in self.cuda_libraries if row.family == family), None)

    def tf_libraries(self, cuda: str) -> TensorflowLibraries | None:
        """How a profile gives a TensorFlow build for ``cuda`` its libraries (tensorflow_libraries.yaml)."""
        return next((r for r in self.tensorflow_libraries if r.cuda == cuda), None)

    def cudart_soname(self, cuda: str) -> str | None:
        """The CUDA runtime a build for ``cuda`` loads (cuda_libraries.yaml's cudart row): libcudart.so.11.0."""
        row = self.cuda_library("cudart")
        return row.soname(cuda) if row is not None else None

    def serves_cuda(self, provided: str, needed: str) -> bool:
        """Does a CUDA runtime ``provided`` serve a build for ``needed``? When both load one soname (the cudart
        row: one per minor before 11, one per major from 11); a release the row lacks serves only its own minor."""
        have, want = self.cudart_soname(provided), self.cudart_soname(needed)
        return have == want if have and want else minor(provided) == minor(needed)

    def framework_libraries_for(self, framework: str, version: str, package: str | None) -> FrameworkLibraries | None:
        """How ``framework`` ``version`` (installed as ``package``) finds its CUDA libraries; a row for the
        exact package wins over an ``any`` row."""
        rows = [r for r in self.framework_libraries if r.framework == framework and r.covers(version, package)]
        rows.sort(key=lambda r: r.package == "any")
        return rows[0] if rows else None

    @functools.cached_property
    def unverified_cites(self) -> frozenset[str]:
        """The ``cite()`` of every row marked ``unverified`` (torch variants cited as release+variant), gathered
        once per knowledge base: every check_profile reads it, and `envgen suggest` runs dozens."""
        rows: list[Row] = [*self.tensorflow, *self.cuda_toolkits, *self.cudnn_releases, *self.gpus,
                           *self.ngc_releases, *self.ngc_family, *self.cuda_images, *self.os_images,
                           *self.extensions, *self.host_compilers, *self.torch_cudnn_pins, *self.package_breaks,
                           *self.platforms]
        out = {r.cite() for r in rows if r.unverified}
        out |= {ext.cite_release(r) for ext in self.extensions for r in ext.releases if r.unverified}
        for release in self.pytorch:
            if release.unverified:
                out.add(release.cite())
            out |= {release.cite_variant(v) for v in release.variants if v.unverified}
        return frozenset(out)

    @functools.cached_property
    def framework_names(self) -> FrameworkNames:
        """The framework distributions' names (framework_distributions.yaml) as the profile normaliser reads them."""
        return names_of(self.framework_pip, self.framework_conda, self.framework_refused)

    # --- GPU extension packages (extensions.yaml) ----------------------------------------------

    def extension(self, package: str) -> ExtensionPackage | None:
        """The row of a pip distribution (canonical name: ``flash-attn``, ``cupy-cuda12x``, ``jax``)."""
        return next((row for row in self.extensions if row.package == package), None)

    # --- the Python-package layer ----------------------------------------------------------

    @functools.cached_property
    def _requires_by_distribution(self) -> dict[str, list[FrameworkRequires]]:
        """framework_requires.yaml's rows by distribution (check asks for a few, suggest for thousands)."""
        out: dict[str, list[FrameworkRequires]] = {}
        for row in self.framework_requires:
            out.setdefault(row.distribution, []).append(row)
        return out

    def requires_of(self, distribution: str, version: str, build: str | None = None) -> FrameworkRequires | None:
        """The recorded Requires-Dist of exactly this release (and, for torch, CUDA build), else None."""
        base = version.split("+", 1)[0]
        rows = [r for r in self._requires_by_distribution.get(distribution, ())
                if same_version(r.version, base) and (r.build is None or build is None or r.build == build)]
        return next((r for r in rows if r.version == base), rows[0] if rows else None)

    def engine_row(self, distribution: str, version: str) -> EngineRequires | None:
        """The recorded Requires-Dist of one vLLM/SGLang/sgl-kernel/FlashInfer release, else None."""
        base = version.split("+", 1)[0]
        rows = [r for r in self.engine_requires if r.distribution == distribution]
        return next((r for r in rows if r.version == base),
                    next((r for r in rows if same_version(r.version, base) and "post" not in r.version + base), None))

    def pip_name(self, name: str) -> PipName | None:
        """The row of a distribution name that does not install what users mean ("pytorch" -> torch)."""
        return next((row for row in self.pip_names if row.name == name), None)

    @functools.cached_property
    def known_distributions(self) -> frozenset[str]:
        """Every distribution name (PEP 503) the tables name: the common list, the frameworks and their
        Requires-Dist, the extension packages, both sides of every package break, the TensorFlow distributions."""
        names = {n for row in self.common_pip_names for n in row.names}
        names |= {r.distribution for r in self.framework_requires}
        names |= {req.name for r in self.framework_requires for req in r.requires}
        names |= {e.package for e in self.extensions}
        names |= {r.distribution for r in self.engine_requires}
        names |= {n for row in self.package_breaks for side in (row.package, row.other) if side for n in side.names}
        names |= {"tensorflow", "tensorflow-cpu", "tensorflow-gpu", "torch", "torchvision", "torchaudio"}
        return frozenset(names)

    # --- TensorFlow -------------------------------------------------------------------------

    def tensorflow_build(self, version: str) -> TensorflowBuild | None:
        """Row of the release series: "2.12.0" -> the 2.12 row."""
        series = minor(version)
        return next((row for row in self.tensorflow if row.series == series), None)

    def tensorflow_package(self, version: str, gpu: bool) -> str:
        """The pip distribution to install for a GPU (or CPU-only) build of ``version``."""
        if not gpu:
            return "tensorflow-cpu" if self.tf_package_exists("tensorflow-cpu", version) else "tensorflow"
        row = self.tensorflow_build(version)
        if row is None:
            return "tensorflow[and-cuda]" if self.tf_package_exists("tensorflow[and-cuda]", version) else "tensorflow"
        return row.gpu_package

    def tf_package_exists(self, package: str, version: str) -> bool:
        """Whether the distribution exists for ``version`` (tensorflow_packages.yaml: its first release)."""
        row = next((r for r in self.tensorflow_packages if r.package == package), None)
        return row is not None and vtuple(version) >= vtuple(row.since)

    def tensorflow_gpu_last(self) -> str | None:
        """The last series ``tensorflow-gpu`` installs a GPU build of (tensorflow.yaml: later ones are stubs)."""
        series = [r.series for r in self.tensorflow if not r.gpu_stub and "tensorflow-gpu" in r.gpu_capable_packages]
        return max(series, key=vtuple, default=None)

    # --- PyTorch ----------------------------------------------------------------------------

    def torch_release(self, version: str) -> TorchRelease | None:
        base = version.split("+", 1)[0]
        return next((row for row in self.pytorch if same_version(row.version, base)), None)

    def torch_variant(self, version: str, cuda: str | None) -> TorchVariant | None:
        """The variant built for exactly this CUDA minor (``None`` -> the CPU variant), else None."""
        release = self.torch_release(version)
        if release is None:
            return None
        for variant in release.variants:
            if cuda is None and variant.cuda is None:
                return variant
            if cuda is not None and variant.cuda is not None and minor(variant.cuda) == minor(cuda):
                return variant
        return None

    def torch_variant_by_tag(self, version: str, tag: str) -> TorchVariant | None:
        release = self.torch_release(version)
        if release is None:
            return None
        return next((v for v in release.variants if v.tag == tag), None)

    # --- CUDA, cuDNN ------------------------------------------------------------------------

    # --- GPUs -------------------------------------------------------------------------------

    def gpu_near(self, query: str) -> GpuModel | None:
        """The GPU an unknown name most likely means ("RTX4090" -> RTX 4090): the same name without its spaces,
        else the closest known name (difflib); for a "did you mean"."""
        import difflib

        names = {normalise(n): g for g in self.gpus for n in (g.name, *g.aliases)}
        squeezed = normalise(query).replace(" ", "")
        same = next((g for n, g in names.items() if n.replace(" ", "") == squeezed), None)
        if same is not None:
            return same
        close = difflib.get_close_matches(normalise(query), list(names), n=1, cutoff=0.75)
        return names[close[0]] if close else None

    def gpu(self, name_or_cc: str) -> GpuModel | None:
        query = name_or_cc.strip()
        cc = self._cc_query(query.lower())
        if cc is not None:
            arch = next((g.architecture for g in self.gpus if g.compute_capability == cc), "unknown")
            return GpuModel(
                name=f"compute capability {cc}",
                compute_capability=cc,
                architecture=arch,
                segment="synthetic",
                source="given as a compute capability",
            )
        wanted = normalise(query)
        for gpu in self.gpus:
            if wanted == normalise(gpu.name) or any(wanted == normalise(a) for a in gpu.aliases):
                return gpu
        # a bare model number ("4090"): the one GPU whose name is that number after its series word
        by_number = [
            gpu
            for gpu in self.gpus
            if any(wanted == model_number(normalise(n)) for n in (gpu.name, *gpu.aliases))
        ]
        return by_number[0] if len(by_number) == 1 else None

    def _cc_query(self, query: str) -> str | None:
        """"X.Y" and "sm_XY"/"sm_XYZ" as given; bare digits "XY"/"XYZ" only when the major is a plausible compute
        capability (1 up to the highest major in gpus.yaml), so "4090" or "1080" stay GPU names."""
        m = _CC_DOTTED.match(query) or _CC_SM.match(query)
        if m is None:
            m = _CC_BARE.match(query)
            highest = max((vtuple(g.compute_capability)[0] for g in self.gpus), default=12)
            if m is None or int(m.group(1)) > highest:
                return None
        major = int(m.group(1))
        return f"{major}.{m.group(2)}" if major >= 1 else None

    # --- images -----------------------------------------------------------------------------

    def ngc(self, image_ref: str) -> NgcRelease | None:
        ref = parse_image(image_ref)
        return next((r for r in self.ngc_releases if r.image == ref.repository and r.tag == ref.tag), None)

    def ngc_nearest(self, image_ref: str) -> NgcRelease | None:
        """For a release without a row: the known release of the same image closest before it (YY.MM of the tag),
        else the earliest after it; None when the image has no rows or the tag has no YY.MM."""
        ref = parse_image(image_ref)
        want = _ngc_month(ref.tag)
        if want is None:
            return None
        rows: list[tuple[tuple[int, int], NgcRelease]] = []
        for row in self.ngc_releases:
            month = _ngc_month(row.tag)
            if row.image == ref.repository and month is not None:
                rows.append((month, row))
        before = [x for x in rows if x[0] <= want]
        pick = max(before, key=lambda x: x[0], default=None) or min(rows, key=lambda x: x[0], default=None)
        return pick[1] if pick else None

    def gpu_architecture(self, compute_capability: str) -> GpuArchitecture | None:
        """The architecture row (first CUDA, last driver branch) that lists ``compute_capability``."""
        return next((a for a in self.gpu_architectures if compute_capability in a.compute_capabilities), None)

    def ngc_family_for(self, image_ref: str) -> NgcFamily | None:
        """The family rules for an NGC framework image, whether or not its release has a row."""
        repository = parse_image(image_ref).repository
        return next((f for f in self.ngc_family if repository in f.images), None)

    def base_family(self, base: str | BaseQuery, labels: Collection[str] = ()) -> BaseFamily:
        """The family of an image reference or of a profile's base (base_families.yaml; every image has one)."""
        return family_for(self.base_families, base, labels)

    def python_setup(self, name: str) -> PythonSetup:
        """A ``python_setups`` row by name (a family's ``python``/``python_provided``, or "conda")."""
        found = next((row for row in self.python_setups if row.name == name), None)
        if found is None:
            raise KnowledgeBaseError(f"base_families.yaml has no python_setups row {name!r}")
        return found

    def base_image(self, image_ref: str) -> BaseImageInfo | None:
        """The image's row, read from the table its family's ``facts`` names (base_families.yaml): nvidia/cuda's tag
        scheme, NGC's release table, else the OS images (a family without a table of its own may still be one)."""
        ref = parse_image(image_ref)
        facts = self.base_family(image_ref).facts
        if facts == "cuda_images":
            return cuda_image(self.cuda_images, self.os_images, image_ref, ref.tag, ref.digest)
        ngc = self.ngc(image_ref) if facts == "ngc" else None
        if ngc is not None:
            return BaseImageInfo(
                image=image_ref,
                status="available",
                cuda=ngc.cuda,
                cudnn=ngc.cudnn,
                os=f"ubuntu{ngc.ubuntu}" if ngc.ubuntu else None,
                python=ngc.python,
                digest=ref.digest,
                row_key=ngc.key,
                source=ngc.source,
            )
        for row in self.os_images:
            if row.image == ref.repository and ref.tag in row.tags:
                return BaseImageInfo(
                    image=image_ref,
                    status=row.status,
                    os=row.os,
                    python=row.python,
                    digest=ref.digest or row.digest,
                    row_key=row.key,
                    source=row.source,
                )
        return None

    def platform(self, name: str) -> PlatformRow | None:
        """A host platform's row ("wsl2"), or None for plain Linux."""
        return next((row for row in self.platforms if row.name == name), None)

    def os_image(self, os_name: str) -> OsImageRow | None:
        """The OS row ("ubuntu22.04") an image is built on: its apt python3 is the Python a pip profile gets."""
        return next((row for row in self.os_images if row.os == os_name), None)

    def bases_with_python(self, python_minor: str) -> list[str]:
        """Available OS images whose own python3 is ``python_minor`` ("3.11" -> ["debian:12"])."""
        return [row.key for row in self.os_images if row.status == "available" and minor(row.python) == python_minor]

    def glibc(self, image_ref: str) -> str | None:
        """The glibc version of the OS an image is built on (its `os`), or None when unknown."""
        info = self.base_image(image_ref)
        if info is None or info.os is None:
            return None
        return next((row.glibc for row in self.os_images if row.os == info.os and row.glibc), None)


def _ngc_month(tag: str) -> tuple[int, int] | None:
    """(YY, MM) of an NGC tag such as 24.05-py3."""
    m = re.match(r"^(\d{2})\.(\d{2})", tag)
    return (int(m.group(1)), int(m.group(2))) if m else None
