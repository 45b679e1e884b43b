"""The install commands of a Dockerfile's ``RUN`` lines read into a ``Read``: ``pip``/``pip3``/``python -m pip``/
``uv pip`` install (their ``-r``, ``-c``, ``-f``/``--find-links``, ``--index-url``/``--extra-index-url``, ``-e`` and
local paths) and ``conda``/``mamba``/``micromamba`` install or create (``-c`` channels, specs). A PyTorch index or
find-links page names torch's build (``download.pytorch.org/whl/cu121``, ``…/cu111/torch_stable.html``); a local
path or an editable install is the project itself, said once; a ``-r`` file is read where it lies beside the
Dockerfile (through the file's COPY lines), else named as a file to adopt too."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from envgen.suggest.adopt.model import Item, Origin, Read, Skip
from envgen.suggest.adopt.project import LOCAL
from envgen.suggest.adopt.reqfile import take_line

TORCH_URL = re.compile(r"download\.pytorch\.org/whl/(?:nightly/|test/)?(cu\d{2,3}|cpu|rocm[0-9.]+)(?:/|$)")
_PIP_VALUE = {"-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url",
              "--trusted-host", "-f", "--find-links", "-e", "--editable"}
_IGNORED_VALUE = {"--prefix", "--target", "-t", "--root", "--python", "-p", "--platform", "--python-version",
                  "--implementation", "--abi", "--src", "--cache-dir", "--log", "--progress-bar",
                  "--upgrade-strategy", "--config-settings", "-C", "--global-option", "--install-option",
                  "--only-binary", "--no-binary", "--index-strategy", "--torch-backend", "--proxy", "--timeout",
                  "--retries", "--exists-action", "--report"}
_CONDA_VALUE = {"-c", "--channel", "-n", "--name", "-p", "--prefix", "--file", "--override-channels"}


@dataclass
class Context:
    """What earlier lines of the Dockerfile tell the install lines: its directory (the build context, as far as
    envgen can tell), the WORKDIR, the files COPY put in the image and the directories ``git clone`` made."""

    directory: Path
    workdir: str = "/"
    copied: dict[str, str] = field(default_factory=dict)  # path in the image -> path in the context
    cloned: set[str] = field(default_factory=set)
    local_noted: bool = False

    def in_image(self, path: str) -> str:
        return str(PurePosixPath(self.workdir) / path)


def pip_command(words: list[str]) -> list[str] | None:
    """The words after ``install`` when ``words`` is a pip install (pip, pip3.10, python3 -m pip, uv pip)."""
    head = PurePosixPath(words[0]).name if words else ""
    rest: list[str]
    if re.fullmatch(r"pip3?(\.\d+)?", head):
        rest = words[1:]
    elif re.fullmatch(r"python3?(\.\d+)?", head) and words[1:3] == ["-m", "pip"]:
        rest = words[3:]
    elif head == "uv" and words[1:2] == ["pip"]:
        rest = words[2:]
    else:
        return None
    while rest and rest[0].startswith("-"):  # pip's own options before the command (--no-cache-dir, -q)
        rest = rest[2:] if rest[0] in ("--cache-dir", "--log", "--proxy", "--python") else rest[1:]
    return rest[1:] if rest[:1] == ["install"] else None


def conda_command(words: list[str]) -> list[str] | None:
    head = PurePosixPath(words[0]).name if words else ""
    if head in ("conda", "mamba", "micromamba") and words[1:2] in (["install"], ["create"]):
        return words[2:]
    return None


def pip_install(words: list[str], origin: Origin, read: Read, ctx: Context) -> None:
    index = 0
    while index < len(words):
        word, value = words[index], words[index + 1] if index + 1 < len(words) else ""
        name, eq, inline = word.partition("=")
        if word.startswith("--") and eq and name in _PIP_VALUE | _IGNORED_VALUE:
            word, value, index = name, inline, index - 1
        if word in _PIP_VALUE:
            _option(word, value, origin, read, ctx)
            index += 2
        elif word in _IGNORED_VALUE:
            index += 2
        elif word.startswith("-"):
            index += 1
        else:
            _target(word, origin, read, ctx)
            index += 1


def _option(flag: str, value: str, origin: Origin, read: Read, ctx: Context) -> None:
    if flag in ("-e", "--editable"):
        if "://" in value or value.startswith("git+"):
            take_line(f"-e {value}", origin, read, ctx.directory / "Dockerfile")
        else:
            _local(value, origin, read, ctx)
    elif flag in ("-r", "--requirement", "-c", "--constraint"):
        _file(flag, value, origin, read, ctx)
    elif flag in ("-f", "--find-links") and TORCH_URL.search(value):
        _torch(value, origin, read)
    else:
        if flag in ("-i", "--index-url", "--extra-index-url") and TORCH_URL.search(value):
            _torch(value, origin, read)
        take_line(f"{flag} {value}", origin, read, ctx.directory / "Dockerfile")


def _torch(url: str, origin: Origin, read: Read) -> None:
    m = TORCH_URL.search(url)
    if m is not None:
        read.torch_build = Item(m.group(1), origin)
        if "/nightly/" in url or "/test/" in url:
            read.notes.append(f"{origin}: {url} serves nightly or test builds, which change under the same name: "
                              "the profile takes the release the knowledge base knows")


def _local(path: str, origin: Origin, read: Read, ctx: Context) -> None:
    read.skipped.append(Skip(path, origin, "a local path, not a requirement on an index: " + (
        "see the note on the project" if ctx.local_noted else LOCAL)))
    ctx.local_noted = True


def _is_local(word: str, ctx: Context) -> bool:
    bare = word.split("[", 1)[0]
    return (bare.startswith((".", "/", "~")) or "/" in bare and "://" not in bare and "@" not in word
            or bare.endswith((".whl", ".tar.gz", ".zip")) and "://" not in bare or bare in ctx.cloned)


def _target(word: str, origin: Origin, read: Read, ctx: Context) -> None:
    if word in ("pip", "uv"):
        read.notes.append(f"{origin}: {word!r} not taken: the image's installer is envgen's own")
    elif _is_local(word, ctx):
        _local(word, origin, read, ctx)
    else:
        take_line(word, origin, read, ctx.directory / "Dockerfile")


def _file(flag: str, value: str, origin: Origin, read: Read, ctx: Context) -> None:
    """A ``-r``/``-c`` file: read where it lies in the context (``COPY`` maps the image's path back), else named."""
    candidates = [ctx.copied.get(ctx.in_image(value)), ctx.copied.get(value), value.lstrip("/"),
                  PurePosixPath(value).name]
    found = next((c for c in candidates if c and (ctx.directory / c).is_file()), None)
    if found is None:
        read.skipped.append(Skip(f"{flag} {value}", origin, "a file of the build context that is not beside the "
                                 f"Dockerfile: adopt it too (envgen init --from {PurePosixPath(value).name})"))
    elif flag in ("-c", "--constraint"):
        read.notes.append(f"{origin}: the constraints file {found} is not read: `envgen lock` pins every version "
                          "(write a constraint that matters as a line, numpy<2)")
    else:
        take_line(f"-r {found}", origin, read, ctx.directory / "Dockerfile")


def conda_install(words: list[str], origin: Origin, read: Read) -> None:
    index = 0
    while index < len(words):
        word = words[index]
        if word in ("-c", "--channel") and index + 1 < len(words):
            if all(c.text != words[index + 1] for c in read.channels):
                read.channels.append(Item(words[index + 1], origin))
            index += 2
            continue
        if word in _CONDA_VALUE:
            index += 2
            continue
        if not word.startswith("-"):
            conda_spec(word, origin, read)
        index += 1


def conda_spec(spec: str, origin: Origin, read: Read) -> None:
    """One conda spec: ``python`` gives the Python, ``pip`` is noted (the image has its own), the rest is taken."""
    name = re.split(r"[=<>!~ ]", spec.split("::")[-1], maxsplit=1)[0].lower()
    if name == "python":
        read.python = Item(spec.split("::")[-1][len("python"):].strip().lstrip("=") or "", origin)
    elif name == "pip":
        read.notes.append(f"{origin}: {spec!r} not taken: conda's pip installs the pip lines; envgen's image "
                          "has its own pip (the pip lines are taken as packages.pip)")
    else:
        read.conda.append(Item(spec, origin))
