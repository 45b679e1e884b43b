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
    ranges: dict[str, str] = field(default_factory=dict)  # field -> the specifier a release was chosen in
    ranged: dict[str, tuple[str, Item]] = field(default_factory=dict)  # target chosen in a range: specifier, line


def _known(kb: KnowledgeBase, target: str, package: str | None = None) -> list[str]:
    if target == "tensorflow":  # tensorflow-gpu's releases after its last are error stubs: never chosen for it
        return sorted({b.series + ".0" for b in kb.tensorflow if not (package == "tensorflow-gpu" and b.gpu_stub)})
    if target == "pytorch":
        return [r.version for r in kb.pytorch]
    key = "torchvision" if target == "torchvision" else "torchaudio"
    return [v for v in (getattr(r, key) for r in kb.pytorch) if v]


def _release(kb: KnowledgeBase, target: str, exact: str | None, specifier: str, item: Item,
             out: Lifted, package: str | None = None) -> str | None:
    if exact is not None and "*" not in exact:
        return exact
    chosen = newest_in(_known(kb, target, package), specifier)
    out.ranges[target] = specifier
    if chosen is not None:
        last = ("; tensorflow-gpu's releases after it are error stubs" if package == "tensorflow-gpu"
                and chosen != newest_in(_known(kb, target), specifier) else "")
        out.comments[target] = (f"{item.origin}: {item.text} (the newest release the knowledge base knows in range"
                                f"{last})")
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


def fit_ranges(kb: KnowledgeBase, lifted: Lifted, python: str | None, tag: str | None) -> None:
    """Where a framework release was chosen from a range and the source fixes the Python (a Dockerfile's base,
    ``python=3.10``) or torch's build (its PyTorch index or find-links page): the newest release inside the range
    whose wheels cover that Python and that build (torch's ranged companions move with it)."""
    from envgen.kb.specifiers import contains
    from envgen.kb.versions import vtuple

    def fits(lo: str, hi: str) -> bool:
        return python is None or vtuple(lo) <= vtuple(python) <= vtuple(hi)

    spec = lifted.ranges.get("pytorch")
    if spec is not None and "pytorch" in lifted.fields:
        rows = [r for r in kb.pytorch if (not spec or contains(spec, r.version)) and fits(r.python_min, r.python_max)]
        built = [r for r in rows if tag and kb.torch_variant_by_tag(r.version, tag) is not None]
        row = max(built or rows, key=lambda r: vtuple(r.version), default=None)
        if row is not None and row.version != lifted.fields["pytorch"]:
            lifted.fields["pytorch"] = row.version
            lifted.comments["pytorch"] += (f"; torch {row.version}: the newest in range with "
                                           + " and ".join(([f"Python {python} wheels"] if python else [])
                                                          + ([f"a {tag} build"] if built else [])))
            for key in ("torchvision", "torchaudio"):
                if key in lifted.ranges and key in lifted.fields and getattr(row, key):
                    lifted.fields[key] = getattr(row, key)
    if "pytorch" in lifted.fields and "pytorch" not in lifted.ranges:  # a pinned torch: ranged companions follow it
        release = kb.torch_release(lifted.fields["pytorch"])
        for key in ("torchvision", "torchaudio"):
            own = getattr(release, key, None)
            if key in lifted.ranged and own and (not lifted.ranged[key][0] or contains(lifted.ranged[key][0], own)):
                lifted.fields[key] = own
                item = lifted.ranged[key][1]
                lifted.comments[key] = f"{item.origin}: {item.text} (torch {lifted.fields['pytorch']}'s own release)"
    spec = lifted.ranges.get("tensorflow")
    if spec is not None and python is not None and "tensorflow" in lifted.fields:
        stubs = lifted.fields.get("tensorflow_package") == "tensorflow-gpu"
        builds = [b for b in kb.tensorflow if (not spec or contains(spec, b.series + ".0")) and
                  fits(b.python_min, b.python_max) and not (stubs and b.gpu_stub)]
        build = max(builds, key=lambda b: vtuple(b.series), default=None)
        if build is not None and build.series + ".0" != lifted.fields["tensorflow"]:
            lifted.fields["tensorflow"] = build.series + ".0"
            lifted.comments["tensorflow"] += f"; TensorFlow {build.series}: the newest in range with Python {python}"


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
        _set(out, read, target, _release(kb, target, line.exact, line.specifier, item, out, package), item, package)
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
