"""The candidates of a search: the parts that match the request, paired when both frameworks are asked for
(Python windows must meet, the NVIDIA libraries must share one site-packages), the sets pip refuses left out
(``proof``: check's combined set), in the order they are judged."""

from __future__ import annotations

from envgen.kb import KnowledgeBase
from envgen.suggest.pairing import share
from envgen.suggest.parts import Candidate, tf_parts, torch_parts
from envgen.suggest.proof import CombinedSet
from envgen.suggest.pythons import python_choices, torch_window
from envgen.suggest.ranking import Ranker
from envgen.suggest.recipes import Recipes
from envgen.suggest.request import Request


def candidates(kb: KnowledgeBase, recipes: Recipes, req: Request, cc: str) -> tuple[list[Candidate], list[str]]:
    """Ordered candidates, and the reasons pairs were refused (for the no-single-image answer)."""
    want_tf, want_torch = "tensorflow" in req.frameworks, "pytorch" in req.frameworks
    tfs = tf_parts(kb, recipes, req, cc) if want_tf else []
    torches = torch_parts(kb, recipes, req, cc) if want_torch else []
    out: list[Candidate] = []
    refused: list[str] = []
    if want_tf and want_torch:
        for tf in tfs:
            for torch in torches:
                windows = [(tf.build.python_min, tf.build.python_max), torch_window(torch)]
                pythons = python_choices(req, windows)
                if not pythons:
                    refused.append(
                        f"no Python fits both TensorFlow {tf.version} ({tf.build.python_min}-{tf.build.python_max}) "
                        f"and torch {torch.build.release.version} ({torch.build.release.python_min}-"
                        f"{torch.build.release.python_max}){' and ' + req.python if req.python else ''}")
                    continue
                ok, why, pin = share(tf, torch)
                if not ok:
                    refused.append(why)
                    continue
                out += [Candidate(tf, torch, py, pin) for py in pythons]
    elif want_tf:
        for tf in tfs:
            window = (tf.build.python_min, tf.build.python_max)
            out += [Candidate(tf, None, py) for py in python_choices(req, [window])]
    else:
        for torch in torches:
            out += [Candidate(None, torch, py) for py in python_choices(req, [torch_window(torch)])]
    kept = _proven(kb, out, refused)
    kept.sort(key=Ranker(kb, req, cc).key)
    return kept, refused


def _proven(kb: KnowledgeBase, found: list[Candidate], refused: list[str]) -> list[Candidate]:
    """The candidates whose set pip can install (check's combined set); each other one's reason goes to
    ``refused``, once."""
    proof = CombinedSet(kb)
    kept: list[Candidate] = []
    seen = set(refused)
    for c in found:
        refusal = proof.refusal(c)
        if refusal is None:
            kept.append(c)
        elif refusal not in seen:
            seen.add(refusal)
            refused.append(refusal)
    return kept
