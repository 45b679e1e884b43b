#!/bin/sh
# compile.sh PYTHON: byte-compiles, with PYTHON (the environment's), every .py file of its site-packages that has no
# bytecode yet: what the install layer's uv put there, after the leave-out (slim.sh) took out what nothing loads, so
# no test suite is compiled only to be removed (cpu-smoke: 1704 of 11071 files). What uv's --compile-bytecode does
# (uv's pip_compileall.py: compileall.compile_file, force, quiet=2, warnings off, the invalidation mode Python
# derives from SOURCE_DATE_EPOCH: hash-based), one worker a CPU; a file that does not compile (vendored Python 2
# code) stays source only, as with pip and uv. Files the layers below compiled keep their bytecode.
set -eu
"${1:?compile.sh PYTHON}" - <<'PY'
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
                if name.endswith(".py") and not os.path.exists(importlib.util.cache_from_source(path)):
                    yield path


def compile_one(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compileall.compile_file(path, force=True, quiet=2)


files = list(uncompiled())
with ProcessPoolExecutor(mp_context=multiprocessing.get_context("fork")) as pool:
    done = sum(bool(ok) for ok in pool.map(compile_one, files, chunksize=32))
print(f"envgen: bytecode compiled {done} of {len(files)} files")
PY
