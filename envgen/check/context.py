"""Everything the rules need, looked up once: the image plan the check judges (``plan.image``, the one the render
writes), the knowledge base its caller gives, the stack the rules' planning helpers read (``plan.stack.Stack``: the
plan's rows with that KB), the host and the GPUs both name."""

from __future__ import annotations

import functools
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
    kb: KnowledgeBase  # the command's knowledge base (the one the plan was made with)
    host: HostSpec = field(default_factory=HostSpec)
    targets: list[Target] = field(default_factory=list)  # the profile's GPUs, then the host's

    @functools.cached_property
    def stack(self) -> Stack:
        """The plan's rows with the KB: what the planning helpers the rules call read (``plan.extensions``)."""
        plan = self.plan
        return Stack(profile=plan.profile, kb=self.kb, family=plan.family, targets=list(plan.targets),
                     tf_build=plan.tf_build, tf_package=plan.tensorflow_package, torch_release=plan.torch_release,
                     torch_variant=plan.torch_variant, base=plan.base, ngc=plan.ngc, defaults=plan.defaults)

    @property
    def profile(self) -> Profile:
        return self.plan.profile

    @property
    def gpu(self) -> bool:
        return self.plan.profile.is_gpu

    @property
    def tf_build(self) -> TensorflowBuild | None:
        return self.plan.tf_build

    @property
    def tf_package(self) -> str | None:
        return self.plan.tensorflow_package

    @property
    def torch_release(self) -> TorchRelease | None:
        return self.plan.torch_release

    @property
    def torch_variant(self) -> TorchVariant | None:
        return self.plan.torch_variant

    @property
    def base(self) -> BaseImageInfo | None:
        return self.plan.base

    @property
    def ngc(self) -> NgcRelease | None:
        return self.plan.ngc

    @property
    def libraries(self) -> Libraries:
        return self.plan.libraries


def build_context(profile: Profile, kb: KnowledgeBase, host: HostSpec | None,
                  plan: ImagePlan | None = None) -> CheckContext:
    """The context of one profile's check; ``plan``: the profile's plan when the caller made it already (with
    ``kb``)."""
    host = host or HostSpec()
    plan = plan_image(profile, kb) if plan is None else plan
    targets = _one_per_gpu([*plan.targets, *(Target(t, "host", kb.gpu(t)) for t in host.gpus)])
    return CheckContext(plan, kb, host, targets)


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
