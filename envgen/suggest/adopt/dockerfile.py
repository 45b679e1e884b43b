"""A Dockerfile read for what it installs: its (last) ``FROM``, ``ENV``, ``apt-get install`` packages and ``pip
install`` requirements (with their ``-r`` files, read as requirements.txt is, and index options); every other
instruction and command is listed with the reason it is not taken, never dropped in silence."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from envgen.errors import InputError
from envgen.profile.values import APT_RE, ENV_KEY_RE, ENV_VALUE_RE
from envgen.suggest.adopt.model import Item, Origin, Read, Skip
from envgen.suggest.adopt.reqfile import logical_lines, take_line

_WHY = {"COPY": "files of the build context are not part of a profile: install what they hold as packages",
        "ADD": "files of the build context are not part of a profile: install what they hold as packages",
        "WORKDIR": "envgen run mounts the working directory at /workspace",
        "USER": "envgen's images run as the profile's user (user: name, uid)",
        "CMD": "envgen run takes the command", "ENTRYPOINT": "envgen run takes the command",
        "ARG": "build arguments are envgen's own (mirrors, proxies)", "EXPOSE": "not part of the environment",
        "LABEL": "envgen writes its own labels", "HEALTHCHECK": "not part of the environment",
        "VOLUME": "not part of the environment", "SHELL": "envgen's build steps are POSIX sh scripts"}
_PIP = re.compile(r"^(?:\S*/)?(?:pip3?(?:\.\d+)?|python3?(?:\.\d+)?\s+-m\s+pip)\s+install\b")
_APT = re.compile(r"^(?:apt-get|apt)\s+install\b")
_ALWAYS = ("apt-get update", "apt update", "rm -rf /var/lib/apt/lists", "pip install --upgrade pip")


def read_dockerfile(path: Path) -> Read:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read it ({exc.strerror or exc})", fix="give a Dockerfile") from None
    read, shown, froms = Read(kind="dockerfile"), str(path), 0
    for number, line in logical_lines(text):
        origin = Origin(shown, number)
        word, _, rest = line.partition(" ")
        word = word.upper()
        if word == "FROM":
            froms += 1
            if read.base is not None:
                read.notes.append(f"{read.base.origin}: the stage FROM {read.base.text} is left for the last one "
                                  "(a profile is one image)")
            read.base = Item(rest.split()[0] if rest.split() else "", origin)
        elif word == "ENV":
            _env(rest, origin, read)
        elif word == "RUN":
            rest = re.sub(r"^(?:--\S+\s+)+", "", rest.strip())  # RUN's own flags (--mount=...)
            for command in re.split(r"\s*(?:&&|;|\|\|)\s*", rest):
                _run(command.strip(), origin, read, path)
        else:
            read.skipped.append(Skip(line, origin, _WHY.get(word, "an instruction envgen does not take")))
    if froms == 0:
        raise InputError(f"{path}: no FROM line (not a Dockerfile?)", fix="give a Dockerfile")
    return read


def _env(rest: str, origin: Origin, read: Read) -> None:
    words = shlex.split(rest) if "=" in rest.split(" ", 1)[0] else [rest.replace(" ", "=", 1)]
    for word in words:
        key, _, value = word.partition("=")
        if ENV_KEY_RE.match(key) and ENV_VALUE_RE.match(value):
            read.env[key] = Item(value, origin)
        else:
            read.skipped.append(Skip(f"ENV {word}", origin, "not an env: entry a profile takes (a fixed value of "
                                     "letters, digits and _.,:/=+@%-; no $VARIABLES): write the value itself"))


def _run(command: str, origin: Origin, read: Read, path: Path) -> None:
    if not command or any(command.startswith(a) for a in _ALWAYS):
        return
    if _APT.match(command):
        for word in command.split()[2:]:
            if word.startswith("-"):
                continue
            if APT_RE.match(word):
                read.apt.append(Item(word, origin))
            else:
                read.skipped.append(Skip(word, origin, "not an apt package name a profile takes"))
        return
    match = _PIP.match(command)
    if match is None:
        read.skipped.append(Skip(f"RUN {command}", origin, "a command envgen does not reproduce (it makes the "
                                 "environment itself): if it installs something, name it in packages"))
        return
    _pip_words(shlex.split(command[match.end():]), origin, read, path)


def _pip_words(words: list[str], origin: Origin, read: Read, path: Path) -> None:
    flags_with_value = {"-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url",
                        "--trusted-host", "-f", "--find-links"}
    index = 0
    while index < len(words):
        word = words[index]
        if word in flags_with_value and index + 1 < len(words):
            take_line(f"{word} {words[index + 1]}", origin, read, path)
            index += 2
            continue
        if not word.startswith("-") or "=" in word and word.split("=", 1)[0] in flags_with_value:
            take_line(word, origin, read, path)
        index += 1
