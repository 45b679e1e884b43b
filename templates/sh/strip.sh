#!/bin/sh
# strip.sh DIR TOOL OPTION...: strips the ELF symbol tables the dynamic loader never reads from the shared objects and
# programs that the distributions installed in DIR (the environment, or the extras directory) listed in their RECORD,
# in the step that installed them, so that no layer holds the unstripped bytes (the rules:
# envgen/kb/data/strip_symbols.yaml, read by envgen/plan/slim.py). TOOL: GNU strip and its libraries (strip-tool.sh,
# bound or copied from the strip stage). Options, each with one value: -m NAME (the list of what was rewritten,
# DIR/share/envgen/NAME; default stripped.txt), -f FLAG (strip's flags), -s SECTION (a file is rewritten only where
# it holds one of these; a trailing * is a prefix), -l SPELLINGS (a licence that allows a modified copy: its
# spellings joined by "|"), -n SPELLINGS (the same, and modified files must carry a notice), -x PATTERN (a
# distribution never rewritten, fnmatch on its normalised name). A distribution's licence is read from its own
# METADATA (License-Expression: every identifier must be allowed; else License, one line; else its License
# classifiers); a distribution refused, or of a licence not allowed or unknown, is left untouched. What was
# rewritten is appended to the list (the file, its distribution and licence, sha256 and size before and after, the
# sections removed), sorted. A file whose program headers strip would change (its symbol table inside a mapped
# segment, as patchelf lays out the libraries auditwheel repairs) is kept as it was. Files are stripped in parallel,
# one per CPU. Prints the megabytes removed per distribution. A DIR that does not exist is left alone. Each
# distribution is examined once per DIR: the ones examined (name==version) are listed beside the list of what was
# rewritten (examined-NAME), and a later step (the extras layer, +1 package) looks only at the
# distributions it installed, not again at every file of the environment (3 s for cpu-smoke's, and each file the
# program-header check kept would be stripped again only to be kept again).
set -eu
dir=${1:?strip.sh DIR TOOL OPTION...}
: "${2:?strip.sh DIR TOOL OPTION...}"  # read by the program below
[ -d "$dir" ] || exit 0
here=$(dirname "$0")
# shellcheck source=layout.sh
. "$here/layout.sh"
# a Python that reads installed distributions (importlib.metadata: 3.8 or later); the environment's own first (the
# extras directory has none of its own). legacy-maxwell's is 3.7 and its CUDA 10.1 base has no other: nothing is
# stripped there, said in one line, rather than the build failing on an import.
found=""
for python in "$dir/bin/python" "$ENVGEN_ENV/bin/python" python3; do
    if command -v "$python" >/dev/null 2>&1 && "$python" -I -S -c 'import importlib.metadata' 2>/dev/null; then
        found=$python
        break
    fi
done
if [ -z "$found" ]; then
    echo "envgen: nothing stripped in $dir: no Python 3.8 or later here to read its distributions' metadata"
    exit 0
fi
exec "$found" -I -S -B - "$@" <<'PY'  # no site, no bytecode written: compile.sh comes after (hash-based)
import fnmatch, glob, hashlib, os, re, struct, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import distributions

root, tool, args = os.path.realpath(sys.argv[1]), sys.argv[2], sys.argv[3:]
opts = {"-m": [], "-f": [], "-s": [], "-l": [], "-n": [], "-x": []}
for i in range(0, len(args), 2):
    opts[args[i]].append(args[i + 1])
allowed = {s: (k == "-n") for k in ("-l", "-n") for row in opts[k] for s in row.split("|")}
MANIFEST = os.path.join(root, "share", "envgen", (opts["-m"] or ["stripped.txt"])[-1])
HEADER = ("# envgen stripped these files' symbol tables (the loader never reads them) when the image was built: "
          "strip " + " ".join(opts["-f"]) + " (envgen/kb/data/strip_symbols.yaml)\n"
          "# file\tdistribution\tlicence\tsha256 before\tbytes before\tsha256 after\tbytes after\tsections removed\n")


def elf(path):
    """(sections, segments) of an ELF file, None when it is no ELF file (or one whose tables its own sizes do not
    hold: left alone). A section: (name, type, flags, address, offset, size); a segment: (type, offset, address,
    file size, memory size)."""
    try:
        return tables(path)
    except (struct.error, ValueError, IndexError):
        return None


def tables(path):
    with open(path, "rb") as f:
        ident = f.read(64)
        if len(ident) < 52 or ident[:4] != b"\x7fELF" or ident[4] not in (1, 2) or ident[5] not in (1, 2):
            return None
        end = "<" if ident[5] == 1 else ">"
        if ident[4] == 2:
            phoff, shoff = struct.unpack_from(end + "QQ", ident, 0x20)
            phsize, phnum, shsize, shnum, names = struct.unpack_from(end + "HHHHH", ident, 0x36)
            sfmt, pfmt, seg = end + "IIQQQQIIQQ", end + "IIQQQQQQ", (0, 2, 3, 5, 6)
        else:
            phoff, shoff = struct.unpack_from(end + "II", ident, 0x1C)
            phsize, phnum, shsize, shnum, names = struct.unpack_from(end + "HHHHH", ident, 0x2A)
            sfmt, pfmt, seg = end + "IIIIIIIIII", end + "IIIIIIII", (0, 1, 2, 4, 5)
        f.seek(phoff)
        table = f.read(phsize * phnum)
        segments = [tuple(struct.unpack_from(pfmt, table, i * phsize)[k] for k in seg) for i in range(phnum)]
        if not shoff or not shnum or names >= shnum:
            return [], segments
        f.seek(shoff)
        table = f.read(shsize * shnum)
        headers = [struct.unpack_from(sfmt, table, i * shsize) for i in range(shnum)]
        f.seek(headers[names][4])
        strings = f.read(headers[names][5])
    return [(strings[h[0]:strings.index(b"\0", h[0])].decode("ascii", "replace"), *h[1:6]) for h in headers], segments


def moves(layout):
    """Whether strip would change the program headers, read before running it (a file over 1 MiB: below that,
    stripping to find out costs nothing; the check after strip stays): a section the loader does not map lies before
    the end of a loaded segment (patchelf's layout: auditwheel's libraries, numpy's and scipy's), or the TLS
    segment's memory size is not where its last section ends (GNU strip computes it again: torch's libtorch_cpu.so).
    bench/strip_predict.py, strip 2.40, every ELF file with a symbol table in the bench's wheels (cpu-smoke's and
    a100-pypi's locks but NVIDIA's): 464, 140 of them over 1 MiB; strip changes the headers of 7 of those 140, and
    this finds those 7 and no other."""
    found, segments = layout
    ends = [offset + size for kind, offset, _, size, _ in segments if kind == 1]  # PT_LOAD
    if any(not flags & 2 and kind != 8 and size and offset < max(ends, default=0)  # not SHF_ALLOC, not NOBITS
           for _, kind, flags, _, offset, size in found):
        return True
    tls = [address + size for _, _, flags, address, _, size in found if flags & 0x400]  # SHF_TLS
    return any(kind == 7 and tls and max(tls) - address != memory  # PT_TLS
               for kind, _, address, _, memory in segments)


def program_headers(path):
    """The raw program header table: what the loader maps the file by (e_phoff, e_phentsize, e_phnum)."""
    with open(path, "rb") as f:
        ident = f.read(64)
        end = "<" if ident[5] == 1 else ">"
        offset, = struct.unpack_from(end + ("Q" if ident[4] == 2 else "I"), ident, 0x20 if ident[4] == 2 else 0x1C)
        size, count = struct.unpack_from(end + "HH", ident, 0x36 if ident[4] == 2 else 0x2A)
        f.seek(offset)
        return f.read(size * count)


def wanted(name):
    return any(name.startswith(s[:-1]) if s.endswith("*") else name == s for s in opts["-s"])


def licence(meta):
    """(the licence as declared, allowed?, notice?)"""
    expression = meta.get("License-Expression")
    if expression:
        ids = [t for t in re.split(r"[\s()]+", expression) if t and t not in ("AND", "OR", "WITH")]
        return expression, all(t in allowed for t in ids), any(allowed.get(t) for t in ids)
    text = (meta.get("License") or "").strip()
    if text and "\n" not in text and text in allowed:
        return text, True, allowed[text]
    classifiers = [c for c in meta.get_all("Classifier") or [] if c.startswith("License ::")]
    if classifiers and all(c in allowed for c in classifiers):
        return "; ".join(classifiers), True, any(allowed[c] for c in classifiers)
    return (text.splitlines() or ["; ".join(classifiers) or "none declared"])[0][:80], False, False


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def strip(path, label, declared, layout):
    """Strips one file in place (through a copy beside it): its manifest line and the bytes removed (None, 0: it
    holds nothing to strip). ``layout``: its elf(), read once when the distributions were examined."""
    found = [s[0] for s in layout[0] if wanted(s[0])]
    if not found:
        return None, 0
    size = os.path.getsize(path)
    if size > 1 << 20 and moves(layout):  # what the check below would find, without writing a stripped copy
        return None, -1
    before = sha256(path)
    temp = path + ".envgen-strip"
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(tool, "lib"))
    subprocess.run([os.path.join(tool, "bin", "strip"), *opts["-f"], "-p", "-o", temp, path], check=True, env=env)
    if program_headers(temp) != program_headers(path):  # the symbols lay in a mapped segment (patchelf's layout)
        os.remove(temp)
        return None, -1
    os.chmod(temp, os.stat(path).st_mode & 0o7777)
    os.replace(temp, path)
    after = os.path.getsize(path)
    return "\t".join([os.path.relpath(path, root), label, declared, before, str(size), sha256(path), str(after),
                      ",".join(found)]) + "\n", size - after


EXAMINED = os.path.join(os.path.dirname(MANIFEST), "examined-" + os.path.basename(MANIFEST))
try:
    with open(EXAMINED, encoding="utf-8") as f:
        examined = set(f.read().split())
except FileNotFoundError:
    examined = set()
jobs, untouched, fresh_labels = [], {}, set()
for site in sorted(glob.glob(os.path.join(root, "lib", "python*", "site-packages"))):
    for dist in distributions(path=[site]):
        name = re.sub(r"[-_.]+", "-", dist.metadata["Name"] or "").lower()
        if f"{name}=={dist.version}" in examined:
            continue
        fresh_labels.add(f"{name}=={dist.version}")
        files = [os.path.realpath(dist.locate_file(f)) for f in dist.files or []]
        files = [p for p in files if p.startswith(root + os.sep) and os.path.isfile(p) and not os.path.islink(p)]
        objects = [(p, layout) for p in files if (layout := elf(p))]
        if not objects:
            continue
        declared, ok, notice = licence(dist.metadata)
        label = f"{name}=={dist.version}"
        refused = any(fnmatch.fnmatch(name, pattern) for pattern in opts["-x"])
        if refused or not ok:
            untouched[label] = ("its licence forbids modifying it (strip_refused)" if refused
                                else f"licence not one that allows a modified copy, or unknown: {declared}")
            continue
        jobs += [(p, label, declared, layout) for p, layout in objects]
jobs = list({job[0]: job for job in jobs}.values())  # a file two distributions list: stripped once
jobs.sort(key=lambda job: -os.path.getsize(job[0]))  # the largest first: the pool's last job is a small one
with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
    results = list(pool.map(lambda job: (job[1], *strip(*job)), jobs))
lines = sorted(line for _, line, _ in results if line)
removed, kept = {}, sorted(os.path.relpath(job[0], root) for job, (_, _, saved) in zip(jobs, results) if saved < 0)
for label, _, saved in results:
    removed[label] = removed.get(label, 0) + max(saved, 0)
removed = {label: saved for label, saved in removed.items() if saved}
if lines:
    os.makedirs(os.path.dirname(MANIFEST), exist_ok=True)
    fresh = not os.path.exists(MANIFEST)
    with open(MANIFEST, "a", encoding="utf-8") as out:
        out.writelines(([HEADER] if fresh else []) + lines)
if fresh_labels:
    os.makedirs(os.path.dirname(EXAMINED), exist_ok=True)
    with open(EXAMINED, "w", encoding="utf-8") as out:
        out.writelines(f"{label}\n" for label in sorted(examined | fresh_labels))
total = sum(removed.values())
print(f"envgen: stripped the symbol tables of {len(lines)} ELF file(s) in {root}: {total / 1e6:.1f} MB "
      f"(strip_symbols.yaml; list: {os.path.relpath(MANIFEST, root)})")
for label, saved in sorted(removed.items(), key=lambda kv: -kv[1]):
    print(f"envgen:   {saved / 1e6:8.1f} MB  {label}")
for rel in kept:
    print(f"envgen:   kept as it was {rel}: strip would change its program headers (what the loader maps)")
for label, why in sorted(untouched.items()):
    print(f"envgen:   untouched {label}: {why}")
PY
