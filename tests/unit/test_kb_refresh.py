"""The offline refresh scripts parse saved upstream inputs (inline samples; no network)."""

from __future__ import annotations

from tools.kbrefresh import gpus, tensorflow, torch_arch


def test_gpus_page() -> None:
    html = (
        "<table><tr><th>GPU</th><th>Compute Capability</th></tr>"
        "<tr><td>GeForce GTX 950M</td><td>5.0</td></tr><tr><td>GeForce GTX 950</td><td>5.2</td></tr></table>"
    )
    rows = {r["name"]: r["compute_capability"] for r in gpus.parse(html)}
    assert rows == {"GeForce GTX 950M": "5.0", "GeForce GTX 950": "5.2"}


def test_torch_build_script() -> None:
    script = (
        'TORCH_CUDA_ARCH_LIST="3.7;5.0;6.0;7.0"\ncase ${CUDA_VERSION} in\n    11.8)\n'
        '        TORCH_CUDA_ARCH_LIST="${TORCH_CUDA_ARCH_LIST};7.5;8.0;8.6;9.0"\n        ;;\n'
        '    12.9)\n        TORCH_CUDA_ARCH_LIST="7.0;12.0+PTX"\n        ;;\nesac\n'
    )
    out = torch_arch.parse(script)
    assert out["11.8"]["arch_list"] == [
        "sm_37",
        "sm_50",
        "sm_60",
        "sm_70",
        "sm_75",
        "sm_80",
        "sm_86",
        "sm_90",
    ]
    assert out["12.9"] == {"arch_list": ["sm_70", "sm_120"], "ptx": ["compute_120"]}


def test_tensorflow_source_md() -> None:
    md = (
        "<tr><td>tensorflow-2.12.0</td><td>3.8-3.11</td><td>GCC 9.3.1</td><td>Bazel 5.3.0</td>"
        "<td>8.6</td><td>11.8</td></tr>\n### macOS\n"
    )
    assert tensorflow.parse(md)[0] | {"source": ""} == {
        "series": "2.12",
        "python_min": "3.8",
        "python_max": "3.11",
        "cuda": "11.8",
        "cudnn": "8.6",
        "source": "",
    }
