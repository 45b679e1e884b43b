"""What a build downloads, before it downloads anything: the package index pip installs from (PyPI or
mirrors.pip_index_url), PyTorch's index or find-links page of a ``+cpu``/``+cuXXX`` build (mirrors.pytorch_wheels
replaces its host), micromamba (render/data/tools.yaml, or mirrors.micromamba_url) and each conda channel
(mirrors.conda_channels, mirrors.conda_channel_alias). `envgen check` states the list (no network), `envgen doctor`
and `envgen build` try each (``pipeline.fetch``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from envgen.plan.image import ImagePlan
from envgen.profile.model import Mirrors

PYPI = "https://pypi.org/simple"
PYTORCH = "https://download.pytorch.org/whl"
CONDA = "https://conda.anaconda.org"


@dataclass(frozen=True)
class Download:
    what: str  # "PyPI", "PyTorch's index (torch==2.13.0+cpu)", "micromamba", "conda channel conda-forge"
    url: str  # where the build fetches it, mirrors applied
    route: str  # how to send it elsewhere: the mirrors key (or --wheelhouse --offline for pip's downloads)
    pip: bool  # a pip download: `--wheelhouse DIR --offline` serves it instead
    index: bool = False  # pip's package index: a wheelhouse (without --offline) may serve all it is asked

    def line(self) -> str:
        return f"{self.what} {self.url}"


def downloads(plan: ImagePlan, mirrors: Mirrors, wheelhouse: Path | None = None) -> list[Download]:
    """Every place the build of ``plan`` fetches from, in the order the build reaches them; a framework index whose
    wheels the ``wheelhouse`` holds is left out, as the render leaves it out (``plan.lockfile.wheelhouse_covers``)."""
    from envgen.plan.lockfile import wheelhouse_covers

    profile, part, out = plan.profile, plan.installer_part, list[Download]()
    installer = part.installer
    if installer.fetched_tool:  # the tool that makes the environment (the installer's: micromamba for conda)
        out.append(Download(installer.fetched_tool, getattr(mirrors, installer.tool_mirror) or part.fetched["url"],
                            f"mirrors.{installer.tool_mirror}", False))
    if installer.conda_env:
        alias = (mirrors.conda_channel_alias or CONDA).rstrip("/")
        for channel in profile.channels or installer.facts.channels:
            out.append(Download(f"conda channel {channel}", mirrors.conda_channels.get(channel, f"{alias}/{channel}"),
                                "mirrors.conda_channels", False))
    torch = [p for p in plan.framework_pip if p.startswith("torch==")]
    framework_index = not wheelhouse_covers(wheelhouse, plan.pins.pip)
    for url in (*plan.pip_index_urls, *plan.pip_find_links) if framework_index else ():
        if mirrors.pytorch_wheels and url.startswith(PYTORCH):
            url = mirrors.pytorch_wheels.rstrip("/") + url[len(PYTORCH):]
        what = "PyTorch's index" if url.startswith(PYTORCH) or mirrors.pytorch_wheels else "the index"
        out.append(Download(f"{what} ({', '.join(torch) or 'the frameworks'})", url, "mirrors.pytorch_wheels", True))
    # lines the base holds (stage "base") fetch nothing; a source build fetches its sdist
    if plan.environment_pip or plan.extras_pip or any(r.stage == "source build" for r in plan.requirements):
        out.append(Download("the package index" if mirrors.pip_index_url else "PyPI",
                            mirrors.pip_index_url or PYPI, "mirrors.pip_index_url", True, index=True))
    return out


def statement(found: list[Download], profile_arg: str) -> str:
    """check's offline line: what the build fetches, and where each can come from instead (``profile_arg``: the
    profile as a printed command names it)."""
    if not found:
        return "the build downloads no packages (apt aside)"
    routes = sorted({d.route for d in found} | ({"--wheelhouse DIR --offline"} if any(d.pip for d in found)
                                                 else set()))
    return ("the build downloads from: " + "; ".join(d.line() for d in found)
            + f" (not tried here: `envgen doctor --profile {profile_arg}` tries each; elsewhere from: "
            f"{', '.join(routes)})")
