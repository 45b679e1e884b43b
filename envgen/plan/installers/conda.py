"""conda: micromamba (pinned and checksummed: render/data/tools.yaml) makes a conda environment from
environment.yml, packages.conda and the Python the profile names, the frameworks' pins on top with pip
(render/dockerfile.py: Micromamba); locked by py-rattler as an explicit list (``envgen lock``: lock/lock_conda.py)."""

from __future__ import annotations

import os
from typing import Any

from envgen.errors import RenderError
from envgen.plan.installers.base import ContextFile, Installer


class Conda(Installer):
    name = "conda"
    conda_env = True
    adopted_from = ("environment",)
    stages = ("base", "conda", "environment", "extras")
    context_files = (ContextFile("environment.yml", "context/environment.yml.j2"),)
    lock_suffix = ".conda.txt"
    lock_tool = "py-rattler"
    lock_command = "lock_conda.lock_line"
    lock_missing = ("conda resolves its packages and their dependencies (the frameworks' own too) at build time",
                    "needs the conda channels, or --conda-channel NAME=URL for a mirror")
    check_rules = ("lock.lockfile.conda_lock_state",)
    python_setup = "conda"  # the conda environment brings its own Python on any base
    fetched_tool, tool_mirror = "micromamba", "micromamba_url"
    suggested = True  # suggest's profiles: conda-forge's frameworks bring their own CUDA user space on a plain OS base


def tools() -> dict[str, Any]:
    """render/data/tools.yaml (micromamba's pin, conda's pip), parsed once per content (``envgen.parsed``)."""
    from envgen.cache import cache_dir
    from envgen.parsed import parse_yaml
    from envgen.paths import render_data_dir

    path = render_data_dir() / "tools.yaml"
    loaded = parse_yaml(path.read_text(encoding="utf-8"), cache_dir(os.environ), c_loader=True)
    if not isinstance(loaded, dict):
        raise RenderError(f"render data file {path} must be a mapping")
    return loaded
