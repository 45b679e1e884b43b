"""The values a profile leaves to the knowledge base, decided in planning (loading reads no KB): the CUDA an NGC
release or the frameworks' wheels bring (a torch build tag ``+cu121``, ``tensorflow[and-cuda]``), and an NGC
release's cuDNN and Python. ``planned_profile`` returns the profile with them filled in, and one line per value
saying where it came from (``envgen show`` prints them as defaults); the plan, its check, its render and its hash
read that profile."""

from __future__ import annotations

from envgen.errors import ProfileError
from envgen.kb import KnowledgeBase
from envgen.kb.families import BaseFamily
from envgen.profile import Profile


def _ngc(profile: Profile, kb: KnowledgeBase, family: BaseFamily) -> dict[str, tuple[str, str]]:
    """An NGC base's CUDA, cuDNN and Python, left out of the profile: from the KB's row for the release (without a
    row, the nearest known release's CUDA and Python; check warns ngc-unknown, naming what it could not check)."""
    if not family.release_table:
        return {}
    keys: tuple[str, ...] = ("cuda", "cudnn", "python")
    row, why = kb.ngc(profile.base), "the NGC release's"
    if row is None:
        row = kb.ngc_nearest(profile.base)
        why = "assumed from the nearest known NGC release; this release has no row"
        keys = ("cuda", "python")
    if row is None:
        return {}
    values = {"cuda": ".".join(row.cuda.split(".")[:2]), "cudnn": row.cudnn, "python": row.python}
    return {key: (value, f"{why}, {row.FILE}#{row.key}") for key in keys
            if getattr(profile, key) is None and (value := values[key])}


def _wheels(profile: Profile, kb: KnowledgeBase) -> tuple[str, str] | None:
    """(CUDA, why) the frameworks' wheels bring, for a GPU profile without ``cuda``: the torch build's (its tag),
    or TensorFlow's tested one for ``tensorflow[and-cuda]``."""
    if profile.cuda is not None or not profile.is_gpu:
        return None
    torch, tf = profile.frameworks.pytorch, profile.frameworks.tensorflow
    if torch is not None and "+cu" in torch:
        base, _, tag = torch.partition("+")
        variant, release = kb.torch_variant_by_tag(base, tag), kb.torch_release(base)
        if variant is None or variant.cuda is None or release is None:
            return None
        return ".".join(variant.cuda.split(".")[:2]), f"torch {torch}'s wheels, {release.cite().split(':')[0]}"
    if tf is not None and profile.frameworks.tensorflow_package == "tensorflow[and-cuda]":
        build = kb.tensorflow_build(tf)
        if build is None:
            return None
        return build.cuda, f"tensorflow[and-cuda] {tf}'s wheels, {build.cite().split(':')[0]}"
    return None


def planned_profile(profile: Profile, kb: KnowledgeBase, family: BaseFamily) -> tuple[Profile, tuple[str, ...]]:
    """``profile`` with the values it leaves to the knowledge base filled in, and a line per value ("cuda: '12.1'
    (torch 2.2.2+cu121's wheels, pytorch.yaml#2.2.2)"); the profile itself when it leaves none."""
    filled = _ngc(profile, kb, family)
    if "cuda" not in filled and (wheels := _wheels(profile, kb)) is not None:
        filled["cuda"] = wheels
    planned = profile.model_copy(update={key: value for key, (value, _) in filled.items()}) if filled else profile
    _refuse_unfilled(planned)
    return planned, tuple(f"{key}: {value!r} ({why})" for key, (value, why) in filled.items())


def _refuse_unfilled(profile: Profile) -> None:
    """A value the profile left to a KB row that does not exist (an NGC release and image with no row, a torch
    tag the KB does not list): the profile must say it."""
    if profile.python is None:
        raise ProfileError(f"profile {profile.name!r}: python is not set, and the knowledge base has no release row "
                           f"for the base {profile.base} to take it from", fix='set python: (such as "3.10")')
    if profile.cuda is None and profile.is_gpu:
        raise ProfileError(f"profile {profile.name!r}: gpu.required is true but cuda is not set, and the knowledge "
                           "base has no row of the base's release or of the frameworks' build to take it from",
                           fix="set cuda, or gpu.required: false")
