"""Where host facts come from: one small interface, a real provider and a recorded one.

`HostFactsProvider` returns raw outputs (`Probe`: text or the reason there is none). `RealProvider` runs
`nvidia-smi` with timeouts, reads NVML through `pynvml` when importable, asks the Docker engine through
`envgen.docker` (or the `docker` CLI when that module is absent) and looks at /proc/version for WSL.
`RecordedProvider` reads the same outputs from a fixture directory (tests/fixtures/hosts/<machine>/).
Parsing and judging happen elsewhere (parse.py, collect.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from envgen.host.cdi import read_specs
from envgen.host.model import Probe
from envgen.host.parse import QUERY_FIELDS, is_wsl_kernel

COMMAND_TIMEOUT_S = 15.0
CDI_DIRS = ("/etc/cdi", "/var/run/cdi")
# Where WSL2 mounts the Windows driver's tools; often not on PATH inside a distribution.
WSL_NVIDIA_SMI = "/usr/lib/wsl/lib/nvidia-smi"
NVIDIA_HOOKS = ("nvidia-container-runtime-hook", "nvidia-container-toolkit")


class HostFactsProvider(Protocol):
    # JSON: {"driver", "cuda", "gpus": [{index, name, compute_capability, memory_mib}]}
    def nvml(self) -> Probe: ...

    def nvidia_smi_query(self) -> Probe: ...  # CSV of parse.QUERY_FIELDS (compute_cap absent on old drivers)

    def nvidia_smi_q(self) -> Probe: ...

    def nvidia_smi_table(self) -> Probe: ...

    def docker_info(self) -> Probe: ...  # JSON or `docker info` text

    def builder(self) -> Probe: ...  # "buildx", "buildkit-legacy" or "classic"

    # (path, text) of the CDI spec files in these directories (the engine's CDISpecDirs, else CDI_DIRS)
    def cdi_specs(self, dirs: Sequence[str] = CDI_DIRS) -> list[tuple[str, str]]: ...

    def nvidia_hook(self) -> str | None: ...  # path of nvidia-container-runtime-hook, if on PATH

    def is_wsl(self) -> bool: ...


def run_command(argv: Sequence[str], timeout_s: float = COMMAND_TIMEOUT_S) -> Probe:
    """Run a command without a shell; its stdout, or one line saying why not."""
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout_s, check=False)
    except FileNotFoundError:
        return Probe(error=f"{argv[0]}: command not found")
    except subprocess.TimeoutExpired:
        return Probe(error=f"{argv[0]} did not answer within {timeout_s:g} s")
    except OSError as exc:
        return Probe(error=f"{argv[0]}: {exc.strerror or exc}")
    if done.returncode != 0:
        said = done.stderr.strip() or done.stdout.strip() or f"exit status {done.returncode}"
        return Probe(error=f"{argv[0]}: {said.splitlines()[0]}")
    return Probe(output=done.stdout)


class RealProvider:
    """Facts of the machine this runs on. Every method is safe on a machine with no GPU and no Docker."""

    def __init__(self, env: Mapping[str, str] | None = None, timeout_s: float = COMMAND_TIMEOUT_S) -> None:
        self._env = os.environ if env is None else env
        self._timeout_s = timeout_s

    def _nvidia_smi(self) -> str | None:
        found = shutil.which("nvidia-smi")
        if found:
            return found
        return WSL_NVIDIA_SMI if os.access(WSL_NVIDIA_SMI, os.X_OK) else None

    def _smi(self, *args: str) -> Probe:
        binary = self._nvidia_smi()
        if binary is None:
            return Probe(error="nvidia-smi: command not found (no NVIDIA driver installed, or not on PATH)")
        return run_command([binary, *args], self._timeout_s)

    def nvml(self) -> Probe:
        try:
            import pynvml  # type: ignore[import-not-found,unused-ignore]
        except ImportError:
            return Probe(error="pynvml (nvidia-ml-py) is not installed")
        try:
            pynvml.nvmlInit()
        except Exception as exc:  # pynvml raises NVMLError subclasses, and OSError without the library
            return Probe(error=f"NVML: {exc}")
        try:
            driver = pynvml.nvmlSystemGetDriverVersion()
            cuda_getter = getattr(pynvml, "nvmlSystemGetCudaDriverVersion_v2", None) or getattr(
                pynvml, "nvmlSystemGetCudaDriverVersion", None
            )
            cuda_raw = int(cuda_getter()) if cuda_getter else 0
            gpus = []
            for index in range(pynvml.nvmlDeviceGetCount()):
                handle = pynvml.nvmlDeviceGetHandleByIndex(index)
                major, minor = pynvml.nvmlDeviceGetCudaComputeCapability(handle)
                gpus.append({
                    "index": index,
                    "name": _text(pynvml.nvmlDeviceGetName(handle)),
                    "compute_capability": f"{major}.{minor}",
                    "memory_mib": int(pynvml.nvmlDeviceGetMemoryInfo(handle).total) // (1024 * 1024),
                })
        except Exception as exc:
            return Probe(error=f"NVML: {exc}")
        finally:
            with contextlib.suppress(Exception):
                pynvml.nvmlShutdown()
        cuda = f"{cuda_raw // 1000}.{cuda_raw % 1000 // 10}" if cuda_raw else None
        return Probe(output=json.dumps({"driver": _text(driver), "cuda": cuda, "gpus": gpus}))

    def nvidia_smi_query(self) -> Probe:
        probe = self._smi(f"--query-gpu={','.join(QUERY_FIELDS)}", "--format=csv,noheader,nounits")
        if probe.ok:
            return probe
        # `compute_cap` is a newer query field; older drivers refuse the whole query because of it.
        return self._smi(f"--query-gpu={','.join(QUERY_FIELDS[:-1])}", "--format=csv,noheader,nounits")

    def nvidia_smi_q(self) -> Probe:
        return self._smi("-q")

    def nvidia_smi_table(self) -> Probe:
        return self._smi()

    def docker_info(self) -> Probe:
        try:
            from envgen.docker.client import connect  # the engine layer, below this one
        except ImportError:  # the SDK may be missing where the engine is not
            return self._docker_cli_info()
        try:
            client = connect()
            info = client.info()
            info["Components"] = client.version().get("Components") or []  # names the engine (Podman)
            return Probe(output=json.dumps(info))
        except Exception as exc:  # DockerUnavailable, or the SDK's own errors
            message = " ".join(str(getattr(exc, "message", None) or exc).split()) or type(exc).__name__
        if shutil.which("docker") is None:
            return Probe(error="docker: command not found (Docker is not installed, or not on PATH)")
        cli = self._docker_cli_info()  # the SDK may be missing where the engine is not
        return cli if cli.ok else Probe(error=message)

    def _docker_cli_info(self) -> Probe:
        if shutil.which("docker") is None:
            return Probe(error="docker: command not found (Docker is not installed, or not on PATH)")
        return run_command(["docker", "info", "--format", "{{json .}}"], self._timeout_s)

    def builder(self) -> Probe:
        try:
            from envgen.docker.builder import detect_builder as detect
            from envgen.docker.client import connect
            from envgen.docker.engine import engine_info
        except ImportError:
            return Probe(error="envgen.docker offers no builder detection")
        try:
            info = detect(engine=self._engine(connect, engine_info))
        except Exception as exc:
            return Probe(error=f"builder detection failed: {exc}")
        return Probe(output=builder_kind(info))

    @staticmethod
    def _engine(connect: Any, engine_info: Any) -> Any:
        """The engine that answers (Podman builds otherwise), or None where none does or the SDK is missing: the
        builder is then judged from the CLIs alone, as for Docker."""
        try:
            client = connect()
        except Exception:  # DockerUnavailable: no engine, or no SDK
            return None
        try:
            return engine_info(client)
        finally:
            client.close()

    def cdi_specs(self, dirs: Sequence[str] = CDI_DIRS) -> list[tuple[str, str]]:
        return read_specs(dirs)

    def nvidia_hook(self) -> str | None:
        for name in NVIDIA_HOOKS:
            found = shutil.which(name)
            if found:
                return found
        return None

    def is_wsl(self) -> bool:
        if self._env.get("WSL_DISTRO_NAME"):
            return True
        try:
            return is_wsl_kernel(Path("/proc/version").read_text(encoding="utf-8", errors="replace"))
        except OSError:
            return False


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def builder_kind(info: object) -> str:
    """envgen.docker's BuilderInfo.kind: "buildx", "buildkit-legacy" (DOCKER_BUILDKIT=1), "podman" or "classic"."""
    kind = getattr(info, "kind", None)
    return str(kind) if kind else "unknown"


class RecordedProvider:
    """Facts read from a directory of recorded outputs (see tests/fixtures/hosts/README.md):

    nvml.json, query-gpu.csv, nvidia-smi-q.txt, nvidia-smi.txt, nvidia-smi-error.txt, docker-info.json or
    docker-info.txt, docker-error.txt, builder.txt, cdi/*.yaml, nvidia-hook.txt, proc-version.txt, env.txt.
    A missing file is a source that gave nothing.
    """

    def __init__(self, directory: str | Path) -> None:
        self.directory = Path(directory)
        if not self.directory.is_dir():
            raise FileNotFoundError(f"no recorded host at {self.directory}")

    def _read(self, name: str) -> str | None:
        path = self.directory / name
        return path.read_text(encoding="utf-8") if path.is_file() else None

    def _probe(self, name: str, error_file: str, missing: str) -> Probe:
        text = self._read(name)
        if text is not None:
            return Probe(output=text)
        error = self._read(error_file)
        return Probe(error=error.strip() if error else missing)

    def nvml(self) -> Probe:
        return self._probe("nvml.json", "nvml-error.txt", "NVML not recorded")

    def nvidia_smi_query(self) -> Probe:
        return self._probe("query-gpu.csv", "nvidia-smi-error.txt", "nvidia-smi --query-gpu not recorded")

    def nvidia_smi_q(self) -> Probe:
        return self._probe("nvidia-smi-q.txt", "nvidia-smi-error.txt", "nvidia-smi -q not recorded")

    def nvidia_smi_table(self) -> Probe:
        return self._probe("nvidia-smi.txt", "nvidia-smi-error.txt", "nvidia-smi not recorded")

    def docker_info(self) -> Probe:
        for name in ("docker-info.json", "docker-info.txt"):
            text = self._read(name)
            if text is not None:
                return Probe(output=text)
        error = self._read("docker-error.txt")
        return Probe(error=error.strip() if error else "docker info not recorded")

    def builder(self) -> Probe:
        text = self._read("builder.txt")
        return Probe(output=text.strip()) if text else Probe(error="builder not recorded")

    def cdi_specs(self, dirs: Sequence[str] = CDI_DIRS) -> list[tuple[str, str]]:
        """The recorded specs (cdi/), named by the path they had on the machine: cdi/paths.txt maps a
        file name to it ("nvidia.json /etc/cdi/nvidia.json"); without it, /etc/cdi/<file name>."""
        folder = self.directory / "cdi"
        origin = dict(line.split(None, 1) for line in (self._read("cdi/paths.txt") or "").splitlines()
                      if len(line.split(None, 1)) == 2)
        return [(origin.get(Path(path).name, f"/etc/cdi/{Path(path).name}").strip(), text)
                for path, text in read_specs([folder])]

    def nvidia_hook(self) -> str | None:
        text = self._read("nvidia-hook.txt")
        return text.strip() if text else None

    def is_wsl(self) -> bool:
        env = self._read("env.txt") or ""
        for line in env.splitlines():
            if line.startswith("WSL_DISTRO_NAME=") and line.split("=", 1)[1].strip():
                return True
        return is_wsl_kernel(self._read("proc-version.txt") or "")
