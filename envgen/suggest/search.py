"""`envgen suggest`: search the knowledge base for the stacks that satisfy a GPU, a driver, a Python and a set of
frameworks, and judge each candidate with the same `check_profile` that `envgen check` runs.

Candidates come from :mod:`envgen.kb.builds` (builds with kernels for the GPU that the driver runs), are
paired when both frameworks are asked for (Python windows must meet; the NVIDIA libraries both install from pip
must be able to share one site-packages), ordered by preference, and checked in that order: the first without
errors or warnings wins; a newer one that passes with warnings is reported beside it. When no pair can share
one environment but each framework alone has a stack, the answer is two profiles.

The parts by job: request (what is asked), parts (the builds that match), pythons (Python windows), pairing
(one site-packages for both), ranking (the order), candidates (all of it together), compose (a candidate as a
profile); here the judging and the answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from envgen.check import Finding, HostSpec, check_profile
from envgen.check.context import build_context
from envgen.check.packages.requires import safe_pins
from envgen.errors import InputError
from envgen.kb import KnowledgeBase
from envgen.kb.pypackages import PackageBreak
from envgen.plan.image import ImagePlan, plan_image
from envgen.profile.model import FRAMEWORK_NAMES, Profile
from envgen.suggest.candidates import candidates
from envgen.suggest.compose import build_profile
from envgen.suggest.engines import asked_engine, engine_requests
from envgen.suggest.parts import Candidate
from envgen.suggest.recipes import Recipes
from envgen.suggest.request import FRAMEWORKS, Request, parse_frameworks

# Request and parse_frameworks live in envgen.suggest.request; the CLI takes them from here
__all__ = ["Request", "SuggestResult", "Suggestion", "parse_frameworks", "suggest"]

MAX_CHECKS = 60  # candidates judged by check_profile per search (each ~2-5 ms)
AFTER_WARNED = 8  # once one passes with warnings, how many more are tried for a clean one


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


# --- the search -----------------------------------------------------------------------------------


def with_safe_pins(kb: KnowledgeBase, data: dict[str, object]) -> tuple[ImagePlan, list[tuple[str, PackageBreak]]]:
    """The plan of the profile ``data`` describes, with the pins that keep pip out of a known break (numpy 2 beside
    torch < 2.3) added to its packages.pip (``data`` gains them too), and those pins with their rows. One plan; a
    second only where pins were added (the profile it plans is then another)."""
    names = {FRAMEWORK_NAMES: kb.framework_names}  # the KB's own, not its file read again per candidate
    plan = plan_image(Profile.model_validate(data, context=names), kb)
    pins = safe_pins(build_context(plan.profile, kb, None, plan))
    if pins:
        packages = data.setdefault("packages", {})
        assert isinstance(packages, dict)
        packages["pip"] = [*packages.get("pip", []), *(pin for pin, _ in pins)]
        plan = plan_image(Profile.model_validate(data, context=names), kb)
    return plan, pins


def _judge(kb: KnowledgeBase, req: Request, c: Candidate, gpu_label: str) -> Suggestion:
    gpu = kb.gpu(req.gpu)
    target = req.gpu if gpu is not None and gpu.segment == "synthetic" else None  # "8.6" stays "8.6"
    data, comments = build_profile(kb, req, c, gpu_label, target)
    plan, pins = with_safe_pins(kb, data)
    if c.torch is not None and plan.torch_variant != c.torch.build.variant:
        # a plain torch==X pin planned to another build (the profile's CUDA picks another wheel): the label then
        data, comments = build_profile(kb, req, c, gpu_label, target, plain=False)
        plan, pins = with_safe_pins(kb, data)
    comments += [f"{pin}: {row.shows} fails with a newer one [{row.cite()}]" for pin, row in pins]
    findings = check_profile(plan.profile, kb, HostSpec(gpus=[req.gpu], driver=req.driver), plan=plan)
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
    engine = asked_engine(req)
    if engine is not None:
        return _suggest_engine(kb, recipes, req, engine)
    gpu = kb.gpu(req.gpu)
    if gpu is None:
        raise InputError(f"GPU {req.gpu!r} is not in the knowledge base",
                         fix='give its compute capability instead: --compute-capability 8.6')
    label = gpu.name  # "compute capability 8.6" when a capability was given
    budget = [0]
    ordered, refused = candidates(kb, recipes, req, gpu.compute_capability)
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
            c_alone, _ = candidates(kb, recipes, alone, gpu.compute_capability)
            c1, w1, _ = _first_passing(kb, alone, c_alone, label, budget)
            if c1 or w1:
                singles.append(c1 or w1)  # type: ignore[arg-type]
        if len(singles) == 2:
            reason = _split_reason(refused, failed)
            return SuggestResult(req, label, gpu.compute_capability, singles, split_reason=reason,
                                 checked=budget[0])
    if failed is not None:  # what check says of the newest set pip takes comes first: it is why no stack runs
        why = _split_reason([], failed) + (f" (and {len(refused)} pairs refused before the check)" if refused else "")
    else:
        why = _split_reason(refused, None) if refused else "no build in the knowledge base fits"
    raise InputError(
        f"no stack in the knowledge base runs {', '.join(req.frameworks)} on {label} "
        f"(compute capability {gpu.compute_capability})"
        + (f" with driver {req.driver}" if req.driver else "") + f": {why}",
        fix="relax --python or the framework versions, or upgrade the driver",
    )


def _suggest_engine(kb: KnowledgeBase, recipes: Recipes, req: Request, engine: str) -> SuggestResult:
    """The newest engine release whose torch has a passing stack (the engine's rules judged with it)."""
    tried: list[str] = []
    for sub in engine_requests(kb, req, engine):
        try:
            result = suggest(kb, recipes, sub)
        except InputError as err:
            tried.append(f"{sub.pip[0]} (torch {sub.frameworks['pytorch']}): {err.message}")
            continue
        result.request = req
        result.notes += [f"{t}: skipped" for t in tried[:3]]
        return result
    raise InputError(
        f"no {engine} release in the knowledge base has a stack for {req.gpu}"
        + (f" with driver {req.driver}" if req.driver else "") + (f": {tried[0]}" if tried else ""),
        fix="relax --python or the versions, or upgrade the driver")


def _split_reason(refused: list[str], failed: Suggestion | None) -> str:
    if refused:
        return refused[0] + (f" (and {len(refused) - 1} more pairs refused)" if len(refused) > 1 else "")
    if failed is not None:
        first = next(f for f in failed.findings if f.severity == "error")
        return f"{failed.candidate.label()}: {first.message}"
    return "no pair of builds fits"
