"""Distribution names in packages.pip that do not install what the user means: a name the knowledge base records
(``pip_names.yaml``: PyPI's placeholder ``pytorch``, the import name ``cv2``), else an unknown name close to one
the knowledge base knows (a did-you-mean: ``numpyy`` -> numpy). One finding per line."""

from __future__ import annotations

from envgen.check.context import CheckContext
from envgen.check.findings import Finding
from envgen.check.util import finding

_CUTOFF = 0.75  # difflib's ratio picks candidates; a typo's edit distance decides (tensorflow-io is no typo)


def _typo_distance(a: str, b: str) -> int:
    """Edits (insert, delete, replace, swap two neighbours) from ``a`` to ``b``: optimal string alignment."""
    rows = [list(range(len(b) + 1))]
    for i, ca in enumerate(a, 1):
        row = [i]
        for j, cb in enumerate(b, 1):
            row.append(min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + (ca != cb)))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                row[j] = min(row[j], rows[-2][j - 2] + 1)
        rows.append(row)
    return rows[-1][-1]


def near_name(name: str, known: frozenset[str]) -> str | None:
    """The known distribution ``name`` misspells: one edit away (two for names of 8 or more letters that begin with
    the guess's letter: a name that adds or changes letters at its start is another project, as GitPython is no
    IPython, not a typo of one)."""
    import difflib  # only for a name the KB does not know (a few ms of check's import time otherwise)

    for guess in difflib.get_close_matches(name, sorted(known), n=3, cutoff=_CUTOFF):
        limit = 2 if len(name) >= 8 and name[:1] == guess[:1] else 1
        if _typo_distance(name, guess) <= limit:
            return guess
    return None


_SOURCE = "pip_names.yaml#common_pip_names and the distributions the knowledge base's tables name"


def pip_names(ctx: CheckContext) -> list[Finding]:
    out = []
    known = None
    for line in (r.line for r in ctx.plan.requirements):
        spec, rest = line.text, line.extras_text + line.specifier
        row = ctx.kb.pip_name(line.name)
        if row is not None:
            out.append(finding(row.severity, "pip-name", f"packages.pip line {spec!r}: {row.why}",
                               f"write {row.use}{rest}" + (f" (envgen moves {row.use} to frameworks:)"
                                                          if row.use in ("torch", "tensorflow") else ""),
                               row.cite()))
            continue
        known = ctx.kb.known_distributions if known is None else known
        if line.name in known:
            continue
        guess = near_name(line.name, known)
        if guess:
            out.append(finding("warning", "pip-name-unknown",
                               f"packages.pip line {spec!r}: {line.name} is no distribution envgen knows; did you "
                               f"mean {guess}?", f"write {guess}{rest}, or keep the line if {line.name} is "
                               "what you mean", _SOURCE))
    return out


RULES = [pip_names]
