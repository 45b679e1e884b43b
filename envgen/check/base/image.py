"""Base image: the tag exists (nvidia/cuda deletes end-of-life tags) and matches the profile's CUDA/cuDNN."""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import finding
from envgen.kb import BaseImageInfo
from envgen.kb.versions import minor, vtuple

_LOCAL = "profile: local_base: true"


def base_exists(ctx: CheckContext) -> list[Finding]:
    profile, info = ctx.profile, ctx.base
    if profile.local_base:
        detail = f" (the registry tag is {info.status})" if info is not None and info.status != "available" else ""
        return [finding("info", "base-local", f"base {profile.base} is built locally{detail}: no registry digest, "
                        "so digest pinning is skipped", "nothing to do", info.cite() if info else _LOCAL)]
    if info is None:
        return [finding("warning", "base-unknown", f"base image {profile.base} is not in the knowledge base: envgen "
                        "cannot tell whether the tag exists or which Python it carries",
                        "use a base listed in base_images.yaml or check the tag with `docker manifest inspect`",
                        "base_images.yaml")]
    if info.status == "deleted":
        return [finding("error", "base-deleted", f"base image {profile.base} was deleted from the registry "
                        "(NVIDIA removes end-of-life CUDA tags): the build fails at FROM",
                        "use a plain OS base with CUDA from conda (cudatoolkit) or a supported CUDA tag",
                        info.cite())]
    if info.status == "end-of-life":
        return [finding("warning", "base-end-of-life",
                        f"base image {profile.base}: {info.reason}; the build works until the tag is deleted",
                        "move to the CUDA minor's supported patch tag (NVIDIA's supported-tags.md) before it is "
                        "deleted", info.cite())]
    if info.status == "unknown":
        return [_tag_unknown(profile.base, info)]
    return []


def _tag_unknown(base: str, info: BaseImageInfo) -> Finding:
    """A tag the KB does not list: invalid (off the tag scheme), never published (a row for its CUDA minor
    whose tag lists lack this patch/OS/cuDNN), or just not known."""
    invalid = "does not follow" in info.reason
    proven = not invalid and bool(info.row_key)
    code = "base-tag-invalid" if invalid else "base-tag-not-published" if proven else "base-tag-unknown"
    return finding("error" if invalid or proven else "warning", code,
                   f"base image {base}: {info.reason or 'tag not known'}"
                   + (' ("manifest unknown" at build time)' if proven else ""),
                   "use a published tag (see https://hub.docker.com/r/nvidia/cuda/tags)", info.cite())


def base_matches_profile(ctx: CheckContext) -> list[Finding]:
    profile, info = ctx.profile, ctx.base
    if info is None or info.cuda is None:
        return []
    out = []
    if profile.cuda and minor(info.cuda) != minor(profile.cuda):
        out.append(
            finding(
                "error",
                "base-cuda-mismatch",
                f"the profile says CUDA {profile.cuda} but {profile.base} carries CUDA {info.cuda}",
                f'set cuda: "{minor(info.cuda)}" or change the base',
                info.cite(),
            )
        )
    if profile.cudnn and info.cudnn and vtuple(info.cudnn)[0] != vtuple(profile.cudnn)[0]:
        out.append(
            finding(
                "error",
                "base-cudnn-mismatch",
                f"the profile says cuDNN {profile.cudnn} but {profile.base} carries cuDNN {info.cudnn}",
                "make them agree",
                info.cite(),
            )
        )
    if profile.cudnn and ctx.plan.family.facts == "cuda_images" and info.cudnn is None:
        out.append(
            finding(
                "warning",
                "base-no-cudnn",
                f"the profile says cuDNN {profile.cudnn} but {profile.base} is a tag without cuDNN",
                "use the -cudnn tag or install cuDNN from conda/pip",
                info.cite(),
            )
        )
    return out


RULES = [base_exists, base_matches_profile]
