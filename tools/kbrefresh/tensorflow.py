"""Extract the Linux GPU "tested build configurations" rows from a saved tensorflow/docs ``source.md``.

Usage: ``python -m tools.kbrefresh.tensorflow source.md`` prints ``{series, python_min, python_max, cuda,
cudnn}`` rows; the package columns of tensorflow.yaml (gpu_package, stub) come from the pip page by hand.
"""

from __future__ import annotations

import re
import sys

import yaml

_ROW = re.compile(
    r"<tr><td>tensorflow(?:_gpu)?-(?P<version>[\d.]+)</td><td>(?P<python>[^<]+)</td><td>[^<]*</td>"
    r"<td>[^<]*</td><td>(?P<cudnn>[\d.]+)</td><td>(?P<cuda>[\d.]+)</td></tr>"
)


def parse(markdown: str) -> list[dict[str, str]]:
    linux = markdown.split("### macOS", 1)[0]
    rows = []
    seen: set[str] = set()
    for m in _ROW.finditer(linux):
        series = ".".join(m.group("version").split(".")[:2])
        if series in seen:
            continue
        seen.add(series)
        py = m.group("python").split(",")[-1].strip()
        low, _, high = py.partition("-")
        rows.append(
            {
                "series": series,
                "python_min": low,
                "python_max": high or low,
                "cuda": m.group("cuda"),
                "cudnn": m.group("cudnn"),
                "source": f"https://www.tensorflow.org/install/source#gpu "
                f"(tensorflow-{m.group('version')} row)",
            }
        )
    return rows


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: python -m tools.kbrefresh.tensorflow source.md\n")
        return 2
    with open(argv[0], encoding="utf-8") as handle:
        sys.stdout.write(yaml.safe_dump({"tensorflow": parse(handle.read())}, sort_keys=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
