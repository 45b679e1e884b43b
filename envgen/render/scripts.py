"""envgen's build scripts in the context: the ones the rendered Dockerfiles run, and those they run in turn.

The scripts (``templates/sh/*.sh``, POSIX sh) hold the shell the Dockerfiles used to carry inline: the apt mirror,
the build secrets, pip's and uv's settings, the conda environment, the extras' checks. They are shipped as
``envgen/sh/`` in the context; each RUN that runs one reaches it and the scripts it sources or runs at ``IMAGE_DIR``
(render/steps.py: a bind mount per script under BuildKit, a COPY just before the RUN under the classic builder).
Only the scripts a Dockerfile names (and what those source or run: ``$here/NAME.sh``) are shipped, so a script a
profile never runs does not move its content hash; lib.sh always is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from envgen import layout
from envgen.errors import RenderError
from envgen.paths import build_scripts_dir

CONTEXT_PREFIX = layout.CONTEXT_SCRIPTS + "/"  # where the scripts lie in the build context
IMAGE_DIR = layout.SCRIPTS  # where a RUN finds them
ALWAYS = "lib.sh"
_NAME = r"([A-Za-z0-9_.-]+\.sh)"
_RUN_BY_DOCKERFILE = re.compile(re.escape(IMAGE_DIR) + "/" + _NAME)
_RUN_BY_SCRIPT = re.compile(r"\$here/" + _NAME)


def build_scripts(dockerfiles: Iterable[str], directory: Path | None = None) -> dict[str, bytes]:
    """Context path -> bytes of every script the ``dockerfiles`` name, with the scripts those use."""
    root = directory or build_scripts_dir()
    # lib.sh always, as before steps bound their scripts one by one
    wanted = {ALWAYS} | {name for text in dockerfiles for name in _RUN_BY_DOCKERFILE.findall(text)}
    found: dict[str, bytes] = {}
    while wanted:
        name = wanted.pop()
        path = root / name
        if not path.is_file():
            raise RenderError(f"build script {name} (named by a template) is not in {root}")
        found[name] = path.read_bytes()
        wanted |= set(_RUN_BY_SCRIPT.findall(found[name].decode("utf-8"))) - set(found)
    return {CONTEXT_PREFIX + name: found[name] for name in sorted(found)}
