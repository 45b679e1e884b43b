"""A source, read (``Read``), made into profile fields with a comment on each naming where it came from; what was not
taken goes into the file's closing comment and ``Adopted.notes``. The profile is validated as `envgen check` loads it
(``with_safe_pins``: the pins that keep pip out of a known break are added, and say so)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from envgen.check import HostSpec, check_profile
from envgen.errors import InputError, ProfileError
from envgen.kb import KnowledgeBase
from envgen.kb.versions import minor
from envgen.plan.installers import Installer, adopted_installer
from envgen.profile.values import URL_RE
from envgen.suggest.adopt.emit import emit
from envgen.suggest.adopt.fit import bring_torch, build_from_check, choose_torch
from envgen.suggest.adopt.frameworks import Lifted, fit_ranges, lift
from envgen.suggest.adopt.installs import TORCH_URL
from envgen.suggest.adopt.model import Item, Origin, Read, Skip
from envgen.suggest.adopt.names import CondaNames, load_names
from envgen.suggest.adopt.piplines import PipLines
from envgen.suggest.adopt.provided import base_provides
from envgen.suggest.adopt.pythons import choose_python, in_windows
from envgen.suggest.adopt.specs import read_conda_spec
from envgen.suggest.init import PYTHON_DEFAULT, _plain_base
from envgen.suggest.search import with_safe_pins

Comments = dict[tuple[object, ...], str]


@dataclass(frozen=True)
class AdoptOptions:
    name: str = "my-profile"
    python: str | None = None
    gpus: tuple[str, ...] = ()
    driver: str | None = None
    base: str | None = None  # --base: the image the profile builds on (default: a plain base of its Python)
    base_python: str | None = None  # the source's interpreter, found in --base: base_holds is what it holds there
    base_holds: tuple[tuple[str, str], ...] = ()  # (PEP 503 name, version)


@dataclass(frozen=True)
class Adopted:
    text: str
    data: dict[str, Any]
    notes: list[str] = field(default_factory=list)  # what was not taken, and why; what changed on the way


def _torch_indexes(kb: KnowledgeBase) -> dict[str, str]:
    return {v.index_url.rstrip("/"): v.tag for r in kb.pytorch for v in r.variants if not v.find_links}


def _torch_build(kb: KnowledgeBase, read: Read, lifted: Lifted, data: dict[str, Any], options: AdoptOptions,
                 notes: list[str]) -> Item | None:
    version = lifted.fields["pytorch"]
    if lifted.build is not None:
        return lifted.build
    if read.torch_build is not None:
        if kb.torch_variant_by_tag(version, read.torch_build.text) is not None:
            return read.torch_build
        notes.append(f"{read.torch_build.origin}: PyTorch {version} has no build {read.torch_build.text} the "
                     "knowledge base knows")
    indexes = _torch_indexes(kb)
    for url in [*([read.index_url] if read.index_url else []), *read.extra_index_urls]:
        if url.text.rstrip("/") in indexes:
            return Item(indexes[url.text.rstrip("/")], url.origin)
    if lifted.cuda is not None:
        variant = kb.torch_variant(version, minor(lifted.cuda.text))
        if variant is not None:
            return Item(variant.tag, lifted.cuda.origin)
        notes.append(f"{lifted.cuda.origin}: PyTorch {version} has no build for CUDA {lifted.cuda.text} the "
                     "knowledge base knows")
    if options.gpus:
        tag = build_from_check(kb, data, version, options.gpus, options.driver)
        if tag is not None:
            return Item(tag, Origin(f"the newest CUDA build `envgen check` passes for --gpu "
                                          f"{' '.join(options.gpus)}"))
        if "pytorch" not in lifted.ranged:
            notes.append(f"torch {version}: none of its CUDA builds passes `envgen check` for --gpu "
                         f"{' '.join(options.gpus)}" + (f" with driver {options.driver}" if options.driver else "")
                         + ": the profile takes the CPU build; pin torch==X+cuYYY or change the torch range "
                         "(`envgen suggest --gpu GPU --driver DRIVER` lists the builds that run)")
        return Item("cpu", Origin("no CUDA build passes check for --gpu"))
    notes.append(f"torch {version}: no CUDA build named (no +cuXXX, no download.pytorch.org/whl/cuXXX index): the "
                 "profile takes the CPU build; give --gpu GPU (and --driver) for a CUDA one")
    return Item("cpu", Origin("no CUDA build named"))


def _mirrors(kb: KnowledgeBase, read: Read, comments: Comments, notes: list[str]) -> dict[str, Any]:
    indexes, out = _torch_indexes(kb), dict[str, Any]()
    for key, items in (("pip_index_url", [read.index_url] if read.index_url else []),
                       ("pip_extra_index_urls", read.extra_index_urls), ("pip_trusted_hosts", read.trusted_hosts)):
        kept: list[str] = []
        for item in items:
            url = item.text.rstrip("/")
            if url in indexes or url == "https://pypi.org/simple" or TORCH_URL.search(url):
                notes.append(f"{item.origin}: {item.text} not made a mirror: "
                             + ("PyPI is the default index" if url.endswith("pypi.org/simple") else
                                "envgen installs torch from the PyTorch index of its build itself "
                                "(mirrors.pytorch_wheels replaces the host)"))
                continue
            if key != "pip_trusted_hosts" and not URL_RE.match(item.text):
                read.skipped.append(Skip(item.text, item.origin, "not a URL a profile takes (letters, digits and "
                                         "._~:/?=%+@- only; no variables): write the URL itself"))
                continue
            comments[("mirrors", key, *(() if key == "pip_index_url" else (len(kept),)))] = str(item.origin)
            kept.append(item.text)
        if kept:
            out[key] = kept[0] if key == "pip_index_url" else kept
    return out


def _packages(read: Read, lifted: Lifted, names: CondaNames, installer: Installer, comments: Comments,
              notes: list[str]) -> dict[str, list[str]]:
    pip = PipLines(notes, comments)
    conda: list[str] = []
    keeps = installer.conda_env  # packages.conda: conda packages (libraries and tools too), each pinned exactly
    for index, item in enumerate(read.pip):
        if index not in lifted.pip_taken:
            pip.add(item.text, str(item.origin))
    for index, item in enumerate(read.conda):
        spec = read_conda_spec(item.text)
        if index in lifted.conda_taken:
            continue
        if spec is None:
            read.skipped.append(Skip(item.text, item.origin, "not a conda spec envgen reads (name, name=1.2.3, "
                                     "name>=1.2)"))
        elif spec.name in names.not_python and (not keeps or spec.conda_pin() is None):
            read.skipped.append(Skip(item.text, item.origin, "a conda package with no PyPI distribution of its own "
                                     "(a library or tool, not moved to pip)" + (
                                         f": pin it exactly to keep it (packages.conda: {spec.name}=X.Y.Z)"
                                         if keeps else f": a {installer.name} profile installs none; the "
                                         "frameworks' wheels bring the libraries they need")))
        elif keeps and spec.conda_pin() is not None:
            comments[("packages", "conda", len(conda))] = str(item.origin)
            conda.append(spec.conda_pin() or "")
        else:
            pypi = names.pypi.get(spec.name, spec.name)
            why = "conda's packages are pinned exactly" if keeps else f"the profile installs with {installer.name}"
            pip.add(spec.pip_line(pypi), f"{item.origin}: {item.text} (pip: {why}"
                    + (f"; PyPI's name is {pypi}" if pypi != spec.name else "") + ")")
    out = {"conda": conda} if conda else {}
    return {**out, "pip": pip.lines} if pip.lines else out


def _base_python(kb: KnowledgeBase, read: Read) -> None:
    """A Dockerfile's Python is its base's python3, where the knowledge base knows the base."""
    if read.kind != "dockerfile" or read.base is None or read.python is not None:
        return
    row = kb.base_image(read.base.text)
    if row is not None and row.python:
        read.python = Item(minor(row.python), Origin(f"{read.base.origin}: FROM {read.base.text}'s python3"))


def _image_base(kb: KnowledgeBase, read: Read, python: str) -> str | None:
    """An image's own base, where the knowledge base knows its python3 is the profile's Python."""
    if read.base is None:
        return None
    row = kb.base_image(read.base.text)
    return read.base.text if row is not None and row.python and minor(row.python) == python else None


def _base(kb: KnowledgeBase, read: Read, options: AdoptOptions, python: str, installer: Installer) -> str:
    """--base, else the source's own base where its python3 is the profile's, else a plain base: of the profile's
    Python where the environment's Python is the base's, else of envgen's default (the installer brings its own)."""
    return options.base or _image_base(kb, read, python) or _plain_base(
        kb, python if installer.base_python else PYTHON_DEFAULT)


def adopt(read: Read, source: str, kb: KnowledgeBase, options: AdoptOptions) -> Adopted:
    """The profile ``read`` describes, as commented YAML. Raises InputError when nothing valid can be made."""
    names, notes, comments = load_names(), list(read.notes), Comments()
    lifted = lift(kb, names, read)
    bring_torch(kb, lifted)
    installer = adopted_installer(read.kind)
    _base_python(kb, read)
    fixed = options.python or (read.python.text if read.python and read.python.text[:1].isdigit() else None)
    # the source's own Python and torch build first (a Dockerfile's base, its PyTorch index) ...
    fit_ranges(kb, lifted, minor(fixed.rstrip(".*")) if fixed else None,
               read.torch_build.text if read.torch_build else None)

    def fits() -> dict[str, Any] | None:
        try:
            python = choose_python(kb, read, lifted, options.python, installer)[0]
        except InputError:
            return None
        if not in_windows(kb, lifted, python):
            return None
        return {"name": options.name, "base": _base(kb, read, options, python, installer), "installer": installer.name,
                "python": python, "frameworks": dict(lifted.fields)}

    # ... else the newest release in range whose Python fits and, with --gpu, whose CUDA build check passes
    if "pytorch" in lifted.ranged and read.torch_build is None:
        choose_torch(kb, lifted, options.gpus, options.driver, fits, notes)
    python, python_origin = choose_python(kb, read, lifted, options.python, installer)
    base = _base(kb, read, options, python, installer)
    data: dict[str, Any] = {"name": options.name, "description": f"adopted from {source}"[:200], "base": base,
                            "installer": installer.name, "python": python}
    comments[("python",)] = python_origin
    comments[("base",)] = "--base" if options.base else str(read.base.origin) if read.base and base == \
        read.base.text else "a plain base whose own python3 is the profile's" if installer.base_python else \
        f"{installer.name} brings the Python"
    if read.local_base and base == (read.base.text if read.base else None):
        data["local_base"], comments[("local_base",)] = True, "made on this engine: no registry digest"
    _frameworks(kb, read, lifted, data, options, comments, notes)
    data["gpu"] = _gpu(kb, data, lifted, options, comments, notes)
    _carried(read, lifted, names, installer, data, comments, notes)
    if read.base is not None and read.kind == "dockerfile" and data["base"] != read.base.text:
        notes.append(f"{read.base.origin}: FROM {read.base.text} not kept: the knowledge base does not know it has "
                     f"Python {python} as its python3; the profile builds on {data['base']} (or pass --base)")
    mirrors = _mirrors(kb, read, comments, notes)
    if mirrors:
        data["mirrors"] = mirrors
    if options.base and options.base_python and installer.base_python:
        base_provides(data, dict(options.base_holds), options.base_python, options.base, comments, notes)
    return _finish(kb, data, comments, read, source, notes)


def _frameworks(kb: KnowledgeBase, read: Read, lifted: Lifted, data: dict[str, Any], options: AdoptOptions,
                comments: Comments, notes: list[str]) -> None:
    """``frameworks:`` as lifted, torch with the CUDA build the source names or check chooses, each commented."""
    frameworks = dict(lifted.fields)
    data["frameworks"] = frameworks
    if "pytorch" in frameworks:
        build = _torch_build(kb, read, lifted, data, options, notes)
        if build is not None:
            frameworks["pytorch"] = f"{frameworks['pytorch']}+{build.text}"
            lifted.comments["pytorch"] += f"; build {build.text}: {build.origin}"
    for key in frameworks:
        comments[("frameworks", key)] = lifted.comments.get(key, "")
    if not frameworks:
        del data["frameworks"]


def _carried(read: Read, lifted: Lifted, names: CondaNames, installer: Installer, data: dict[str, Any],
             comments: Comments, notes: list[str]) -> None:
    """What the source states and the profile keeps as it is: channels, packages, apt packages, env."""
    if read.channels:
        data["channels"] = [c.text for c in read.channels if c.text != "defaults"]
        comments.update({("channels", i): str(c.origin) for i, c in enumerate(
            [c for c in read.channels if c.text != "defaults"])})
        if any(c.text == "defaults" for c in read.channels):
            notes.append("channel 'defaults' (Anaconda's repository, under its terms of service) is left out: "
                         "the profile's channels are named ones")
    packages = _packages(read, lifted, names, installer, comments, notes)
    if packages:
        data["packages"] = packages
    if read.apt:
        data.setdefault("packages", {})["apt"] = [a.text for a in read.apt]
        comments.update({("packages", "apt", i): str(a.origin) for i, a in enumerate(read.apt)})
    if read.env:
        data["env"] = {k: v.text for k, v in read.env.items()}
        comments.update({("env", k): str(v.origin) for k, v in read.env.items()})


_ORDER = ("name", "description", "base", "local_base", "base_provides", "installer", "cuda", "python", "frameworks",
          "gpu", "channels", "packages", "env", "mirrors")


def _gpu(kb: KnowledgeBase, data: dict[str, Any], lifted: Lifted, options: AdoptOptions, comments: Comments,
         notes: list[str]) -> dict[str, Any]:
    frameworks = data.get("frameworks", {})
    base, _, tag = str(frameworks.get("pytorch", "")).partition("+")
    variant = kb.torch_variant_by_tag(base, tag) if tag.startswith("cu") else None
    if variant is not None and variant.cuda:
        data["cuda"], comments[("cuda",)] = variant.cuda, f"torch's build {tag}"
    elif lifted.cuda is not None:
        data["cuda"], comments[("cuda",)] = minor(lifted.cuda.text), str(lifted.cuda.origin)
    elif frameworks.get("tensorflow_package") == "tensorflow[and-cuda]":
        build = kb.tensorflow_build(str(frameworks.get("tensorflow")))
        if build is not None:
            data["cuda"], comments[("cuda",)] = build.cuda, f"TensorFlow {build.series}'s build [{build.cite()}]"
    gpu_stack = "cuda" in data or frameworks.get("tensorflow_package") == "tensorflow[and-cuda]"
    if not gpu_stack:
        if options.gpus and frameworks.get("tensorflow_package") == "tensorflow-gpu":  # needs the system's CUDA
            notes.append(f"--gpu {' '.join(options.gpus)}: tensorflow-gpu {frameworks.get('tensorflow')} loads the "
                         "system's CUDA and cuDNN, which this pip profile's base lacks: the profile is a CPU one; "
                         "for a GPU one adopt onto a CUDA base, or take a release whose tensorflow[and-cuda] brings it")
        elif options.gpus and "pytorch" not in frameworks:
            notes.append(f"--gpu {' '.join(options.gpus)}: nothing in the source is a CUDA build, so the profile "
                         "is a CPU one")
        comments[("gpu", "required")] = "no CUDA build in the source"
        _cpu_tensorflow(kb, frameworks, comments)
        return {"required": False}
    if options.gpus:
        comments[("gpu", "targets")] = "--gpu"
        return {"targets": list(options.gpus)}
    comments[("gpu", "required")] = "a CUDA build; add gpu.targets (or --gpu) to have its kernels checked"
    return {"required": True}


def _safe_pins(kb: KnowledgeBase, data: dict[str, Any], before: int, notes: list[str]) -> list[Any]:
    """The pins ``with_safe_pins`` adds, less any that `envgen check` then refuses in this profile (a setuptools pin
    where the environment layer holds its own): envgen never writes a line its own check refuses."""
    plan, pins = with_safe_pins(kb, data)
    if not pins:
        return pins
    errors = [f.message for f in check_profile(plan.profile, kb, HostSpec()) if f.severity == "error"]
    refused = [(pin, row) for pin, row in pins if any(pin in message for message in errors)]
    for pin, row in refused:
        data["packages"]["pip"].remove(pin)
        notes.append(f"{pin} not added: {row.shows} breaks otherwise [{row.cite()}], but `envgen check` refuses the "
                     "line in this profile; pin the tool in the base or the lock")
    if not data["packages"]["pip"][before:] and not data["packages"]["pip"]:
        del data["packages"]["pip"]
    return [p for p in pins if p not in refused]


def _cpu_tensorflow(kb: KnowledgeBase, frameworks: dict[str, Any], comments: Comments) -> None:
    """A CPU profile's `tensorflow` becomes `tensorflow-cpu` where PyPI has that release of it (the knowledge base's
    Requires-Dist rows are read from its wheels): `tensorflow` loads CUDA's libraries and logs a cuInit error on
    every import where there is no GPU."""
    version = str(frameworks.get("tensorflow", ""))
    if frameworks.get("tensorflow_package") != "tensorflow" or not any(
            r.distribution == "tensorflow-cpu" and r.version == version for r in kb.framework_requires):
        return
    frameworks["tensorflow_package"] = "tensorflow-cpu"
    comments[("frameworks", "tensorflow_package")] = (
        f"{comments.get(('frameworks', 'tensorflow_package'), 'the source')}; tensorflow-cpu: the profile is a CPU "
        f"one, and tensorflow-cpu {version} is on PyPI (`tensorflow` would load CUDA and log cuInit errors)")


def _finish(kb: KnowledgeBase, data: dict[str, Any], comments: Comments, read: Read, source: str,
            notes: list[str]) -> Adopted:
    before = len(data.get("packages", {}).get("pip", []))
    try:
        pins = _safe_pins(kb, data, before, notes)
    except (ProfileError, ValueError) as exc:
        first = " ".join(line.strip() for line in str(exc).strip().splitlines()[:2]) or type(exc).__name__
        raise InputError(f"the profile adopted from {source} does not load: {first}",
                         fix="correct the line it names in the source (or pass --python X.Y), then adopt again"
                         ) from None
    for offset, (_pin, row) in enumerate(pins):
        comments[("packages", "pip", before + offset)] = f"added by envgen: {row.shows} breaks otherwise " \
                                                         f"[{row.cite()}]"
    ordered = {key: data[key] for key in _ORDER if key in data}
    skipped = [s.line() for s in read.skipped]
    head = [f"Adopted by `envgen init --from {source}`: each value's comment names where it came from.",
            "Verify: envgen check <this file>.  Pin what floats: envgen lock <this file>."]
    tail = ([""] + ["Not taken from the source:"] + [f"  {line}" for line in skipped] if skipped else []) + \
        ([""] + ["Notes:"] + [f"  {line}" for line in notes] if notes else [])
    text = emit(ordered, comments, head, [t for t in tail if t] if tail else [])
    return Adopted(text, ordered, [*skipped, *notes])
