#!/bin/sh
# compile.sh PYTHON: byte-compiles, with PYTHON (the environment's), every .py file of its site-packages that has no
# bytecode yet: what the install layer's uv put there, after the leave-out (slim.sh) took out what nothing loads, so
# no test suite is compiled only to be removed (cpu-smoke: 1704 of 11071 files). What uv's --compile-bytecode does
# (uv's pip_compileall.py: compileall.compile_file, force, quiet=2, warnings off, the invalidation mode Python
# derives from SOURCE_DATE_EPOCH: hash-based), one worker a CPU; a file that does not compile (vendored Python 2
# code) stays source only, as with pip and uv. Files the layers below compiled keep their bytecode. Bytecode an
# import wrote (timestamp-based: the source's mtime inside, the moment uv unpacked it, so it differs every clean
# build) is compiled again hash-based where SOURCE_DATE_EPOCH asks for it: any Python started on the environment
# before this step runs its .pth files (setuptools' distutils-precedence.pth imports _distutils_hack), and that
# import writes such a file. This step's own Python writes no bytecode by importing (-B); it keeps site, which makes
# sys.prefix the environment's (a venv's prefix is set by site). Each distribution is looked at once: the first
# step walks the whole of site-packages and lists the distributions there (name==version, PREFIX/share/envgen/
# compiled.txt); a later step (the extras layer: +1 package) looks only at the files of distributions not listed yet
# (their RECORD), not again at the environment's 9.4k (cpu-smoke: 0.8 s of a 2.2 s rebuild).
set -eu
"${1:?compile.sh PYTHON}" -B - <<'PY'
import compileall
import importlib.util
import multiprocessing
import os
import re
import sys
import sysconfig
import warnings
from concurrent.futures import ProcessPoolExecutor
try:
    from importlib.metadata import distributions
except ImportError:  # Python 3.7 (no importlib.metadata): every step walks site-packages, as before the list
    distributions = None

SITES = sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")})
LISTED = os.path.join(sys.prefix, "share", "envgen", "compiled.txt")


def uncompiled():
    for root in SITES:
        for top, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                path = os.path.join(top, name)
                if name.endswith(".py") and stale(importlib.util.cache_from_source(path)):
                    yield path


def stale(pyc):
    """No bytecode yet, or bytecode an import wrote (timestamp-based) where the build asks for hash-based."""
    if not os.path.exists(pyc):
        return True
    if not os.environ.get("SOURCE_DATE_EPOCH"):
        return False
    with open(pyc, "rb") as f:
        head = f.read(8)
    return head[:4] == importlib.util.MAGIC_NUMBER and head[4:8] == bytes(4)


def compile_one(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compileall.compile_file(path, force=True, quiet=2)


def label(dist):
    return re.sub(r"[-_.]+", "-", dist.metadata["Name"] or "").lower() + "==" + dist.version


def installed_by(dists):
    """The .py files of ``dists`` (their RECORD) without bytecode, sorted."""
    paths = {os.path.realpath(dist.locate_file(f)) for dist in dists for f in dist.files or [] if f.suffix == ".py"}
    inside = tuple(os.path.realpath(site) + os.sep for site in SITES)
    return sorted(p for p in paths if p.startswith(inside) and os.path.isfile(p)
                  and stale(importlib.util.cache_from_source(p)))


present = {label(dist): dist for dist in distributions(path=SITES)} if distributions else {}
try:
    if not distributions:
        raise FileNotFoundError(LISTED)
    with open(LISTED, encoding="utf-8") as f:
        listed = set(f.read().split())
    files = installed_by(dist for name, dist in sorted(present.items()) if name not in listed)
except FileNotFoundError:
    listed, files = set(), list(uncompiled())
with ProcessPoolExecutor(mp_context=multiprocessing.get_context("fork")) as pool:
    done = sum(bool(ok) for ok in pool.map(compile_one, files, chunksize=32))
if distributions and (set(present) - listed or not os.path.exists(LISTED)):
    os.makedirs(os.path.dirname(LISTED), exist_ok=True)
    with open(LISTED, "w", encoding="utf-8") as out:
        out.writelines(f"{name}\n" for name in sorted(listed | set(present)))
print(f"envgen: bytecode compiled {done} of {len(files)} files")
PY
