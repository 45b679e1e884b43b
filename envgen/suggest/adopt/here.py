"""``--gpu here``: this host's GPUs and driver, as `envgen doctor` reads them (``envgen.host``)."""

from __future__ import annotations

from collections.abc import Mapping

from envgen.errors import InputError
from envgen.kb import KnowledgeBase


def host_gpus(kb: KnowledgeBase, env: Mapping[str, str] | None = None) -> tuple[tuple[str, ...], str | None]:
    """(the GPU names, the driver version) of this host; InputError when no GPU can be read."""
    from envgen.host import RealProvider, collect

    facts = collect(RealProvider(env), kb)
    if not facts.gpus:
        raise InputError(f"option --gpu = 'here': no GPU could be read on this host ({facts.gpu_error or 'none'})",
                         fix="name the GPU the image is for (--gpu 'RTX 4090'), or leave --gpu out for a CPU "
                             "profile")
    names = tuple(dict.fromkeys(g.name for g in facts.gpus))
    return names, facts.driver
