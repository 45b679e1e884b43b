"""A framework a source leaves to a range (``torch``, ``torch>=2.1``): the newest release the knowledge base knows
inside it that fits what was asked. Its wheels take a Python the profile can have (--python, the source's own
Python, a base's python3), the torchvision/torchaudio lines of the source have a release of its own, and with --gpu a
CUDA build of it is one `envgen check` passes for those GPUs and that driver (the knowledge base's builds first, as
`envgen suggest` takes them: ``kb.builds.torch_builds``). A range that holds no such release keeps its newest one and
says why in one note, which never contradicts the profile written."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from envgen.check import HostSpec, check_profile
from envgen.errors import ProfileError
from envgen.kb import KnowledgeBase
from envgen.kb.builds import torch_builds
from envgen.kb.specifiers import contains
from envgen.kb.versions import vtuple
from envgen.suggest.adopt.frameworks import Lifted
from envgen.suggest.search import with_safe_pins

COMPANIONS = ("torchvision", "torchaudio")


def build_from_check(kb: KnowledgeBase, data: dict[str, Any], version: str, gpus: tuple[str, ...],
                     driver: str | None) -> str | None:
    """The newest CUDA build of torch ``version`` that `envgen check` passes for the GPUs and driver asked for."""
    release = kb.torch_release(version)
    for variant in sorted((v for v in (release.variants if release else []) if v.cuda),
                          key=lambda v: vtuple(v.cuda or "0"), reverse=True):
        frameworks = {**data.get("frameworks", {}), "pytorch": f"{version}+{variant.tag}"}
        trial = {**data, "cuda": variant.cuda, "frameworks": frameworks, "gpu": {"targets": list(gpus)}}
        try:
            plan = with_safe_pins(kb, trial)[0]
        except (ProfileError, ValueError):
            continue
        host = HostSpec(gpus=list(gpus), driver=driver)
        if not any(f.severity == "error" for f in check_profile(plan.profile, kb, host, plan=plan)):
            return variant.tag
    return None


def set_torch(kb: KnowledgeBase, lifted: Lifted, version: str) -> bool:
    """Make ``version`` the profile's torch, with the torchvision/torchaudio of its release for the companions the
    source left to a range; False where a companion line has no release of torch ``version`` inside its range."""
    release = kb.torch_release(version)
    if release is None:
        return False
    chosen, comments = {"pytorch": version}, {}
    for target in COMPANIONS:
        if target not in lifted.ranged:
            continue
        specifier, item = lifted.ranged[target]
        companion = getattr(release, target)
        if companion is None or specifier and not contains(specifier, companion):
            return False
        chosen[target] = companion
        comments[target] = f"{item.origin}: {item.text} (torch {version}'s own release)"
    lifted.fields.update(chosen)
    lifted.comments.update(comments)
    return True


def bring_torch(kb: KnowledgeBase, lifted: Lifted) -> None:
    """A source naming torchvision or torchaudio without torch gets the torch release they belong to (pip would
    install some torch for them anyway; a profile needs it named to install them at all)."""
    if "pytorch" in lifted.fields:
        return
    for target in COMPANIONS:
        given = lifted.fields.get(target)
        release = next((r for r in sorted(kb.pytorch, key=lambda r: vtuple(r.version), reverse=True)
                        if given is not None and getattr(r, target) == given), None)
        if release is not None:
            lifted.fields = {"pytorch": release.version, **lifted.fields}
            lifted.comments["pytorch"] = (f"{target} {given}'s own torch (the knowledge base's pairing): the "
                                          f"source names {target} but not torch")
            return


def torch_candidates(kb: KnowledgeBase, lifted: Lifted, gpus: tuple[str, ...], driver: str | None) -> list[str]:
    """The releases of the source's torch range, newest first; with --gpu only those with a CUDA build for every GPU
    named that the driver runs (by the knowledge base's builds: `envgen check` has the last word)."""
    specifier = lifted.ranged["pytorch"][0]
    releases = [r.version for r in sorted(kb.pytorch, key=lambda r: vtuple(r.version), reverse=True)
                if not specifier or contains(specifier, r.version)]
    ccs = [model.compute_capability for model in (kb.gpu(g) for g in gpus) if model is not None]
    for cc in ccs:
        with_build = {b.release.version for b in torch_builds(kb, cc, driver)}
        releases = [v for v in releases if v in with_build]
    return releases


def choose_torch(kb: KnowledgeBase, lifted: Lifted, gpus: tuple[str, ...], driver: str | None,
                 fits: Callable[[], dict[str, Any] | None], notes: list[str]) -> None:
    """Set the ranged torch of ``lifted`` to the newest release that ``fits`` (the profile data it makes, None where
    no Python fits) and, with ``gpus``, whose CUDA build `envgen check` passes; say so where the range has none."""
    specifier, item = lifted.ranged["pytorch"]
    newest = lifted.fields["pytorch"]
    plain = _first(kb, lifted, torch_candidates(kb, lifted, (), None), lambda version: fits() is not None)
    if gpus:
        def passes(version: str) -> bool:
            data = fits()
            return data is not None and build_from_check(kb, data, version, gpus, driver) is not None

        chosen = _first(kb, lifted, torch_candidates(kb, lifted, gpus, driver), passes)
        if chosen is not None:
            if chosen != newest:
                lifted.comments["pytorch"] = (f"{item.origin}: {item.text} (the newest release the knowledge base "
                                              f"knows in range whose CUDA build runs on --gpu {' '.join(gpus)}"
                                              + (f" with driver {driver})" if driver else ")"))
            return
        notes.append(f"{item.origin}: {item.text}: no release of torch in range has a CUDA build `envgen check` "
                     f"passes for --gpu {' '.join(gpus)}" + (f" with driver {driver}" if driver else "")
                     + " (a newer driver runs newer builds: `envgen suggest --gpu GPU --driver DRIVER` lists them), "
                     "so the profile takes a CPU build; pin torch==X+cuYYY to have one checked")
    if plain is not None:
        set_torch(kb, lifted, plain)
        if plain != newest:
            lifted.comments["pytorch"] = (f"{item.origin}: {item.text} (the newest release the knowledge base knows "
                                          "in range that fits the profile's Python and the source's other lines)")
    else:
        lifted.fields["pytorch"] = newest


def _first(kb: KnowledgeBase, lifted: Lifted, versions: list[str], test: Callable[[str], bool]) -> str | None:
    for version in versions:
        if set_torch(kb, lifted, version) and test(version):
            return version
    return None
