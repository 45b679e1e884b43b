"""`envgen init`: a first profile from a few options, no questions asked. With ``--gpu`` it is the profile `envgen
suggest` finds for that GPU (and driver); without, a CPU profile on a plain Debian/Ubuntu base whose own Python is
the one asked for, with the newest framework releases the knowledge base knows for it, each candidate judged by
`envgen check` (the first without an error or warning wins). The profile is named after its file; a commented
``packages.pip`` block shows the requirements.txt lines it takes."""

from __future__ import annotations

from dataclasses import dataclass

import yaml

from envgen.check import HostSpec, check_profile
from envgen.errors import InputError
from envgen.kb import KnowledgeBase
from envgen.kb.engines import ENGINES
from envgen.kb.versions import minor, vtuple
from envgen.suggest.recipes import Recipes
from envgen.suggest.request import Request
from envgen.suggest.search import suggest, with_safe_pins
from envgen.suggest.write import profile_text

PYTHON_DEFAULT = "3.11"
PACKAGES_HINT = """\
# Your packages, as requirements.txt lines: == pins, ranges, extras, markers. `envgen check` names each line that
# floats and `envgen lock` pins what it resolves to:
#   packages:
#     pip: ["transformers==4.40.1", "numpy>=1.24,<2", "rich", 'tomli==2.0.1; python_version < "3.11"']
"""


@dataclass(frozen=True)
class InitRequest:
    name: str
    frameworks: dict[str, str | None]  # framework -> version prefix (parse_frameworks); empty: none
    gpu: str | None = None
    driver: str | None = None
    python: str | None = None


def _plain_base(kb: KnowledgeBase, python: str) -> str:
    """A plain OS image whose own python3 is ``python``'s minor: its slim tag where it has one."""
    rows = [r for r in kb.os_images if r.status == "available" and minor(r.python) == minor(python)]
    if not rows:
        known = sorted({minor(r.python) for r in kb.os_images if r.status == "available"}, key=vtuple)
        asked = vtuple(minor(python))
        # the nearest one the user can have (the newer of two equally near): 3.7 -> 3.8, not the newest known
        nearest = min(known, key=lambda v: (abs(vtuple(v)[1] - asked[1]) if vtuple(v)[0] == asked[0] else 99,
                                            -vtuple(v)[1]))
        raise InputError(f"option --python = {python!r}: no plain base the knowledge base knows has Python "
                         f"{minor(python)} (Debian/Ubuntu images give {', '.join(known)})",
                         fix=f"use --python {nearest} (the nearest), or --gpu GPU (envgen suggest's conda profiles "
                             "bring their own Python)")
    row = rows[-1]
    tag = next((t for t in row.tags if t.endswith("-slim")), row.tags[0])
    return f"{row.image}:{tag}"


def _cpu_frameworks(kb: KnowledgeBase, recipes: Recipes, req: InitRequest, python: str) -> list[dict[str, str]]:
    """Framework choices for a CPU image, newest first: every pairing of the releases whose Python window holds
    ``python`` (torch's CPU build, tensorflow-cpu)."""
    py = vtuple(minor(python))
    torches: list[dict[str, str]] = [{}]
    if "pytorch" in req.frameworks:
        want = req.frameworks["pytorch"]
        torches = [{"pytorch": f"{r.version}+cpu"} for r in sorted(kb.pytorch, key=lambda r: vtuple(r.version),
                                                                   reverse=True)
                   if any(v.tag == "cpu" for v in r.variants) and vtuple(r.python_min) <= py <= vtuple(r.python_max)
                   and (want is None or vtuple(r.version)[:len(vtuple(want))] == vtuple(want))]
    tfs: list[dict[str, str]] = [{}]
    if "tensorflow" in req.frameworks:
        want = req.frameworks["tensorflow"]
        tfs = [{"tensorflow": recipes.tf_version(b.series), "tensorflow_package": "tensorflow-cpu"}
               for b in sorted(kb.tensorflow, key=lambda b: vtuple(b.series), reverse=True)
               if vtuple(b.python_min) <= py <= vtuple(b.python_max)
               and (want is None or vtuple(b.series)[:len(vtuple(want))] == vtuple(want)[:2])]
    return [{**tf, **torch} for tf in tfs for torch in torches]


def _cpu_profile(kb: KnowledgeBase, recipes: Recipes, req: InitRequest) -> str:
    engines = [name for name in req.frameworks if name in ENGINES]
    if engines:
        raise InputError(f"option --frameworks: {engines[0]} is a GPU serving engine, and no --gpu was given",
                         fix=f"name the GPU it serves on: `envgen init --gpu A100 --frameworks {engines[0]}`")
    python = req.python or PYTHON_DEFAULT
    base = _plain_base(kb, python)
    choices = _cpu_frameworks(kb, recipes, req, python)
    if not choices:
        raise InputError(f"option --frameworks: no release of {', '.join(req.frameworks)} the knowledge base knows "
                         f"has a CPU wheel for Python {minor(python)}", fix="choose another --python or framework")
    for frameworks in choices[:12]:
        data: dict[str, object] = {"name": req.name, "base": base, "installer": "pip", "python": minor(python),
                                   "gpu": {"required": False}}
        if frameworks:
            data["frameworks"] = frameworks
        plan = with_safe_pins(kb, data)[0]
        findings = check_profile(plan.profile, kb, HostSpec(), plan=plan)
        if not any(f.severity in ("error", "warning") and not f.code.startswith("lock-") for f in findings):
            head = (f"# Written by `envgen init`: a CPU image ({base}, its own Python {minor(python)})"
                    + (f" with {', '.join(f'{k} {v}' for k, v in frameworks.items() if k != 'tensorflow_package')}"
                       if frameworks else "") + ", the newest the knowledge base knows for it that `envgen check` "
                    "passes.\n# Verify: envgen check <this file>\n")
            return head + yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=120) + PACKAGES_HINT
    raise InputError(f"no CPU stack of {', '.join(req.frameworks)} for Python {minor(python)} passes envgen check",
                     fix="choose another --python, or pin a release in --frameworks")


def init_profile(kb: KnowledgeBase, recipes: Recipes, req: InitRequest) -> str:
    """The first profile's text (commented YAML). Raises InputError when nothing the options allow passes check."""
    if req.gpu is None:
        return _cpu_profile(kb, recipes, req)
    result = suggest(kb, recipes, Request(gpu=req.gpu, frameworks=req.frameworks or {"pytorch": None},
                                          driver=req.driver, python=req.python))
    if not result.single:
        raise InputError(f"no single image holds {' and '.join(req.frameworks)} for {result.gpu_label}: "
                         f"{result.split_reason}", fix="run `envgen suggest ... -o FILE`, which writes two profiles")
    return profile_text(result, result.chosen[0], req.name, via="envgen init") + PACKAGES_HINT
