"""What a source says, read into one neutral form (``Read``) before it becomes profile fields: each taken line with
its origin (file and line), and each line that could not be taken with the reason."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Origin:
    """Where a value came from: a file (as the user named it) and a line, or a description (``pip freeze in IMAGE``)."""

    file: str
    line: int | None = None

    def __str__(self) -> str:
        return self.file if self.line is None else f"{self.file}:{self.line}"


@dataclass(frozen=True)
class Item:
    """One value taken: a requirement line, a conda spec, a channel, a URL, a version."""

    text: str
    origin: Origin


@dataclass(frozen=True)
class Skip:
    """One line not taken, and why (with the way to take it, where there is one)."""

    text: str
    origin: Origin
    why: str

    def line(self) -> str:
        return f"{self.origin}: {self.text!r} not taken: {self.why}"


@dataclass
class Read:
    """A source, read. ``pip``: requirement lines as requirements.txt takes them (options and hashes removed);
    ``conda``: conda specs as written (``numpy=1.26.4``, ``numpy>=1.20``, ``numpy``); ``python``: a version or a
    specifier (``3.10``, ``>=3.9``); ``torch_build``: the PyTorch build an index URL names (``cu121``, ``cpu``);
    ``base``: the image a source was built on (an image's labels or history)."""

    kind: str
    pip: list[Item] = field(default_factory=list)
    conda: list[Item] = field(default_factory=list)
    channels: list[Item] = field(default_factory=list)
    python: Item | None = None
    interpreter: Item | None = None  # the interpreter an environment or image was read with (its path there)
    index_url: Item | None = None
    extra_index_urls: list[Item] = field(default_factory=list)
    trusted_hosts: list[Item] = field(default_factory=list)
    torch_build: Item | None = None
    base: Item | None = None
    local_base: bool = False  # the base was made on this engine (no registry digest)
    apt: list[Item] = field(default_factory=list)  # Debian/Ubuntu packages (a Dockerfile's apt-get install)
    env: dict[str, Item] = field(default_factory=dict)  # a Dockerfile's ENV
    skipped: list[Skip] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
