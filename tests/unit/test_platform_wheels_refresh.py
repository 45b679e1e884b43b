"""tools.kbrefresh.platform_wheels: the aarch64 wheels of a release (a pure wheel serves every platform), the CUDA
runtime pin that holds on Linux aarch64 (markers evaluated there, not on x86_64), and the build's own CUDA record.
Inputs in the shapes PyPI serves: PEP 691 file entries and core-metadata lines."""

from __future__ import annotations

from typing import Any

from tools.kbrefresh.platform_wheels import CUDA_RECORDS, aarch64_wheels, runtime_pin


def entry(filename: str) -> dict[str, Any]:
    return {"filename": filename, "url": f"https://files.pythonhosted.org/x/{filename}", "hashes": {"sha256": "0" * 64}}


def test_aarch64_wheels_and_their_pythons() -> None:
    files = [entry("torch-2.11.0-cp311-cp311-manylinux_2_28_aarch64.whl"),
             entry("torch-2.11.0-cp312-cp312-manylinux_2_28_aarch64.whl"),
             entry("torch-2.11.0-cp312-cp312-manylinux_2_28_x86_64.whl"),
             entry("torch-2.10.0-cp312-cp312-manylinux_2_28_aarch64.whl")]
    found = aarch64_wheels(files, "torch", "2.11.0")
    assert [(e["filename"].split("-")[2], pys) for e, pys in found] == [("cp311", ["3.11"]), ("cp312", ["3.12"])]
    pure = aarch64_wheels([entry("flashinfer_python-0.2.5-py3-none-any.whl")], "flashinfer-python", "0.2.5")
    assert [pys for _, pys in pure] == [["py3"]]
    assert aarch64_wheels([entry("xformers-0.0.28-cp39-abi3-manylinux_2_28_x86_64.whl")], "xformers", "0.0.28") == []


def test_the_runtime_pin_is_read_for_aarch64() -> None:
    x86_only = ('Metadata-Version: 2.1\nName: torch\nVersion: 2.9.0\n'
                'Requires-Dist: nvidia-cuda-runtime-cu12==12.8.90; platform_system == "Linux" and '
                'platform_machine == "x86_64"\nRequires-Dist: filelock\n\n')
    both = ('Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0\n'
            'Requires-Dist: cuda-toolkit==13.0.2; platform_system == "Linux"\n'
            'Requires-Dist: nvidia-cuda-runtime-cu12==12.8.90; extra == "cu12"\n\n')
    assert runtime_pin(x86_only, "3.12") is None
    assert runtime_pin(both, "3.12") == "cuda-toolkit==13.0.2"


def test_the_build_records_its_cuda() -> None:
    member, pattern = CUDA_RECORDS["torch"]
    assert member == "torch/version.py"
    found = pattern.search("__version__ = '2.11.0'\ncuda: Optional[str] = '13.0'\n")
    assert found is not None and found.group(1) == "13.0"
    assert pattern.search("cuda: Optional[str] = None\n") is None
    _, tf = CUDA_RECORDS["tensorflow"]
    tf_found = tf.search("build_info = {'cuda_version': '12.5.1', 'is_cuda_build': True}")
    assert tf_found is not None and tf_found.group(1) == "12.5.1"
