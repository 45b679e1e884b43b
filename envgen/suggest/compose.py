"""A candidate written as a profile: what each framework puts into it, and one comment per choice naming the KB
rows it rests on."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from envgen.kb import KnowledgeBase
from envgen.kb.builds import driver_fit
from envgen.kb.versions import vtuple
from envgen.plan.installers import suggested_installer
from envgen.profile.sections import Packages
from envgen.suggest.parts import Candidate, cudas
from envgen.suggest.request import Request

BASE = "ubuntu:22.04"


def _slug(text: str) -> str:
    keep = "".join(ch if ch.isalnum() else "-" for ch in text.lower())
    return "-".join(p for p in keep.split("-") if p)[:40] or "gpu"


@dataclass
class _Choice:
    """What a candidate's frameworks put into the profile, gathered part by part."""

    frameworks: dict[str, str] = field(default_factory=dict)
    conda: list[str] = field(default_factory=list)
    pip: list[str] = field(default_factory=list)
    cuda: str | None = None
    cudnn: str | None = None
    comments: list[str] = field(default_factory=list)


def _tf_choice(c: Candidate, out: _Choice) -> None:
    tf = c.tf
    if tf is None:
        return
    out.frameworks["tensorflow"] = tf.version
    out.comments.append(f"tensorflow {tf.version}: built for CUDA {tf.build.cuda} / cuDNN {tf.build.cudnn}, "
                        f"Python {tf.build.python_min}-{tf.build.python_max} [{tf.build.cite()}]")
    if tf.libraries is None:
        out.comments.append(f"installed as tensorflow[and-cuda]: pip brings the CUDA {tf.build.cuda} libraries")
        out.cuda = tf.build.cuda
        return
    libs = tf.libraries
    out.conda += libs.conda
    out.cuda, out.cudnn = libs.cuda, libs.cudnn
    if libs.pip_cudnn:
        out.pip.append(c.cudnn_pin and libs.pip_cudnn.split("==")[0] + "==" + c.cudnn_pin or libs.pip_cudnn)
        out.cudnn = c.cudnn_pin or out.cudnn
    shared = ""
    if c.cudnn_pin and c.torch and c.torch.wheels:
        shared = f"; cuDNN {c.cudnn_pin} shared with torch's own pin [{c.torch.wheels.cite()}]"
    out.comments.append(f"TensorFlow loads CUDA {libs.cuda} from the image: {', '.join(libs.conda + out.pip)}"
                        f"{shared} [{libs.cite()}{' (unverified)' if libs.unverified else ''}]")


def _torch_choice(c: Candidate, gpu_label: str, out: _Choice, plain: bool) -> None:
    """torch's pins; ``plain``: as PyPI's ``torch==X`` (the caller keeps it only where the written profile plans to
    the candidate's build), else the build's ``X+cuXXX`` label."""
    if not c.torch:
        return
    t = c.torch.build
    if out.cuda is None:
        out.cuda = t.cuda
    plain = plain and t.variant.pypi
    out.frameworks["pytorch"] = t.release.version if plain else t.label
    if t.release.torchvision:
        out.frameworks["torchvision"] = t.release.torchvision
    if t.release.torchaudio:
        out.frameworks["torchaudio"] = t.release.torchaudio
    how = {"exact": "a cubin for", "binary": "a same-major cubin that runs on"}.get(t.coverage, "PTX for")
    where = (f"PyPI's torch {t.release.version} wheel is the {t.variant.tag} build (cuda: {out.cuda} picks it)"
             if plain else f"the {t.variant.tag} build is not PyPI's wheel: pip fetches it from {t.variant.index_url}")
    out.comments.append(f"torch {t.label}: {how} {gpu_label} (built for {' '.join(t.variant.arch_list)}), "
                        f"Python {t.release.python_min}-{t.release.python_max}; {where} "
                        f"[{t.release.cite_variant(t.variant)}]")
    out.comments.append(
        f"torch's CUDA {t.cuda} libraries come with the wheel "
        + ("(bundled)" if c.torch.cudnn_major is None or c.torch.libraries is None
           else f"as NVIDIA pip wheels (cuDNN {c.torch.cudnn_major}.x) [{c.torch.libraries.cite()}]"))


def _driver_comments(kb: KnowledgeBase, req: Request, c: Candidate) -> list[str]:
    needs = sorted({(cu, tk.driver_linux_min) for cu in cudas(c) if (tk := kb.cuda(cu))}, key=lambda x: vtuple(x[0]))
    out = []
    for cu, drv in needs:
        fit = driver_fit(kb, cu, req.driver)
        state = {"ok": "", "minor-compat": " (this driver runs it through minor-version compatibility)"}.get(fit, "")
        out.append(f"CUDA {cu} needs a Linux driver >= {drv}{state} [{kb.cuda(cu).cite()}]")  # type: ignore[union-attr]
    return out


def build_profile(
    kb: KnowledgeBase, req: Request, c: Candidate, gpu_label: str, target: str | None = None, plain: bool = True
) -> tuple[dict[str, object], list[str]]:
    """The profile for a candidate, and one comment per choice naming the rows it rests on; ``plain``: torch as
    PyPI's plain pin where its wheel is the candidate's build (``_torch_choice``)."""
    names = [n for n, part in (("tf", c.tf), ("torch", c.torch)) if part]
    chosen = _Choice()
    _tf_choice(c, chosen)
    _torch_choice(c, gpu_label, chosen, plain)
    chosen.pip += req.pip
    chosen.comments += [f"{line}: pins torch {c.torch.build.release.version} exactly (its wheel's Requires-Dist), "
                        "the torch above" for line in req.pip if c.torch]
    assert chosen.cuda is not None
    comments = [*chosen.comments, *_driver_comments(kb, req, c)]
    if req.pip:
        comments.append(f"Python {c.python}: the oldest both {req.pip[0]} and torch publish wheels for (an engine's "
                        "many dependencies publish wheels for a new Python last); --python picks another")
    else:
        comments.append(f"Python {c.python}: the newest both frameworks publish wheels for" if len(names) == 2
                        else f"Python {c.python}: the newest this release publishes wheels for")
    installer = suggested_installer()
    comments.append(f"base {BASE} with {installer.name} ({', '.join(installer.facts.channels)}): the frameworks "
                    "bring or install their own CUDA user space; the host's driver is the only thing taken from the "
                    "machine")
    profile: dict[str, object] = {
        "name": _slug(f"{gpu_label}-{'-'.join(names)}"),
        "description": f"{c.label()} for {gpu_label} (written by envgen suggest)"[:200],
        "base": BASE,
        "installer": installer.name,
        "cuda": chosen.cuda,
    }
    if chosen.cudnn:
        profile["cudnn"] = chosen.cudnn
    profile["python"] = c.python
    profile["frameworks"] = chosen.frameworks
    profile["gpu"] = {"targets": [target or gpu_label]}
    # the profile's packages: section, one key per list the choice fills (Packages' fields: conda, then pip)
    packages = {f.name: lines for f in fields(Packages) if (lines := getattr(chosen, f.name, None))}
    if packages:
        profile["packages"] = packages
    profile["channels"] = list(installer.facts.channels)
    if c.tf:
        profile["env"] = {"TF_FORCE_GPU_ALLOW_GROWTH": "true"}
    return profile, comments
