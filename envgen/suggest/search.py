"""`envgen suggest`: search the knowledge base for the stacks that satisfy a GPU, a driver, a Python and a set of
frameworks, and judge each candidate with the same `check_profile` that `envgen check` runs.

Candidates come from :mod:`envgen.kb.builds` (builds with kernels for the GPU that the driver runs), are
paired when both frameworks are asked for (Python windows must meet; the NVIDIA libraries both install from pip
must be able to share one site-packages), ordered by preference, and checked in that order: the first without
errors or warnings wins; a newer one that passes with warnings is reported beside it. When no pair can share
one environment but each framework alone has a stack, the answer is two profiles.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from envgen.check import Finding, HostSpec, check_profile
from envgen.check.context import build_context
from envgen.check.rules_packages import safe_pins
from envgen.errors import InputError
from envgen.kb import KnowledgeBase, TensorflowBuild
from envgen.kb.builds import TorchBuild, driver_fit, tensorflow_builds, torch_builds
from envgen.kb.libraries import FrameworkLibraries, TensorflowLibraries
from envgen.kb.versions import major, same_prefix, vtuple
from envgen.profile.model import FRAMEWORK_NAMES, Profile
from envgen.suggest.recipes import Recipes, TorchWheels

Prefer = Literal["newest", "lts"]
FRAMEWORKS = ("tensorflow", "pytorch")
BASE = "ubuntu:22.04"
MAX_CHECKS = 60  # candidates judged by check_profile per search (each ~2-5 ms)
AFTER_WARNED = 8  # once one passes with warnings, how many more are tried for a clean one


@dataclass(frozen=True)
class Request:
    gpu: str  # a GPU name or "X.Y"
    frameworks: dict[str, str | None]  # framework -> version prefix asked for (None: any)
    driver: str | None = None
    python: str | None = None
    prefer: Prefer = "newest"


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


@dataclass
class Suggestion:
    candidate: Candidate
    profile: dict[str, object]
    findings: list[Finding]
    comments: list[str]


@dataclass
class SuggestResult:
    request: Request
    gpu_label: str
    cc: str
    chosen: list[Suggestion]  # one profile, or two when no single image holds the frameworks
    split_reason: str = ""
    newer_with_warnings: Suggestion | None = None
    checked: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def single(self) -> bool:
        return len(self.chosen) == 1


# --- parsing the request ------------------------------------------------------------------------


def parse_frameworks(text: str) -> dict[str, str | None]:
    """``"tensorflow,pytorch"`` or ``"tensorflow==2.18,torch==2.3"`` -> {framework: version prefix or None}."""
    out: dict[str, str | None] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, _, version = item.replace("==", "=").partition("=")
        name = {"tf": "tensorflow", "torch": "pytorch"}.get(name.strip().lower(), name.strip().lower())
        if name not in FRAMEWORKS:
            raise InputError(
                f"option --frameworks: {item!r} is not a framework envgen knows",
                fix="use tensorflow and/or pytorch, optionally with a version: tensorflow==2.15,pytorch",
            )
        if version and not all(p.isdigit() for p in version.split(".")):
            raise InputError(f"option --frameworks: version {version!r} of {name} is not digits and dots",
                             fix=f"write {name}==2.1 or leave the version out")
        out[name] = version or None
    if not out:
        raise InputError("option --frameworks is empty", fix="give tensorflow, pytorch or tensorflow,pytorch")
    return out


def _matches(version: str, prefix: str | None) -> bool:
    return prefix is None or same_prefix(prefix, version)


def _pythons(low: str, high: str) -> list[str]:
    lo, hi = vtuple(low), vtuple(high)
    return [f"3.{m}" for m in range(hi[1], lo[1] - 1, -1)] if lo[0] == hi[0] == 3 else []


# --- the parts ----------------------------------------------------------------------------------


def _tf_parts(kb: KnowledgeBase, recipes: Recipes, req: Request, cc: str) -> list[TfPart]:
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


def _torch_parts(kb: KnowledgeBase, recipes: Recipes, req: Request, cc: str) -> list[TorchPart]:
    out: list[TorchPart] = []
    ranks: dict[str, int] = {}
    for build in torch_builds(kb, cc, req.driver):
        if not _matches(build.release.version, req.frameworks.get("pytorch")):
            continue
        rank = ranks.setdefault(build.release.version, len(ranks))
        libraries = kb.framework_libraries_for("pytorch", build.release.version, None)
        out.append(TorchPart(build, libraries, recipes.torch_wheels_for(build.release.version), rank))
    return out


def _share(tf: TfPart, torch: TorchPart) -> tuple[bool, str, str | None]:
    """Can both frameworks' NVIDIA libraries live in one site-packages? (ok, why not, shared cuDNN pin).

    NVIDIA's wheels install into site-packages/nvidia/<family>/lib whatever their CUDA major, so two CUDA majors
    collide on file names (libcudnn.so.8, libcurand.so.10, libnccl.so.2), and two exact pins of one distribution
    cannot both be installed."""
    if torch.cudnn_major is None:
        return True, "", None  # torch bundles private copies
    t_major = major(torch.build.cuda)
    tf_major = major(tf.build.cuda)
    if tf.libraries is None:  # tensorflow[and-cuda]: exact nvidia-* pins of its own
        return False, (
            f"tensorflow[and-cuda] {tf.version} and torch {torch.build.label} both install NVIDIA's pip wheels "
            f"(nvidia-*-cu{tf_major} / -cu{t_major}) with their own exact pins into the same site-packages/nvidia"
        ), None
    if tf.libraries.pip_cudnn is None:
        return True, "", None  # TF's libraries come from conda, torch's from its wheels
    tf_cudnn_major = major(tf.libraries.cudnn)
    if t_major != tf_major and torch.cudnn_major == tf_cudnn_major:
        return False, (
            f"TensorFlow {tf.version}'s nvidia-cudnn-cu{tf_major} and torch {torch.build.label}'s "
            f"nvidia-cudnn-cu{t_major} both install site-packages/nvidia/cudnn/lib/libcudnn.so.{tf_cudnn_major}"
        ), None
    if t_major != tf_major:
        return True, "", None
    if torch.cudnn_major != tf_cudnn_major:
        return False, (
            f"TensorFlow {tf.version} needs nvidia-cudnn-cu{tf_major} {tf_cudnn_major}.x, torch "
            f"{torch.build.label} pins cuDNN {torch.cudnn_major}.x of the same distribution"
        ), None
    pin = torch.wheels.pin(torch.build.cuda) if torch.wheels else None
    if pin is None or vtuple(pin) < vtuple(tf.build.cudnn):
        return False, (
            f"torch {torch.build.label}'s nvidia-cudnn-cu{t_major} pin is "
            f"{'not recorded' if pin is None else pin + ', older than TensorFlow needs'}"
        ), None
    return True, "", pin


def _torch_window(torch: TorchPart) -> tuple[str, str]:
    """The Python range with wheels, experimental Pythons included (the check warns on those), cut to what the
    paired torchvision and torchaudio wheels cover: the suggested set has to install as a whole."""
    release = torch.build.release
    high = max([release.python_max, *release.python_experimental], key=vtuple)
    if release.companions_python_max is not None:
        high = min(high, release.companions_python_max, key=vtuple)
    return release.python_min, high


def _python_choices(req: Request, windows: list[tuple[str, str]]) -> list[str]:
    low = max((w[0] for w in windows), key=vtuple)
    high = min((w[1] for w in windows), key=vtuple)
    choices = _pythons(low, high)
    if req.python is not None:
        want = ".".join(req.python.split(".")[:2])
        return [want] if want in choices else []
    return choices[:2]  # the newest, and the one below it in case the newest is only experimental


def _cudas(c: Candidate) -> list[str]:
    out = []
    if c.tf:
        out.append(c.tf.build.cuda)
    if c.torch:
        out.append(c.torch.build.cuda)
    return out


class _Ranker:
    """Sort keys for candidates, with the per-CUDA and per-release facts computed once per search (a search
    orders thousands of candidates)."""

    def __init__(self, kb: KnowledgeBase, req: Request, cc: str) -> None:
        self.kb, self.req, self.cc = kb, req, cc
        self._cuda: dict[str, tuple[int, tuple[int, ...]]] = {}
        self._settled: dict[str, bool] = {}

    def _cuda_facts(self, cuda: str) -> tuple[int, tuple[int, ...]]:
        """(foreseen warnings, minimum driver) of a CUDA: minor-version compatibility, and a newest target of an
        older major than the GPU (PTX JIT)."""
        if cuda not in self._cuda:
            toolkit = self.kb.cuda(cuda)
            warn = int(driver_fit(self.kb, cuda, self.req.driver) != "ok")
            if toolkit is not None and vtuple(toolkit.cc_max)[0] < vtuple(self.cc)[0]:
                warn += 1
            self._cuda[cuda] = (warn, vtuple(toolkit.driver_linux_min) if toolkit else ())
        return self._cuda[cuda]

    def settled(self, torch: TorchPart) -> bool:
        """The last patch of a torch series that had at least one patch release (x.y.1 or later)."""
        version = torch.build.release.version
        if version not in self._settled:
            v = vtuple(version)
            series = [vtuple(r.version) for r in self.kb.pytorch if vtuple(r.version)[:2] == v[:2]]
            self._settled[version] = len(v) > 2 and v[2] >= 1 and v == max(series)
        return self._settled[version]

    def key(self, c: Candidate) -> tuple[object, ...]:
        """Candidates the check will not warn about first (so a clean stack is not missed behind a long run of
        newer ones that warn), then by preference."""
        facts = [self._cuda_facts(cuda) for cuda in _cudas(c)]
        warnings = sum(f[0] for f in facts)
        if c.torch is not None and c.python in c.torch.build.release.python_experimental:
            warnings += 1
        staleness = (c.tf.rank if c.tf else 0) + (c.torch.rank if c.torch else 0)
        tf_rank = c.tf.rank if c.tf else 0
        python = tuple(-x for x in vtuple(c.python))
        if self.req.prefer == "lts":
            # settled releases: not the newest TensorFlow series that fits, and a torch series that already had a
            # patch release (its last patch); among those the fewest releases behind, then the oldest driver
            unsettled = (c.tf is not None and c.tf.rank == 0) + (c.torch is not None and not self.settled(c.torch))
            driver_need = max((f[1] for f in facts), default=())
            return (warnings, unsettled, staleness, driver_need, tf_rank, python)
        newest_cuda = tuple(-x for x in max((vtuple(cu) for cu in _cudas(c)), default=()))
        return (warnings, staleness, tf_rank, newest_cuda, python)


def _candidates(kb: KnowledgeBase, recipes: Recipes, req: Request, cc: str) -> tuple[list[Candidate], list[str]]:
    """Ordered candidates, and the reasons pairs were refused (for the no-single-image answer)."""
    want_tf, want_torch = "tensorflow" in req.frameworks, "pytorch" in req.frameworks
    tfs = _tf_parts(kb, recipes, req, cc) if want_tf else []
    torches = _torch_parts(kb, recipes, req, cc) if want_torch else []
    out: list[Candidate] = []
    refused: list[str] = []
    if want_tf and want_torch:
        for tf in tfs:
            for torch in torches:
                windows = [(tf.build.python_min, tf.build.python_max), _torch_window(torch)]
                pythons = _python_choices(req, windows)
                if not pythons:
                    refused.append(
                        f"no Python fits both TensorFlow {tf.version} ({tf.build.python_min}-{tf.build.python_max}) "
                        f"and torch {torch.build.release.version} ({torch.build.release.python_min}-"
                        f"{torch.build.release.python_max}){' and ' + req.python if req.python else ''}")
                    continue
                ok, why, pin = _share(tf, torch)
                if not ok:
                    refused.append(why)
                    continue
                out += [Candidate(tf, torch, py, pin) for py in pythons]
    elif want_tf:
        for tf in tfs:
            window = (tf.build.python_min, tf.build.python_max)
            out += [Candidate(tf, None, py) for py in _python_choices(req, [window])]
    else:
        for torch in torches:
            out += [Candidate(None, torch, py) for py in _python_choices(req, [_torch_window(torch)])]
    out.sort(key=_Ranker(kb, req, cc).key)
    return out, refused


# --- a candidate as a profile --------------------------------------------------------------------


def _slug(text: str) -> str:
    keep = "".join(ch if ch.isalnum() else "-" for ch in text.lower())
    return "-".join(p for p in keep.split("-") if p)[:40] or "gpu"


@dataclass
class _Choice:
    """What a candidate's frameworks put into the profile, gathered part by part."""

    frameworks: dict[str, str] = field(default_factory=dict)
    conda: list[str] = field(default_factory=list)
    pip: list[str] = field(default_factory=list)
    cuda: str | None = None
    cudnn: str | None = None
    comments: list[str] = field(default_factory=list)


def _tf_choice(c: Candidate, out: _Choice) -> None:
    tf = c.tf
    if tf is None:
        return
    out.frameworks["tensorflow"] = tf.version
    out.comments.append(f"tensorflow {tf.version}: built for CUDA {tf.build.cuda} / cuDNN {tf.build.cudnn}, "
                        f"Python {tf.build.python_min}-{tf.build.python_max} [{tf.build.cite()}]")
    if tf.libraries is None:
        out.comments.append(f"installed as tensorflow[and-cuda]: pip brings the CUDA {tf.build.cuda} libraries")
        out.cuda = tf.build.cuda
        return
    libs = tf.libraries
    out.conda += libs.conda
    out.cuda, out.cudnn = libs.cuda, libs.cudnn
    if libs.pip_cudnn:
        out.pip.append(c.cudnn_pin and libs.pip_cudnn.split("==")[0] + "==" + c.cudnn_pin or libs.pip_cudnn)
        out.cudnn = c.cudnn_pin or out.cudnn
    shared = ""
    if c.cudnn_pin and c.torch and c.torch.wheels:
        shared = f"; cuDNN {c.cudnn_pin} shared with torch's own pin [{c.torch.wheels.cite()}]"
    out.comments.append(f"TensorFlow loads CUDA {libs.cuda} from the image: {', '.join(libs.conda + out.pip)}"
                        f"{shared} [{libs.cite()}{' (unverified)' if libs.unverified else ''}]")


def _torch_choice(c: Candidate, gpu_label: str, out: _Choice) -> None:
    if not c.torch:
        return
    t = c.torch.build
    out.frameworks["pytorch"] = t.label
    if t.release.torchvision:
        out.frameworks["torchvision"] = t.release.torchvision
    if t.release.torchaudio:
        out.frameworks["torchaudio"] = t.release.torchaudio
    how = {"exact": "a cubin for", "binary": "a same-major cubin that runs on"}.get(t.coverage, "PTX for")
    out.comments.append(f"torch {t.label}: {how} {gpu_label} (built for {' '.join(t.variant.arch_list)}), "
                        f"Python {t.release.python_min}-{t.release.python_max} [{t.release.cite_variant(t.variant)}]")
    out.comments.append(
        f"torch's CUDA {t.cuda} libraries come with the wheel "
        + ("(bundled)" if c.torch.cudnn_major is None or c.torch.libraries is None
           else f"as NVIDIA pip wheels (cuDNN {c.torch.cudnn_major}.x) [{c.torch.libraries.cite()}]"))
    if out.cuda is None:
        out.cuda = t.cuda


def _driver_comments(kb: KnowledgeBase, req: Request, c: Candidate) -> list[str]:
    needs = sorted({(cu, tk.driver_linux_min) for cu in _cudas(c) if (tk := kb.cuda(cu))}, key=lambda x: vtuple(x[0]))
    out = []
    for cu, drv in needs:
        fit = driver_fit(kb, cu, req.driver)
        state = {"ok": "", "minor-compat": " (this driver runs it through minor-version compatibility)"}.get(fit, "")
        out.append(f"CUDA {cu} needs a Linux driver >= {drv}{state} [{kb.cuda(cu).cite()}]")  # type: ignore[union-attr]
    return out


def build_profile(
    kb: KnowledgeBase, req: Request, c: Candidate, gpu_label: str, target: str | None = None
) -> tuple[dict[str, object], list[str]]:
    """The profile for a candidate, and one comment per choice naming the rows it rests on."""
    names = [n for n, part in (("tf", c.tf), ("torch", c.torch)) if part]
    chosen = _Choice()
    _tf_choice(c, chosen)
    _torch_choice(c, gpu_label, chosen)
    assert chosen.cuda is not None
    comments = [*chosen.comments, *_driver_comments(kb, req, c)]
    comments.append(f"Python {c.python}: the newest both frameworks publish wheels for" if len(names) == 2
                    else f"Python {c.python}: the newest this release publishes wheels for")
    comments.append(f"base {BASE} with conda (conda-forge): the frameworks bring or install their own CUDA "
                    "user space; the host's driver is the only thing taken from the machine")
    profile: dict[str, object] = {
        "name": _slug(f"{gpu_label}-{'-'.join(names)}"),
        "description": f"{c.label()} for {gpu_label} (written by envgen suggest)"[:200],
        "base": BASE,
        "installer": "conda",
        "cuda": chosen.cuda,
    }
    if chosen.cudnn:
        profile["cudnn"] = chosen.cudnn
    profile["python"] = c.python
    profile["frameworks"] = chosen.frameworks
    profile["gpu"] = {"targets": [target or gpu_label]}
    packages = {k: v for k, v in (("conda", chosen.conda), ("pip", chosen.pip)) if v}
    if packages:
        profile["packages"] = packages
    profile["channels"] = ["conda-forge"]
    if c.tf:
        profile["env"] = {"TF_FORCE_GPU_ALLOW_GROWTH": "true"}
    return profile, comments


# --- the search -----------------------------------------------------------------------------------


def _judge(kb: KnowledgeBase, req: Request, c: Candidate, gpu_label: str) -> Suggestion:
    gpu = kb.gpu(req.gpu)
    target = req.gpu if gpu is not None and gpu.segment == "synthetic" else None  # "8.6" stays "8.6"
    data, comments = build_profile(kb, req, c, gpu_label, target)
    names = {FRAMEWORK_NAMES: kb.framework_names}  # the KB's own, not its file read again per candidate
    profile = Profile.model_validate(data, context=names)
    pins = safe_pins(build_context(profile, kb, None))
    if pins:  # packages pip would otherwise take too new (numpy 2 beside torch < 2.3)
        packages = data.setdefault("packages", {})
        assert isinstance(packages, dict)
        packages["pip"] = [*packages.get("pip", []), *(pin for pin, _ in pins)]
        comments += [f"{pin}: {row.shows} fails with a newer one [{row.cite()}]" for pin, row in pins]
        profile = Profile.model_validate(data, context=names)
    findings = check_profile(profile, kb, HostSpec(gpus=[req.gpu], driver=req.driver))
    return Suggestion(c, data, findings, comments)


def _first_passing(kb: KnowledgeBase, req: Request, ordered: list[Candidate], gpu_label: str,
                   budget: list[int]) -> tuple[Suggestion | None, Suggestion | None, Suggestion | None]:
    """(first clean, first passing with warnings, first failing) in order, within the check budget."""
    clean = warned = failed = None
    since_warned = 0
    for c in ordered:
        if budget[0] >= MAX_CHECKS or since_warned > AFTER_WARNED:
            break
        if warned is not None:
            since_warned += 1
        budget[0] += 1
        s = _judge(kb, req, c, gpu_label)
        errors = [f for f in s.findings if f.severity == "error"]
        if errors:
            failed = failed or s
            continue
        if any(f.severity == "warning" for f in s.findings):
            warned = warned or s
            continue
        clean = s
        break
    return clean, warned, failed


def suggest(kb: KnowledgeBase, recipes: Recipes, req: Request) -> SuggestResult:
    gpu = kb.gpu(req.gpu)
    if gpu is None:
        raise InputError(f"GPU {req.gpu!r} is not in the knowledge base",
                         fix='give its compute capability instead: --compute-capability 8.6')
    label = gpu.name  # "compute capability 8.6" when a capability was given
    budget = [0]
    ordered, refused = _candidates(kb, recipes, req, gpu.compute_capability)
    clean, warned, failed = _first_passing(kb, req, ordered, label, budget)
    best = clean or warned
    if best is not None:
        newer = warned if clean is not None else None  # _first_passing stops at the first clean one
        return SuggestResult(req, label, gpu.compute_capability, [best], newer_with_warnings=newer,
                             checked=budget[0])
    if len(req.frameworks) == 2:
        singles: list[Suggestion] = []
        for name in FRAMEWORKS:
            alone = Request(req.gpu, {name: req.frameworks[name]}, req.driver, req.python, req.prefer)
            c_alone, _ = _candidates(kb, recipes, alone, gpu.compute_capability)
            c1, w1, _ = _first_passing(kb, alone, c_alone, label, budget)
            if c1 or w1:
                singles.append(c1 or w1)  # type: ignore[arg-type]
        if len(singles) == 2:
            reason = _split_reason(refused, failed)
            return SuggestResult(req, label, gpu.compute_capability, singles, split_reason=reason,
                                 checked=budget[0])
    why = _split_reason(refused, failed) if (refused or failed) else "no build in the knowledge base fits"
    raise InputError(
        f"no stack in the knowledge base runs {', '.join(req.frameworks)} on {label} "
        f"(compute capability {gpu.compute_capability})"
        + (f" with driver {req.driver}" if req.driver else "") + f": {why}",
        fix="relax --python or the framework versions, or upgrade the driver",
    )


def _split_reason(refused: list[str], failed: Suggestion | None) -> str:
    if refused:
        return refused[0] + (f" (and {len(refused) - 1} more pairs refused)" if len(refused) > 1 else "")
    if failed is not None:
        first = next(f for f in failed.findings if f.severity == "error")
        return f"{failed.candidate.label()}: {first.message}"
    return "no pair of builds fits"
