"""strip.sh's prediction against GNU strip itself (issue #44): for every ELF file with a symbol table in the given
wheels (default: every wheel of the bench's wheelhouse but NVIDIA's, which are never stripped), does strip change the
program headers (what the loader maps; strip.sh then keeps the file as it was), and does strip.sh's `moves()`, read
from the headers before stripping, say the same for the files over 1 MiB, where it is used instead of writing a
stripped copy only to throw it away (torch's libtorch_cpu.so: 434 MB written, then kept)?

    python bench/strip_predict.py [WHEEL...]

Needs GNU strip on the host (binutils; strip.sh's flags from envgen/kb/data/strip_symbols.yaml). Prints the counts
and each file where prediction and strip disagree; exit 1 when one over 1 MiB does.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
FLAGS = ("--strip-unneeded", "--remove-section=.comment", "--remove-section=.note")  # strip_symbols.yaml's row
BIG = 1 << 20  # strip.sh's threshold


def strip_sh_functions() -> SimpleNamespace:
    """strip.sh's own `elf` (with `tables`), `moves` and `program_headers`, taken from its program, not copied."""
    text = (ROOT / "templates/sh/strip.sh").read_text(encoding="utf-8")
    program = text.split("<<'PY'", 1)[1].split("\nPY\n", 1)[0]
    names = ("def elf(", "def tables(", "def moves(", "def program_headers(")
    blocks = [block for block in program.split("\n\n\n") if block.lstrip().startswith(names)]
    space: dict[str, object] = {}
    exec(compile("import os, struct\n" + "\n\n\n".join(blocks), "strip.sh", "exec"), space)  # noqa: S102
    return SimpleNamespace(**{name: space[name] for name in ("elf", "moves", "program_headers")})


def verdicts(path: str, fn: SimpleNamespace, scratch: str) -> tuple[bool, bool] | None:
    """(strip changes the program headers, strip.sh predicts it) for one ELF file with a symbol table; else None."""
    layout = fn.elf(path)
    if not layout or not any(s[0] == ".symtab" or s[0].startswith(".debug_") for s in layout[0]):
        return None
    out = os.path.join(scratch, "stripped")
    subprocess.run(["strip", *FLAGS, "-p", "-o", out, path], check=True, capture_output=True)
    changed = fn.program_headers(out) != fn.program_headers(path)
    os.remove(out)
    return changed, bool(fn.moves(layout))


def main(argv: list[str]) -> int:
    wheels = argv or sorted(str(p) for p in (Path.home() / ".cache/envgen-bench/wheels").glob("*.whl")
                            if not p.name.startswith("nvidia_"))
    fn, counts, wrong = strip_sh_functions(), {"files": 0, "big": 0, "big kept": 0}, []
    with tempfile.TemporaryDirectory() as scratch:
        for wheel in wheels:
            with zipfile.ZipFile(wheel) as archive:
                for info in archive.infolist():
                    with archive.open(info) as f:
                        if f.read(4) != b"\x7fELF":
                            continue
                    path = archive.extract(info, scratch)
                    found = verdicts(path, fn, scratch)
                    if found is not None:
                        big = os.path.getsize(path) > BIG
                        counts["files"] += 1
                        counts["big"] += big
                        counts["big kept"] += big and found[0]
                        if big and found[0] != found[1]:
                            wrong.append(f"{Path(wheel).name}: {info.filename}: strip changes the headers: "
                                         f"{found[0]}, predicted: {found[1]}")
                    os.remove(path)
    print(f"{len(wheels)} wheels, {counts['files']} ELF files with a symbol table, {counts['big']} over 1 MiB; of "
          f"those, strip changes the program headers of {counts['big kept']}; the prediction disagrees on "
          f"{len(wrong)}")
    print("\n".join(wrong))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
