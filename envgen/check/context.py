"""Everything the rules need, looked up once: the image plan the check judges (``plan.image``, the one the render
writes), its stack (``plan.stack``: the profile, the knowledge base, the rows the profile points at), the host and
the GPUs both name."""

from __future__ import annotations

from dataclasses import dataclass, field

from envgen.check.findings import HostSpec
from envgen.kb import BaseImageInfo, KnowledgeBase, NgcRelease, TensorflowBuild, TorchRelease, TorchVariant
from envgen.plan.image import ImagePlan, plan_image
from envgen.plan.libraries import Libraries
from envgen.plan.stack import Stack, Target
from envgen.profile import Profile


@dataclass(frozen=True)
class CheckContext:
    plan: ImagePlan  # what the image will install, planned once for every rule (the render writes the same plan)
    host: HostSpec = field(default_factory=HostSpec)
    targets: list[Target] = field(default_factory=list)  # the profile's GPUs, then the host's

    @property
    def stack(self) -> Stack:
        return self.plan.stack

    @property
    def profile(self) -> Profile:
        return self.stack.profile

    @property
    def kb(self) -> KnowledgeBase:
        return self.stack.kb

    @property
    def gpu(self) -> bool:
        return self.stack.gpu

    @property
    def tf_build(self) -> TensorflowBuild | None:
        return self.stack.tf_build

    @property
    def tf_package(self) -> str | None:
        return self.stack.tf_package

    @property
    def torch_release(self) -> TorchRelease | None:
        return self.stack.torch_release

    @property
    def torch_variant(self) -> TorchVariant | None:
        return self.stack.torch_variant

    @property
    def torch_variant_note(self) -> str:
        return self.stack.torch_variant_note

    @property
    def base(self) -> BaseImageInfo | None:
        return self.stack.base

    @property
    def ngc(self) -> NgcRelease | None:
        return self.stack.ngc

    @property
    def libraries(self) -> Libraries:
        return self.stack.libraries


def build_context(profile: Profile, kb: KnowledgeBase, host: HostSpec | None,
                  plan: ImagePlan | None = None) -> CheckContext:
    """The context of one profile's check; ``plan``: the profile's plan when the caller made it already."""
    host = host or HostSpec()
    plan = plan_image(profile, kb) if plan is None else plan
    targets = _one_per_gpu([*plan.stack.targets, *(Target(t, "host", kb.gpu(t)) for t in host.gpus)])
    return CheckContext(plan, host, targets)


def _one_per_gpu(targets: list[Target]) -> list[Target]:
    """Each GPU once, however it is named (target `GeForce RTX 4090` and host `RTX 4090` are one card, judged
    once, under the profile's name); GPUs the KB does not know stay as given."""
    seen: set[str] = set()
    out = []
    for target in targets:
        key = target.model.name if target.model is not None else f"?{target.label}"
        if key not in seen:
            seen.add(key)
            out.append(target)
    return out
