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
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from envgen.vocabulary import LABEL_OWNER

if TYPE_CHECKING:
    from envgen.docker.socket_engine import Engine

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


def _owner_of(labels: Mapping[str, str], name: str) -> tuple[str, str, str] | None:
    if LABEL_OWNER in labels:
        parts = labels[LABEL_OWNER].split("/")
        return (parts[0], parts[1], parts[2]) if len(parts) == 3 else None
    if name.startswith(SEAL_PREFIX):
        pid, start, *rest = name[len(SEAL_PREFIX):].split(".")
        return (".".join(rest[:-1]), pid, start) if len(rest) >= 2 else None
    return None


def remove_orphans(client: Engine) -> list[str]:
    """Remove the probe and seal containers whose envgen is gone; their names."""
    from envgen.docker.socket_engine import SocketContainer, SocketEngine, api_errors

    found: list[tuple[Any, Mapping[str, str], str]] = []  # (container, labels, name)
    for filters in ({"label": LABEL_OWNER}, {"name": SEAL_PREFIX}):
        if isinstance(client, SocketEngine):
            found += [(SocketContainer(client, row["Id"]), row.get("Labels") or {},
                       str((row.get("Names") or ["/"])[0]).lstrip("/")) for row in client.containers(filters)]
        else:
            found += [(c, c.labels or {}, str(c.name or "")) for c in client.containers.list(all=True, filters=filters)]
    removed = []
    for container, labels, name in found:
        owner = _owner_of(labels, name)
        if owner is not None and _dead(*owner):
            with contextlib.suppress(*api_errors(client)):
                container.remove(force=True)
                removed.append(name)
    return removed


__all__ = ["SEAL_PREFIX", "owner_labels", "owner_value", "remove_orphans", "seal_name"]
