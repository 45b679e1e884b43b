"""Parsers of nvidia-smi and docker info, fed with the outputs of tests/fixtures/hosts. Those of h200-580(-cdi) and
nogpu-dev (and _engines/debian12-docker-20.10-here.txt) were recorded on those machines; the others were pasted by
users into public issues and READMEs, and some are not what they seem (each source.txt and _engines/README.md says
which): `gtx950m-451-wsl2` is assembled from two hosts, the `docker info` that a100-525, h100-535 and
gtx950m-418-linux share (_engines/linux-nvidia-runtime.txt) comes from a toolkit test VM with a fake NVIDIA
driver, and _engines/desktop-wsl2-nvidia.txt from a tutorial-like report that may be edited. They test the
parsers on those layouts; the real-machine cases are the recorded ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from envgen.host.parse import (
    is_wsl_kernel,
    parse_docker_info,
    parse_nvml_json,
    parse_query_csv,
    parse_smi_q,
    parse_smi_table,
    version_tuple,
)

HOSTS = Path(__file__).resolve().parents[1] / "fixtures" / "hosts"


def read(machine: str, name: str) -> str:
    return (HOSTS / machine / name).read_text(encoding="utf-8")


def test_query_csv_h200() -> None:
    reading = parse_query_csv(read("h200-580", "query-gpu.csv"))
    assert reading.driver == "580.159.04"
    assert [(g.index, g.name, g.memory_mib, g.compute_capability) for g in reading.gpus] == [
        (0, "NVIDIA H200", 143771, "9.0")
    ]


def test_query_csv_without_compute_cap_and_with_header() -> None:
    # The format older drivers give (no compute_cap field), and `--format=csv` with its header and units.
    reading = parse_query_csv("index, name, driver_version, memory.total [MiB]\n0, NVIDIA H200, 580.159.04, "
                              "143771 MiB\n")
    assert reading.gpus[0].memory_mib == 143771 and reading.gpus[0].compute_capability is None


def test_query_csv_error_text_gives_no_gpu() -> None:
    assert parse_query_csv('Field "compute_cap" is not a valid field to query.\n').gpus == ()


def test_smi_q_h200() -> None:
    reading = parse_smi_q(read("h200-580", "nvidia-smi-q.txt"))
    assert (reading.driver, reading.cuda) == ("580.159.04", "13.0")
    assert [(g.name, g.memory_mib) for g in reading.gpus] == [("NVIDIA H200", 143771)]


@pytest.mark.parametrize(
    ("machine", "driver", "cuda", "gpus"),
    [
        ("h200-580", "580.159.04", "13.0", [(0, "NVIDIA H200", 143771)]),
        ("h100-535", "535.161.08", "12.2", [(0, "NVIDIA H100 80GB HBM3", 81559)]),
        ("a100-525", "525.85.12", "12.0",
         [(0, "NVIDIA A100-SXM...", 81920), (1, "NVIDIA A100-SXM...", 81920)]),
        ("gtx950m-418-linux", "418.87.00", "10.1", [(0, "GeForce GTX 950M", 4046)]),
        ("gtx950m-451-wsl2", "451.67", "11.0", [(0, "GeForce GTX 950M", 4046)]),
    ],
)
def test_smi_table(machine: str, driver: str, cuda: str, gpus: list[tuple[int, str, int]]) -> None:
    reading = parse_smi_table(read(machine, "nvidia-smi.txt"))
    assert (reading.driver, reading.cuda) == (driver, cuda)
    assert [(g.index, g.name, g.memory_mib) for g in reading.gpus] == gpus


def test_smi_table_windows_wddm_row() -> None:
    # Layout of nvidia-smi on Windows (https://github.com/microsoft/WSL/issues/9134).
    text = (
        "  | NVIDIA-SMI 517.48       Driver Version: 517.48       CUDA Version: 11.7     |\n"
        "  |   0  NVIDIA GeForce ... WDDM  | 00000000:0A:00.0  On |                  N/A |\n"
        "  |  0%   31C    P8    16W / 250W |    576MiB / 11264MiB |      0%      Default |\n"
    )
    reading = parse_smi_table(text)
    assert reading.driver == "517.48"
    assert [(g.name, g.memory_mib) for g in reading.gpus] == [("NVIDIA GeForce ...", 11264)]


def test_nvml_json_h200() -> None:
    reading = parse_nvml_json(read("h200-580", "nvml.json"))
    assert reading.driver == "580.159.04"
    assert reading.gpus[0].compute_capability == "9.0"


def test_docker_info_json_of_this_machine() -> None:
    info = parse_docker_info(read("nogpu-dev", "docker-info.json"))
    assert info.server_version == "20.10.24+dfsg1"
    assert "nvidia" not in info.runtimes and "runc" in info.runtimes


def test_docker_info_text_and_json_of_this_machines_engine_agree() -> None:
    """The plain `docker info` recorded here and the JSON recorded of the same engine give the same facts (the
    kernel was updated between the two recordings)."""
    text = parse_docker_info(read("_engines", "debian12-docker-20.10-here.txt"))
    json = parse_docker_info(read("nogpu-dev", "docker-info.json"))
    assert text.server_version == json.server_version == "20.10.24+dfsg1"
    assert text.runtimes == json.runtimes == ("io.containerd.runc.v2", "io.containerd.runtime.v1.linux", "runc")
    assert text.default_runtime == json.default_runtime == "runc" and text.cdi_spec_dirs == json.cdi_spec_dirs == ()
    assert text.operating_system == json.operating_system == "Debian GNU/Linux 12 (bookworm)"


def test_docker_info_text_linux_with_nvidia_runtime() -> None:
    """From a toolkit test VM with a fake NVIDIA driver (_engines/README.md): a real engine's layout."""
    info = parse_docker_info(read("_engines", "linux-nvidia-runtime.txt"))
    assert info.server_version == "28.0.0-rc.1"
    assert info.runtimes == ("io.containerd.runc.v2", "nvidia", "runc")
    assert info.default_runtime == "runc"
    assert info.operating_system == "Ubuntu 24.04.2 LTS"


def test_docker_info_text_docker_desktop_wsl2() -> None:
    """From a tutorial-like public report, possibly edited (_engines/README.md): Docker Desktop's layout."""
    info = parse_docker_info(read("_engines", "desktop-wsl2-nvidia.txt"))
    assert info.server_version == "29.6.2"
    assert info.cdi_spec_dirs == ("/etc/cdi", "/var/run/cdi")
    assert info.kernel_version is not None and is_wsl_kernel(info.kernel_version)
    assert "nvidia" in info.runtimes


def test_docker_info_runtime_lines_only() -> None:
    info = parse_docker_info(read("_engines", "linux-runtime-not-registered.txt"))
    assert info.runtimes == ("io.containerd.runc.v2", "runc") and info.server_version is None


def test_cdi_spec_detection() -> None:
    from envgen.host.cdi import parse_spec

    assert parse_spec('cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n- name: "0"\n').is_nvidia_gpu
    assert parse_spec('{"cdiVersion":"0.6.0","kind":"nvidia.com/gpu","devices":[]}').is_nvidia_gpu
    assert not parse_spec("kind: docker.com/gpu\n").is_nvidia_gpu


def test_wsl_kernel_and_versions() -> None:
    assert not is_wsl_kernel(read("nogpu-dev", "proc-version.txt"))
    assert not is_wsl_kernel(read("h200-580", "proc-version.txt"))
    assert version_tuple("418.87.00") == (418, 87, 0)
    assert version_tuple("20.10.24+dfsg1") == (20, 10, 24)
    assert version_tuple("18.09.1-ce") == (18, 9, 1)
