"""Who owns the containers envgen starts for itself (the smoke probe, the seal), so that one whose envgen died
without removing it (SIGKILL, a lost machine) is removed by the next envgen that starts one, and only then.

The probe carries the label ``LABEL_OWNER`` = ``HOST/PID/START``; the seal's container is committed into the image,
and a label on it would be copied into the image, so its owner is its name instead:
``envgen-seal.PID.START.HOST``. START is the process's start time (``/proc/PID/stat``, field 22), so a PID reused
by another process does not keep a dead envgen's container alive. Containers of another host (an engine shared
over the network) are left alone."""

from __future__ import annotations

import contextlib
import os
import re
import socket
from typing import TYPE_CHECKING

from envgen.vocabulary import LABEL_OWNER

if TYPE_CHECKING:
    from docker import DockerClient

SEAL_PREFIX = "envgen-seal."


def _start_ticks(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return "?"


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "-", socket.gethostname()) or "host"


def owner_value() -> str:
    """This process as an owner: ``HOST/PID/START``."""
    pid = os.getpid()
    return f"{_host()}/{pid}/{_start_ticks(pid)}"


def owner_labels() -> dict[str, str]:
    return {LABEL_OWNER: owner_value()}


def seal_name() -> str:
    pid = os.getpid()
    return f"{SEAL_PREFIX}{pid}.{_start_ticks(pid)}.{_host()}.{os.urandom(3).hex()}"


def _dead(host: str, pid: str, start: str) -> bool:
    """True when the owner was a process of this host that is gone (or another one now has its PID)."""
    if host != _host() or not pid.isdigit():
        return False
    return _start_ticks(int(pid)) != start


def _owner_of(container: object) -> tuple[str, str, str] | None:
    labels = getattr(container, "labels", {}) or {}
    if LABEL_OWNER in labels:
        parts = labels[LABEL_OWNER].split("/")
        return (parts[0], parts[1], parts[2]) if len(parts) == 3 else None
    name = str(getattr(container, "name", "") or "")
    if name.startswith(SEAL_PREFIX):
        pid, start, *rest = name[len(SEAL_PREFIX):].split(".")
        return (".".join(rest[:-1]), pid, start) if len(rest) >= 2 else None
    return None


def remove_orphans(client: DockerClient) -> list[str]:
    """Remove the probe and seal containers whose envgen is gone; their names."""
    from docker.errors import APIError

    removed = []
    candidates = client.containers.list(all=True, filters={"label": LABEL_OWNER})
    candidates += [c for c in client.containers.list(all=True, filters={"name": SEAL_PREFIX})
                   if str(c.name).startswith(SEAL_PREFIX)]
    for container in candidates:
        owner = _owner_of(container)
        if owner is not None and _dead(*owner):
            with contextlib.suppress(APIError):
                container.remove(force=True)
                removed.append(str(container.name))
    return removed


__all__ = ["SEAL_PREFIX", "owner_labels", "owner_value", "remove_orphans", "seal_name"]
