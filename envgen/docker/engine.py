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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from docker import DockerClient

EngineKind = Literal["docker", "podman"]
PODMAN_COMPONENT = "Podman Engine"
# the directories podman reads CDI specs from (containers/common's default cdi_spec_dirs)
PODMAN_CDI_DIRS = ("/etc/cdi", "/var/run/cdi")


@dataclass(frozen=True)
class EngineInfo:
    kind: EngineKind
    version: str | None  # the engine's own version: dockerd's, or podman's
    api_version: str | None

    @property
    def name(self) -> str:
        return "Podman" if self.kind == "podman" else "Docker"


def engine_from_version(version: Mapping[str, Any]) -> EngineInfo:
    """The engine described by the API's ``/version`` answer (what ``client.version()`` returns)."""
    components: Sequence[Any] = version.get("Components") or ()
    names = {str(c.get("Name")): c for c in components if isinstance(c, Mapping)}
    if PODMAN_COMPONENT in names:
        return EngineInfo("podman", str(names[PODMAN_COMPONENT].get("Version") or version.get("Version") or "")
                          or None, version.get("ApiVersion"))
    return EngineInfo("docker", version.get("Version"), version.get("ApiVersion"))


def engine_info(client: DockerClient) -> EngineInfo:
    """Ask the engine ``client`` talks to who it is."""
    return engine_from_version(client.version())
