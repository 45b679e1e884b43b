"""A Dockerfile (of any name: ``sniff`` tells it by content) read for what it installs: its (last) ``FROM``, the
``ARG``/``ENV`` values its lines use (``$VAR``, ``${VAR}``, ``${VAR:-default}`` expanded), ``ENV``, ``apt-get
install`` packages and every pip/uv pip/conda/mamba install (``installs``); every other instruction and command is
listed with the reason it is not taken, never dropped in silence."""

from __future__ import annotations

import re
import shlex
from pathlib import Path, PurePosixPath

from envgen.errors import InputError
from envgen.layout import WORKSPACE
from envgen.profile.values import APT_RE, ENV_KEY_RE, ENV_VALUE_RE
from envgen.suggest.adopt.framework_bases import take_framework_base
from envgen.suggest.adopt.installs import Context, conda_command, conda_install, pip_command, pip_install
from envgen.suggest.adopt.model import Item, Origin, Read, Skip
from envgen.suggest.adopt.reqfile import logical_lines

_WHY = {"COPY": "files of the build context are not part of a profile: install what they hold as packages",
        "ADD": "files of the build context are not part of a profile: install what they hold as packages",
        "WORKDIR": f"envgen run mounts the working directory at {WORKSPACE}",
        "USER": "envgen's images run as the profile's user (user: name, uid)",
        "CMD": "envgen run takes the command", "ENTRYPOINT": "envgen run takes the command",
        "ARG": "a profile has no build arguments: its value is used where the file reads it",
        "EXPOSE": "not part of the environment", "LABEL": "envgen writes its own labels",
        "HEALTHCHECK": "not part of the environment", "VOLUME": "not part of the environment",
        "SHELL": "envgen's build steps are POSIX sh scripts"}
_APT = re.compile(r"^(?:apt-get|apt)\s+install\b")
_ALWAYS = ("apt-get update", "apt update", "apt-get clean", "rm -rf /var/lib/apt/lists", "pip install --upgrade pip",
           "pip install -U pip", "python -m pip install --upgrade pip", "python3 -m pip install --upgrade pip",
           "source activate", "conda activate", "conda clean", "echo ", "cd ")
_VAR = re.compile(r"\$\{(\w+)(?::?-([^}]*))?\}|\$(\w+)")


def _expand(text: str, values: dict[str, str]) -> str:
    def one(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(3)
        return values.get(name, m.group(2) if m.group(2) is not None else m.group(0))

    return _VAR.sub(one, text)


def read_dockerfile(path: Path) -> Read:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read it ({exc.strerror or exc})", fix="give a Dockerfile") from None
    read, shown, froms = Read(kind="dockerfile"), str(path), 0
    values: dict[str, str] = {}
    ctx = Context(path.parent)
    for number, raw in logical_lines(text):
        origin = Origin(shown, number)
        word, _, rest = raw.partition(" ")
        word = word.upper()
        line = raw if word in ("ARG",) else f"{word} {_expand(rest, values)}"
        rest = line.partition(" ")[2]
        if word == "FROM":
            froms += 1
            if read.base is not None:
                read.notes.append(f"{read.base.origin}: the stage FROM {read.base.text} is left for the last one "
                                  "(a profile is one image)")
            words = [w for w in rest.split() if not w.startswith("--")]
            read.base = Item(words[0] if words else "", origin)
        elif word == "ENV":
            _env(rest, origin, read, values)
        elif word == "ARG":
            _arg(rest, values)
            read.skipped.append(Skip(raw, origin, _WHY["ARG"]))
        elif word == "RUN":
            _run_line(rest, origin, read, ctx)
        else:
            _other(word, rest, ctx)
            read.skipped.append(Skip(raw, origin, _WHY.get(word, "an instruction envgen does not take")))
    if froms == 0:
        raise InputError(f"{path}: no FROM line (not a Dockerfile?)", fix="give a Dockerfile")
    take_framework_base(read)
    return read


def _arg(rest: str, values: dict[str, str]) -> None:
    name, eq, value = rest.strip().partition("=")
    if eq and name not in values:
        values[name] = value.strip().strip("\"'")


def _other(word: str, rest: str, ctx: Context) -> None:
    """WORKDIR and COPY/ADD, kept to find the files a later ``pip install -r`` reads."""
    if word == "WORKDIR" and rest.strip():
        ctx.workdir = str(PurePosixPath(ctx.workdir) / rest.strip())
    elif word in ("COPY", "ADD"):
        words = [w for w in rest.split() if not w.startswith("--")]
        if len(words) >= 2 and not words[0].startswith("["):
            dest = ctx.in_image(words[-1])
            for src in words[:-1]:
                target = dest if len(words) == 2 and not words[-1].endswith("/") and words[-1] != "." else \
                    str(PurePosixPath(dest) / PurePosixPath(src).name)
                ctx.copied[target] = src


def _env(rest: str, origin: Origin, read: Read, values: dict[str, str]) -> None:
    words = shlex.split(rest) if "=" in rest.split(" ", 1)[0] else [rest.replace(" ", "=", 1)]
    for word in words:
        key, _, value = word.partition("=")
        values[key] = value
        if ENV_KEY_RE.match(key) and ENV_VALUE_RE.match(value):
            read.env[key] = Item(value, origin)
        else:
            read.skipped.append(Skip(f"ENV {word}", origin, "not an env: entry a profile takes (a fixed value of "
                                     "letters, digits and _.,:/=+@%-; no $VARIABLES): write the value itself"))


def _run_line(rest: str, origin: Origin, read: Read, ctx: Context) -> None:
    rest = re.sub(r"^(?:--\S+\s+)+", "", rest.strip())  # RUN's own flags (--mount=...)
    for command in re.split(r"\s*(?:&&|;|\|\|)\s*", rest):
        _run(command.strip(), origin, read, ctx)


def _words(command: str) -> list[str]:
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    while words and (re.fullmatch(r"\w+=\S*", words[0]) or words[0] in ("sudo", "env", "exec")):
        words = words[1:]  # FOO=1 pip install ..., sudo pip install ...
    return words


def _run(command: str, origin: Origin, read: Read, ctx: Context) -> None:
    if not command or any(command.startswith(a) for a in _ALWAYS):
        return
    words = _words(command)
    if _APT.match(" ".join(words)):
        for word in words[2:]:
            if word.startswith("-"):
                continue
            held = next((a for a in read.apt if a.text == word), None)
            if held is not None:  # installed again (a later stage): one line in the profile
                read.skipped.append(Skip(word, origin, f"installed again: taken once, from {held.origin}"))
            elif APT_RE.match(word):
                read.apt.append(Item(word, origin))
            else:
                read.skipped.append(Skip(word, origin, "not an apt package name a profile takes"))
        return
    pip, conda = pip_command(words), conda_command(words)
    if pip is not None:
        pip_install(pip, origin, read, ctx)
        return
    if conda is not None:
        conda_install(conda, origin, read)
        return
    if words[:2] == ["git", "clone"]:
        targets = [w for i, w in enumerate(words[2:], 2) if not w.startswith("-")
                   and words[i - 1] not in ("--depth", "-b", "--branch", "--origin", "-o", "-c", "--config")]
        if targets:
            ctx.cloned.add(targets[1] if len(targets) > 1 else PurePosixPath(targets[0]).name.removesuffix(".git"))
    read.skipped.append(Skip(f"RUN {command}", origin, "a command envgen does not reproduce (it makes the "
                             "environment itself): if it installs something, name it in packages"))
