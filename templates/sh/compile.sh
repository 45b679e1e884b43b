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
# sys.prefix the environment's (a venv's prefix is set by site).
set -eu
"${1:?compile.sh PYTHON}" -B - <<'PY'
import compileall
import importlib.util
import multiprocessing
import os
import sysconfig
import warnings
from concurrent.futures import ProcessPoolExecutor


def uncompiled():
    for root in sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}):
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


files = list(uncompiled())
with ProcessPoolExecutor(mp_context=multiprocessing.get_context("fork")) as pool:
    done = sum(bool(ok) for ok in pool.map(compile_one, files, chunksize=32))
print(f"envgen: bytecode compiled {done} of {len(files)} files")
PY
