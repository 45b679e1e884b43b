"""The Python of NGC framework images, read from NVIDIA's Triton build files (upstream/ngc-triton-backends.txt).

On each release branch ``rYY.MM`` of triton-inference-server/server, ``build.py`` builds the TensorFlow and PyTorch
backends against the NGC framework image of its "upstream container" release, and the backend repository's
``CMakeLists.txt`` on the same branch copies the framework's libraries out of that image from
``/usr/local/lib/pythonX.Y/dist-packages/{tensorflow,torch}``: the Python that image installs the framework for.

Input: blocks ``== REPOSITORY BRANCH COMMIT PATH`` followed by the lines read (``LINE: text``). A backend release
counts only where the server block of the same branch names that framework's image and the same upstream release;
two different Pythons in one backend block keep none.

Usage::

    python -m tools.kbrefresh.ngc_notes --triton-backends upstream/ngc-triton-backends.txt   # per release, YAML
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_HEADER = re.compile(r"^== (?P<repo>\S+) r(?P<release>\d{2}\.\d{2}) (?P<commit>[0-9a-f]{40}) (?P<path>\S+)$")
_LINE = re.compile(r"^(?P<no>\d+): (?P<text>.*)$")
_UPSTREAM = re.compile(r"[\"'](\d{2}\.\d{2})[\"'],\s+# upstream container$"
                       r'|"upstream_container_version": "(\d{2}\.\d{2})"')
_IMAGE = re.compile(r"nvcr\.io/nvidia/(tensorflow|pytorch):\{\}")
_PYTHON = re.compile(r"/usr/local/lib/python(\d+\.\d+)/dist-packages/(?:tensorflow|torch)[\"/]")
_BACKENDS = {"triton-inference-server/tensorflow_backend": "tensorflow",
             "triton-inference-server/pytorch_backend": "pytorch"}


@dataclass
class _Block:
    repo: str
    release: str
    commit: str
    path: str
    lines: list[tuple[int, str]] = field(default_factory=list)

    def url(self, line: int) -> str:
        return f"https://github.com/{self.repo}/blob/{self.commit}/{self.path}#L{line}"


def _blocks(text: str) -> list[_Block]:
    blocks: list[_Block] = []
    for raw in text.splitlines():
        head = _HEADER.match(raw)
        line = _LINE.match(raw)
        if head:
            blocks.append(_Block(head["repo"], head["release"], head["commit"], head["path"]))
        elif line and blocks:
            blocks[-1].lines.append((int(line["no"]), line["text"]))
    return blocks


def _server_builds(blocks: list[_Block]) -> set[tuple[str, str]]:
    """(framework, release) pairs a server branch builds against that framework's NGC image of its own release."""
    out: set[tuple[str, str]] = set()
    for block in blocks:
        if block.repo != "triton-inference-server/server":
            continue
        upstream = {g for _, t in block.lines for m in [_UPSTREAM.search(t)] if m for g in m.groups() if g}
        images = {m.group(1) for _, t in block.lines for m in [_IMAGE.search(t)] if m}
        if upstream == {block.release}:
            out |= {(framework, block.release) for framework in images}
    return out


def parse_backends(text: str) -> dict[str, dict[str, Any]]:
    """"tensorflow 23.12" -> {release, framework, python, page}: page is the backend line read, as a GitHub URL."""
    blocks = _blocks(text)
    built = _server_builds(blocks)
    out: dict[str, dict[str, Any]] = {}
    for block in blocks:
        framework = _BACKENDS.get(block.repo)
        if framework is None or (framework, block.release) not in built:
            continue
        found = [(no, m.group(1)) for no, t in block.lines for m in [_PYTHON.search(t)] if m]
        if len({python for _, python in found}) != 1:
            continue
        out[f"{framework} {block.release}"] = {"release": block.release, "framework": framework,
                                               "python": found[-1][1], "page": block.url(found[-1][0])}
    return dict(sorted(out.items()))
