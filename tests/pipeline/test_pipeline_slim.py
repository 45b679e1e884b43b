"""Issue 44 item 2 on the real engine: the same small profile built with the leave-out step (``slim: true``, the
default) and without it (``slim: false``): the probe's import and library checks give the same verdicts, the slim
image holds none of what leave_out.yaml removes (numpy's tests, headers and static library are there in the other),
and it is smaller by what was removed (the figures are printed: run with -s). The bytecode decision of
leave_out.yaml (kept) is measured here: importing numpy as the image's user without its __pycache__ directories
(the interpreter cannot write them where the user does not own /opt/env) against with them.

The rows for files of the big wheels (TensorFlow's include/, torch's C++ test programs, the CUDA libraries for
applications, torch's headers in an image without a compiler) are checked on a wheel made here whose files lie where
those wheels put theirs (a FIXTURE: the real wheels are gigabytes; the real images are measured by
bench/bench_build.py and docs/benchmarks.md), built both ways with the same probe verdicts.

The symbol tables (strip_symbols.yaml): the profile locked (uv's installing RUN) and unlocked (the staged build and
extras stages) with the defaults, against `slim: {strip_symbols: false}` and `slim: false`: the same verdicts, every
file strip.sh rewrote loads in the image and still exports its init function, the other image holds the wheel's
bytes, the images differ by at least what was removed, and `envgen images --size` reads the stripped image. numpy
2.1.3's auditwheel libraries (patchelf's layout) are kept as they were."""

from __future__ import annotations

import base64
import hashlib
import statistics
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from envgen.docker.run import run_container
from envgen.pipeline.build import BuildOutcome, build
from tests.pipeline.conftest import alias, minimal_profile

PIPS = '"numpy==2.1.3"'
SITE = "/opt/env/lib/python3.11/site-packages"
# what leave_out.yaml removes from numpy's wheel: its tests, its headers, its static math library
LEFT_OUT = (f"find {SITE}/numpy -type d -name tests; find {SITE} -name '*.h' -o -name '*.a' -o -name '*.hpp'; "
            "find /opt/env -path '*/share/doc' -type d")


@pytest.fixture(scope="module")
def pair(write_profile: Callable[[str, str], str], cleanup_tags: list[str]) -> tuple[BuildOutcome, BuildOutcome]:
    slim = build(write_profile("pipe-slim", minimal_profile(PIPS)))
    cleanup_tags += [slim.tag, alias("pipe-slim")]
    full = build(write_profile("pipe-slim-all", minimal_profile(PIPS) + "slim: false\n"))
    cleanup_tags += [full.tag, alias("pipe-slim-all")]
    return slim, full


def _verdicts(outcome: BuildOutcome) -> dict[str, str]:
    assert outcome.smoke is not None and outcome.smoke.passed, outcome.summary()
    return {check.name: check.status for check in outcome.smoke.checks}


def _shell(docker_client: object, image: str, script: str, env: dict[str, str] | None = None,
           user: str | None = None) -> str:
    result = run_container(docker_client, image, ["sh", "-c", script], env=env, user=user)  # type: ignore[arg-type]
    assert result.exit_code == 0, result.output
    return str(result.output)


def test_the_probe_gives_the_same_verdicts_with_and_without_the_leave_out(
        pair: tuple[BuildOutcome, BuildOutcome]) -> None:
    slim, full = pair
    assert slim.image_id != full.image_id
    verdicts = _verdicts(slim)
    assert verdicts == _verdicts(full)
    assert any("import" in name for name in verdicts) and any("librar" in name for name in verdicts), verdicts


def test_the_slim_image_holds_nothing_the_leave_out_removes_and_is_smaller(
        pair: tuple[BuildOutcome, BuildOutcome], docker_client: object) -> None:
    slim, full = pair
    assert _shell(docker_client, slim.image_id, LEFT_OUT).strip() == ""
    there = _shell(docker_client, full.image_id, LEFT_OUT).split()
    assert f"{SITE}/numpy/_core/tests" in there and any(p.endswith(".h") for p in there), there
    assert any(p.endswith(".a") for p in there), there
    sizes = {}
    for name, outcome in (("slim", slim), ("full", full)):
        image = docker_client.images.get(outcome.image_id)  # type: ignore[attr-defined]
        layers = [(row["Size"], (row.get("CreatedBy") or "")[:70]) for row in image.history() if row["Size"]]
        sizes[name] = image.attrs["Size"]
        print(f"\n{name}: {image.attrs['Size'] / 1e6:.1f} MB; layers (newest first):")
        for size, step in layers:
            print(f"  {size / 1e6:8.1f} MB  {step}")
    saved = (sizes["full"] - sizes["slim"]) / 1e6
    print(f"left out: {saved:.1f} MB")
    assert saved > 5, sizes  # numpy 2.1.3's tests alone are ~10 MB unpacked


def test_bytecode_caches_are_kept_because_importing_without_them_is_slower(
        pair: tuple[BuildOutcome, BuildOutcome], docker_client: object) -> None:
    slim, _ = pair
    probe = ("for i in 1 2 3 4 5; do s=$(date +%s%N); python -c 'import numpy'; e=$(date +%s%N); "
             "echo $(( (e - s) / 1000000 )); done")
    with_caches = [int(v) for v in _shell(docker_client, slim.image_id, probe).split()]
    # root removes the caches; PYTHONDONTWRITEBYTECODE stands for the user who cannot write them again
    without = [int(v) for v in _shell(docker_client, slim.image_id, f"find /opt/env -name __pycache__ -prune -exec "
                                      f"rm -rf {{}} +; {probe}", env={"PYTHONDONTWRITEBYTECODE": "1"},
                                      user="0:0").split()]
    print(f"\nimport numpy, ms (5 runs): with __pycache__ {with_caches}, without {without}")
    assert statistics.median(without) > 1.2 * statistics.median(with_caches), (with_caches, without)


@pytest.fixture(scope="module")
def locked(write_profile: Callable[[str, str], str], cleanup_tags: list[str]) -> tuple[BuildOutcome, BuildOutcome]:
    """The same profile locked (uv installs in the runtime stage; the leave-out and strip run in the installing RUN),
    built with the defaults and with ``slim: {strip_symbols: false}``."""
    from envgen.lock.lock import lock

    outcomes = []
    for name, extra in (("pipe-slim-lock", ""), ("pipe-slim-lock-symbols", "slim:\n  strip_symbols: false\n")):
        write_profile(name, minimal_profile(PIPS) + extra)
        lock(name)
        outcomes.append(build(name))
        cleanup_tags += [outcomes[-1].tag, alias(name)]
    return outcomes[0], outcomes[1]


def test_a_locked_build_leaves_out_in_the_installing_uv_step_with_the_same_verdicts(
        pair: tuple[BuildOutcome, BuildOutcome], locked: tuple[BuildOutcome, BuildOutcome],
        docker_client: object) -> None:
    outcome = locked[0]
    assert _verdicts(outcome) == _verdicts(pair[0])
    assert _shell(docker_client, outcome.image_id, LEFT_OUT).strip() == ""
    assert outcome.log_path is not None
    log = outcome.log_path.read_text(encoding="utf-8")
    if outcome.builder != "classic":  # uv installs in the runtime stage: the leave-out runs in the same RUN
        assert "uv.sh pip install" in log and "left out of /opt/env what nothing loads at runtime" in log


# Every file strip.sh rewrote (its manifest, in the image): its bytes are the "after" ones, it loads (dlopen, lazy
# binding, as the image's user; a library that needs another of its directory is tried again once that one is
# loaded; a program, which dlopen refuses, through ldd), and an extension module still exports its init function
# (.dynsym kept); printed: files, bytes before, bytes after, distributions. KEPT: the same files in an image that kept
# its symbols hold the "before" bytes.
MANIFEST = "/opt/env/share/envgen/stripped*.txt"  # stripped.txt; stripped-extras.txt: the staged extras stage's
LOADS = f"""
import ctypes, glob, hashlib, os, subprocess
rows = [line.rstrip("\\n").split("\\t") for name in glob.glob("{MANIFEST}") for line in open(name)
        if not line.startswith("#")]
todo = []
for rel, dist, licence, before, size_before, after, size_after, removed in rows:
    path = "/opt/env/" + rel
    assert hashlib.sha256(open(path, "rb").read()).hexdigest() == after, path
    todo.append(path)
while todo:
    failed = []
    for path in todo:
        try:
            lib = ctypes.CDLL(path, os.RTLD_LAZY)
        except OSError as error:
            if "cannot dynamically load" in str(error):  # a program (PIE or not): the loader maps it for ldd
                done = subprocess.run(["ldd", path], capture_output=True, text=True)
                assert done.returncode == 0 and "not found" not in done.stdout, (path, done.stdout)
            else:
                failed.append((path, str(error)))
            continue
        if ".cpython-" in path:
            assert hasattr(lib, "PyInit_" + os.path.basename(path).split(".")[0]), path
    assert len(failed) < len(todo), failed
    todo = [path for path, _ in failed]
print(len(rows), sum(int(r[4]) for r in rows), sum(int(r[6]) for r in rows), len({{r[1] for r in rows}}))
"""
KEPT = """
import hashlib
for line in open("/tmp/manifest"):
    rel, _, _, before = line.split("\\t")[:4]
    assert hashlib.sha256(open("/opt/env/" + rel, "rb").read()).hexdigest() == before, rel
print("same bytes as the wheel's")
"""


def test_symbol_tables_are_stripped_every_stripped_object_still_loads_and_the_verdicts_are_the_same(
        pair: tuple[BuildOutcome, BuildOutcome], locked: tuple[BuildOutcome, BuildOutcome],
        docker_client: object) -> None:
    from envgen.pipeline.sizes import size_report

    for stripped, kept in (locked, pair):  # uv's installing RUN, then the staged build stage (pair: slim: false)
        assert _verdicts(stripped) == _verdicts(kept)
        files, before, after, dists = map(int, _shell(docker_client, stripped.image_id,
                                                      f"python - <<'EOF'\n{LOADS}\nEOF").split())
        assert files >= 10 and dists >= 1 and before - after > 300_000, (files, before, after)
        manifest = _shell(docker_client, stripped.image_id, f"cat {MANIFEST} | grep -v '^#'")
        assert "numpy==2.1.3" in manifest and "numpy.libs" not in manifest, manifest[:500]
        # auditwheel's patchelf put numpy's OpenBLAS symbols in a mapped segment: strip would change what the loader
        # maps (binutils 2.40 leaves it "not page-aligned", seen on scipy's): kept as the wheel has it
        assert stripped.log_path is not None
        assert "kept as it was lib/python3.11/site-packages/numpy.libs/libscipy_openblas64_" in (
            stripped.log_path.read_text(encoding="utf-8"))
        check = f"cat > /tmp/manifest <<'EOF'\n{manifest}EOF\npython - <<'EOF'\n{KEPT}\nEOF\n! ls {MANIFEST}"
        assert "same bytes as the wheel's" in _shell(docker_client, kept.image_id, check)
        sizes = {name: docker_client.images.get(o.image_id).attrs["Size"]  # type: ignore[attr-defined]
                 for name, o in (("stripped", stripped), ("kept", kept))}
        print(f"\n{stripped.tag}: {files} ELF files of {dists} distribution(s) stripped: {before / 1e6:.1f} -> "
              f"{after / 1e6:.1f} MB; image {sizes['stripped'] / 1e6:.1f} MB against {sizes['kept'] / 1e6:.1f} MB")
        assert sizes["kept"] - sizes["stripped"] >= 0.9 * (before - after), sizes
    report = size_report(locked[0].image_id)  # `envgen images --size` still reads the stripped image
    assert any(d["name"].startswith("numpy-2.1.3") for d in report["distributions"]), report["distributions"]
    assert locked[0].log_path is not None
    assert "stripped the symbol tables of" in locked[0].log_path.read_text(encoding="utf-8")


# The fixture wheel's files: where torch, TensorFlow and NVIDIA's wheels put theirs (left out / kept by leave_out.yaml)
FIXTURE_GONE = ("tensorflow/include/Eigen/Core", "torch/test/atest", "torch/bin/test_api", "torch/bin/TCPStoreTest",
                "nvidia/cusolver/lib/libcusolverMg.so.11", "nvidia/cufft/lib/libcufftw.so.10",
                "torch/include/ATen/ATen.h")  # the last: no compiler in the image (slim.sh says so)
FIXTURE_KEPT = ("torch/bin/torch_shm_manager", "torch/bin/protoc", "nvidia/cusolver/lib/libcusolver.so.11",
                "nvidia/cuda_nvcc/include/cuda.h", "slimfixture/__init__.py")


def _fixture_wheel(house: Path) -> Path:
    """envgen_slim_fixture 1.0: a pure wheel holding FIXTURE_GONE and FIXTURE_KEPT (a few bytes each)."""
    info = "envgen_slim_fixture-1.0.dist-info"
    files = {rel: b"" for rel in (*FIXTURE_GONE, *FIXTURE_KEPT)}
    for framework in ("torch", "tensorflow"):  # not importable (an extra's module is missing): the probe must not
        files[f"{framework}/__init__.py"] = b"import envgen_slim_fixture_extra\n"  # take the fixture for one
    files[f"{info}/METADATA"] = (b"Metadata-Version: 2.1\nName: envgen-slim-fixture\nVersion: 1.0\n"
                                  b"Provides-Extra: extra\n"
                                  b"Requires-Dist: envgen-slim-fixture-extra; extra == 'extra'\n")
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: envgen-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files[f"{info}/top_level.txt"] = b"slimfixture\n"
    record = [f"{rel},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},"
              f"{len(data)}" for rel, data in files.items()]
    files[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    house.mkdir(parents=True, exist_ok=True)
    wheel = house / "envgen_slim_fixture-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as out:
        for rel, data in files.items():
            out.writestr(rel, data)
    return wheel


def test_the_big_wheels_rows_leave_out_their_paths_with_the_same_verdicts(
        write_profile: Callable[[str, str], str], cleanup_tags: list[str], docker_client: object,
        tmp_path: Path) -> None:
    house = _fixture_wheel(tmp_path / "wheels").parent
    pips = '"envgen-slim-fixture==1.0"'
    outcomes = {}
    for name, extra in (("pipe-slim-big", ""), ("pipe-slim-big-all", "slim: false\n")):
        outcomes[name] = build(write_profile(name, minimal_profile(pips) + extra), wheelhouse=house, offline=True)
        cleanup_tags += [outcomes[name].tag, alias(name)]
    slim, full = outcomes["pipe-slim-big"], outcomes["pipe-slim-big-all"]
    assert _verdicts(slim) == _verdicts(full)
    listing = f"cd {SITE} && for f in {' '.join((*FIXTURE_GONE, *FIXTURE_KEPT))}; do [ -e $f ] && echo $f; done; :"
    assert sorted(_shell(docker_client, full.image_id, listing).split()) == sorted((*FIXTURE_GONE, *FIXTURE_KEPT))
    assert sorted(_shell(docker_client, slim.image_id, listing).split()) == sorted(FIXTURE_KEPT)
    assert slim.log_path is not None and "a compiler in the image: no" in slim.log_path.read_text(encoding="utf-8")
