"""Extract (GPU name, compute capability) pairs from a saved copy of https://developer.nvidia.com/cuda-gpus.

The page lists GPUs in tables whose cells hold a name and, next to it, a compute capability such as 8.6.
Usage: ``python -m tools.kbrefresh.gpus cuda-gpus.html`` prints YAML rows to compare with gpus.yaml.
"""

from __future__ import annotations

import re
import sys
from html.parser import HTMLParser

import yaml

_CC = re.compile(r"^\d{1,2}\.\d$")


class _Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "tr":
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def parse(html: str) -> list[dict[str, str]]:
    """Rows of ``{name, compute_capability}`` from the page's tables, in page order, de-duplicated."""
    cells = _Cells()
    cells.feed(html)
    out: dict[str, str] = {}
    for row in cells.rows:
        for i in range(len(row) - 1):
            if _CC.match(row[i + 1]) and row[i] and not _CC.match(row[i]):
                for name in row[i].split(","):
                    name = name.strip()
                    if name:
                        out.setdefault(name, row[i + 1])
    return [
        {"name": n, "compute_capability": cc, "source": "https://developer.nvidia.com/cuda-gpus"}
        for n, cc in out.items()
    ]


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write("usage: python -m tools.kbrefresh.gpus SAVED_PAGE.html\n")
        return 2
    with open(argv[0], encoding="utf-8") as handle:
        sys.stdout.write(yaml.safe_dump({"gpus": parse(handle.read())}, sort_keys=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
