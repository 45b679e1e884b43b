"""What render needs from ``envgen.check.resolve_stack``, in one small frozen value.

Keeping the adapter here means the templates depend on this shape only, not on the check layer's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from envgen.kb.knowledge import KnowledgeBase
from envgen.profile.model import Profile


@dataclass(frozen=True)
class StackPins:
    """Concrete pins for one profile."""

    conda: tuple[str, ...] = ()  # conda specs "name=version[=build]" the stack needs (besides the profile's)
    pip: tuple[str, ...] = ()  # framework pip pins "name==version" (the environment layer)
    pip_index_urls: tuple[str, ...] = ()  # extra wheel indexes (PEP 503), e.g. download.pytorch.org/whl/cu121
    pip_find_links: tuple[str, ...] = ()  # find-links pages, e.g. download.pytorch.org/whl/torch_stable.html
    require_cuda: str | None = None  # the NVIDIA_REQUIRE_CUDA value ("cuda>=12.0", check.require); None on CPU
    expected: Mapping[str, Any] = field(default_factory=dict)  # facts the smoke probe compares against


def resolve_pins(profile: Profile, kb: KnowledgeBase) -> StackPins:
    """Call the check layer's resolver and keep what render needs."""
    from envgen.check import resolve_stack  # the check layer imports the kb; keep import-time work nil

    stack = resolve_stack(profile, kb)
    own_pip = set(profile.packages.pip)
    own_conda = set(profile.packages.conda)
    return StackPins(
        # ResolvedStack.pip is the framework pins followed by the profile's own; extras get their own layer.
        conda=tuple(p for p in stack.conda if p not in own_conda and not p.startswith("python=")),
        pip=tuple(p for p in stack.pip if p not in own_pip),
        pip_index_urls=tuple(stack.pip_index_urls),
        pip_find_links=tuple(stack.pip_find_links),
        require_cuda=stack.nvidia_require_cuda,
        expected=dict(stack.expected),
    )
