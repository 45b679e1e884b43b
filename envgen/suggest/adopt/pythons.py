"""The Python of an adopted profile: ``--python``, else what the source says (``python=3.10`` in an environment.yml,
``requires-python`` in a pyproject.toml), inside every lifted framework's Python window (the knowledge base's rows);
3.11 where it may, else the newest allowed. A pip profile's Python is its base's own, so only the minors of the
plain bases the knowledge base knows are candidates."""

from __future__ import annotations

from envgen.errors import InputError
from envgen.kb import KnowledgeBase
from envgen.kb.specifiers import contains
from envgen.kb.versions import minor, vtuple
from envgen.plan.installers import Installer
from envgen.suggest.adopt.frameworks import Lifted
from envgen.suggest.adopt.model import Read
from envgen.suggest.init import PYTHON_DEFAULT


def _windows(kb: KnowledgeBase, lifted: Lifted) -> list[tuple[str, str, str]]:
    out = []
    torch = kb.torch_release(lifted.fields["pytorch"]) if "pytorch" in lifted.fields else None
    if torch is not None:
        out.append((f"torch {torch.version}", torch.python_min, torch.python_max))
    tf = kb.tensorflow_build(lifted.fields["tensorflow"]) if "tensorflow" in lifted.fields else None
    if tf is not None:
        out.append((f"tensorflow {tf.series}", tf.python_min, tf.python_max))
    return out


def in_windows(kb: KnowledgeBase, lifted: Lifted, python: str) -> bool:
    """Whether every lifted framework's release has wheels for Python ``python`` (its knowledge-base row)."""
    return all(vtuple(lo) <= vtuple(minor(python)) <= vtuple(hi) for _, lo, hi in _windows(kb, lifted))


def _allowed(read: Read, candidate: str) -> bool:
    if read.python is None or not read.python.text:
        return True
    spec = read.python.text.replace(" ", "")
    if spec[0].isdigit():
        return minor(spec.rstrip(".*")) == candidate
    return all(contains(clause if clause[0] in "<>=!~" else f"=={clause}", f"{candidate}.0")
               or (clause.startswith(("<=", "==", "~=")) and minor(clause.lstrip("<=~")) == candidate)
               for clause in spec.split(","))


def choose_python(kb: KnowledgeBase, read: Read, lifted: Lifted, requested: str | None,
                  installer: Installer) -> tuple[str, str]:
    """(Python X.Y, the comment saying why). An installer that brings its own Python (not the base's) takes the
    version the source pins too."""
    if requested is not None:
        return minor(requested), "--python"
    windows = _windows(kb, lifted)
    pool = {minor(r.python) for r in kb.os_images if r.status == "available"}
    if not installer.base_python and read.python is not None and read.python.text[:1].isdigit():
        pool.add(minor(read.python.text.rstrip(".*")))
    fits = sorted((p for p in pool if _allowed(read, p) and all(
        vtuple(lo) <= vtuple(p) <= vtuple(hi) for _, lo, hi in windows)), key=vtuple)
    said = f"{read.python.origin}: python {read.python.text}" if read.python else "envgen init's default"
    if not fits:
        bounds = "; ".join(f"{name} takes {lo}-{hi}" for name, lo, hi in windows)
        raise InputError(f"no Python fits {said}" + (f" and {bounds}" if bounds else "")
                         + f" among the bases envgen knows ({', '.join(sorted(pool, key=vtuple))})",
                         fix="pass --python X.Y, or change the framework pin")
    chosen = PYTHON_DEFAULT if PYTHON_DEFAULT in fits else fits[-1]
    why = said if read.python else "envgen init's default"
    if windows:
        why += " (inside " + ", ".join(f"{name}'s {lo}-{hi}" for name, lo, hi in windows) + ")"
    return chosen, why
