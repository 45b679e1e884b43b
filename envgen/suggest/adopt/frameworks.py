"""The frameworks a source installs, lifted out of its package lines into ``frameworks:``: the names are the
knowledge base's (``kb.framework_names``: pip distributions and conda packages), a range becomes the newest release
the knowledge base knows inside it (said in the comment), and the PyTorch build is the one the source names: a
local version (``+cu121``), the PyTorch index it installs from (``download.pytorch.org/whl/cu121``, matched against
the KB's own index URLs) or a conda CUDA package (``pytorch-cuda=11.8``, ``cudatoolkit=11.8``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from envgen.kb import KnowledgeBase
from envgen.profile.requirements import parse_line
from envgen.suggest.adopt.model import Item, Read, Skip
from envgen.suggest.adopt.names import CondaNames
from envgen.suggest.adopt.specs import newest_in, read_conda_spec


@dataclass
class Lifted:
    fields: dict[str, str] = field(default_factory=dict)  # frameworks: field -> version
    comments: dict[str, str] = field(default_factory=dict)  # field -> where it came from
    pip_taken: set[int] = field(default_factory=set)  # indexes into read.pip
    conda_taken: set[int] = field(default_factory=set)  # indexes into read.conda
    cuda: Item | None = None  # a conda CUDA package's version
    build: Item | None = None  # torch's build tag ("cu121", "cpu") and where it was read
    ranged: dict[str, tuple[str, Item]] = field(default_factory=dict)  # target chosen in a range: specifier, line


def _known(kb: KnowledgeBase, target: str) -> list[str]:
    if target == "tensorflow":
        return sorted({b.series + ".0" for b in kb.tensorflow})
    if target == "pytorch":
        return [r.version for r in kb.pytorch]
    key = "torchvision" if target == "torchvision" else "torchaudio"
    return [v for v in (getattr(r, key) for r in kb.pytorch) if v]


def _release(kb: KnowledgeBase, target: str, exact: str | None, specifier: str, item: Item,
             out: Lifted) -> str | None:
    if exact is not None and "*" not in exact:
        return exact
    chosen = newest_in(_known(kb, target), specifier)
    if chosen is not None:
        out.comments[target] = f"{item.origin}: {item.text} (the newest release the knowledge base knows in range)"
        out.ranged[target] = (specifier, item)
    return chosen


def _set(out: Lifted, read: Read, target: str, version: str | None, item: Item, package: str | None) -> None:
    if version is None:
        read.skipped.append(Skip(item.text, item.origin, f"no release of {target} the knowledge base knows matches "
                                 "it: pin one it knows (`envgen suggest` lists them)"))
        return
    base, _, local = version.partition("+")
    if target == "pytorch" and local:
        out.build = Item(local, item.origin)
    out.fields[target] = base
    out.comments.setdefault(target, f"{item.origin}: {item.text}")
    if package is not None:
        out.fields["tensorflow_package"] = package
        out.comments["tensorflow_package"] = f"{item.origin}: {item.text}"


def lift(kb: KnowledgeBase, names: CondaNames, read: Read) -> Lifted:
    out = Lifted()
    pip_names = kb.framework_names.pip
    for index, item in enumerate(read.pip):
        line = parse_line(item.text)
        key = line.name + line.extras_text if line.name + line.extras_text in pip_names else line.name
        if key not in pip_names or line.marker is not None:
            continue
        target, package = pip_names[key]
        out.pip_taken.add(index)
        _set(out, read, target, _release(kb, target, line.exact, line.specifier, item, out), item, package)
    conda_names = kb.framework_names.conda
    for index, item in enumerate(read.conda):
        spec = read_conda_spec(item.text)
        if spec is None:
            continue
        if spec.name in names.cuda and spec.kind != "any":
            out.cuda = out.cuda or Item(spec.version, item.origin)
            if spec.name in names.selectors or spec.conda_pin() is None:
                out.conda_taken.add(index)
        elif spec.name in conda_names:
            out.conda_taken.add(index)
            target = conda_names[spec.name]
            exact = spec.version if spec.kind == "exact" else None
            _set(out, read, target, _release(kb, target, exact, spec.specifier(), item, out), item, None)
    return out
