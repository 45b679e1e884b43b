"""CUDA once (issue #44 item 3): where the same CUDA library family arrives twice (a CUDA base image and NVIDIA's
wheels, or two wheels in two directories), the plan says which copy the frameworks load and which one no process
loads, in its notes (``envgen show`` prints them; check's cuda-twice warning repeats it). The copy loaded is the first
one on the search path a framework's dlopen of the bare soname meets (``plan.libraries.search_order``: the named
wheels' directories on LD_LIBRARY_PATH, then the base's loader cache) among those carrying the soname it needs; a
framework whose libraries come with its own wheels (provision ``wheel_deps`` or ``bundled`` in cuda_libraries.yaml:
torch, tensorflow[and-cuda]) loads its own, wherever the others are. Conservative: both copies stay installed (the
base's layers cannot be removed, and a line of packages.pip may serve a program envgen does not know); the note
names the copy to drop."""

from __future__ import annotations

from collections import defaultdict

from envgen.plan.libraries import Libraries, Provider, search_order


def _loaded(libraries: Libraries, family: str, copies: list[Provider]) -> Provider | None:
    """The copy of ``family`` the frameworks load: the first on the search path with a needed soname; None when a
    framework loads its own wheels' copy (it does not search) or no framework needs the family."""
    needs = [n for n in libraries.needs if n.family == family]
    if not needs or any(n.provision != "search_path" for n in needs):
        return None
    sonames = {n.soname for n in needs}
    return next((p for p in search_order(copies) if p.soname in sonames), None)


def _name(p: Provider) -> str:
    return p.distribution or p.origin


def cuda_once_notes(libraries: Libraries) -> list[str]:
    """One note per source whose copies no framework loads: the families, and whose copies are loaded instead."""
    copies: dict[str, list[Provider]] = defaultdict(list)
    for p in libraries.providers:
        copies[p.family].append(p)
    unused: dict[str, tuple[list[str], set[str]]] = defaultdict(lambda: ([], set()))  # other -> (families, loaded)
    for family, found in sorted(copies.items()):
        loaded = _loaded(libraries, family, found) if len({p.directory for p in found}) > 1 else None
        for other in ([] if loaded is None else sorted({_name(p) for p in found if p.directory != loaded.directory})):
            unused[other][0].append(family)
            unused[other][1].add(_name(loaded))  # type: ignore[arg-type]
    return [f"CUDA once: {', '.join(families)} arrive twice; the frameworks load the copies of "
            f"{', '.join(sorted(loaded))} (first on their search path), never those of {other}: both stay installed "
            "(conservative; check's cuda-twice says which source to drop)"
            for other, (families, loaded) in sorted(unused.items())]
