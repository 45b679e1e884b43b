"""Which engine answers on the Docker API socket: Docker's own dockerd, or Podman's Docker-compatible service
(`podman system service`). Podman names itself in the API's version components ("Podman Engine"); its
differences that matter to envgen are read here once:

- builds with secrets and cache mounts go through `podman --url SOCKET build` (the compat API's /build is the
  classic builder: no secrets), see envgen.docker.builder;
- GPUs reach containers by CDI only (no NVIDIA runtime hook), from /etc/cdi and /var/run/cdi, which podman reads
  without any setting (podman-run(1), "--device": "a CDI device name ... nvidia.com/gpu=all");
- short image names are resolved by podman's registries.conf, not always to docker.io.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from envgen.docker.socket_engine import Engine

EngineKind = Literal["docker", "podman"]
PODMAN_COMPONENT = "Podman Engine"
# the directories podman reads CDI specs from (containers/common's default cdi_spec_dirs)
PODMAN_CDI_DIRS = ("/etc/cdi", "/var/run/cdi")
# `docker info` DriverStatus of an engine with the containerd image store ("features": {"containerd-snapshotter": true})
CONTAINERD_SNAPSHOTTER = "io.containerd.snapshotter.v1"


@dataclass(frozen=True)
class EngineInfo:
    kind: EngineKind
    version: str | None  # the engine's own version: dockerd's, or podman's
    api_version: str | None
    containerd_store: bool = False  # Docker's containerd image store (info DriverStatus driver-type)

    @property
    def major(self) -> int:
        match = re.match(r"(\d+)\.", self.version or "")
        return int(match.group(1)) if match else 0

    @property
    def name(self) -> str:
        return "Podman" if self.kind == "podman" else "Docker"


def engine_from_version(version: Mapping[str, Any], info: Mapping[str, Any] | None = None) -> EngineInfo:
    """The engine described by the API's ``/version`` answer (what ``client.version()`` returns) and, for the
    image store, its ``/info`` answer."""
    components: Sequence[Any] = version.get("Components") or ()
    names = {str(c.get("Name")): c for c in components if isinstance(c, Mapping)}
    if PODMAN_COMPONENT in names:
        return EngineInfo("podman", str(names[PODMAN_COMPONENT].get("Version") or version.get("Version") or "")
                          or None, version.get("ApiVersion"))
    status = (info or {}).get("DriverStatus") or ()
    containerd = any(list(pair)[:2] == ["driver-type", CONTAINERD_SNAPSHOTTER] for pair in status)
    return EngineInfo("docker", version.get("Version"), version.get("ApiVersion"), containerd)


def engine_info(client: Engine) -> EngineInfo:
    """Ask the engine ``client`` talks to who it is."""
    return engine_from_version(client.version(), client.info())
