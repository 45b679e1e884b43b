"""What runtime images leave out (issue #44 item 2): leave_out.yaml's rows are each sourced and explained, the plan
applies the rows that leave something out (bytecode is kept: a row of its own, leave_out: false), `slim: false`
keeps everything (no slim.sh in either Dockerfile), and the leave-out runs in the step that installs. The real
engine's side (the probe's verdicts with and without, the megabytes): tests/pipeline/test_pipeline_slim.py."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

from envgen.kb import KnowledgeBase
from envgen.plan.image import plan_image
from envgen.profile import load_profile
from envgen.render.files import render_files
from envgen.render.plan import render_context

ROOT = Path(__file__).resolve().parents[2]


def test_every_row_says_why_and_where_it_is_documented(kb: KnowledgeBase) -> None:
    rows = {row.name: row for row in kb.leave_out}
    assert {"tests", "static-libraries", "headers", "docs", "bytecode"} <= set(rows)
    for row in rows.values():
        assert row.source.startswith("https://") and len(row.why) > 40, row.name
        assert all(kept.source.startswith("https://") and kept.why for kept in row.keep), row.name
    assert not rows["bytecode"].leave_out and "943 ms" in rows["bytecode"].why
    kept = [k.path for k in rows["headers"].keep]
    assert any("/torch/" in p for p in kept) and any("/triton/" in p for p in kept), kept
    assert any("astropy" in k.path for k in rows["tests"].keep)


def test_the_plan_applies_what_leaves_out_and_slim_false_keeps_everything(kb: KnowledgeBase) -> None:
    profile = load_profile("cpu-smoke", env={})
    plan = plan_image(profile, kb).slim
    assert plan is not None and [r.name for r in plan.rules] == [r.name for r in kb.leave_out if r.leave_out]
    assert "bytecode" not in {r.name for r in plan.rules}
    assert plan.command("/opt/env").startswith("sh /opt/envgen/sh/slim.sh /opt/env -r tests -d ")
    assert plan_image(dataclasses.replace(profile, slim=False), kb).slim is None
    torch_headers = "'lib/python*/site-packages/torch/*'"
    assert f"-c {torch_headers}" in plan.words()  # no apt beyond python3: slim.sh looks for a compiler
    with_apt = dataclasses.replace(profile, packages=dataclasses.replace(profile.packages, apt=["g++"]))
    planned = plan_image(with_apt, kb).slim
    assert planned is not None and f"-k {torch_headers}" in planned.words()


def test_slim_false_renders_no_leave_out_and_true_puts_it_in_the_installing_step(kb: KnowledgeBase) -> None:
    for name in ("cpu-smoke", "modern-a100"):  # uv (one RUN) and micromamba (a RUN at the end of the stage)
        profile = load_profile(name, env={})
        slim = render_files(render_context(plan_image(profile, kb))).files
        full = render_files(render_context(plan_image(dataclasses.replace(profile, slim=False), kb))).files
        for dockerfile in ("Dockerfile", "Dockerfile.classic"):
            assert "slim.sh" in slim[dockerfile].decode() and "slim.sh" not in full[dockerfile].decode()
    uv = render_files(render_context(plan_image(load_profile("cpu-smoke", env={}), kb))).files["Dockerfile"].decode()
    install = next(part for part in uv.split("\nRUN ") if "-r /tmp/envgen/requirements.lock" in part)
    assert "slim.sh /opt/env" in install  # the same RUN: a later one would leave the files in the layer below
    assert install.index("slim.sh /opt/env") < install.index("compile.sh /opt/env/bin/python")  # then compiled


def test_slim_sh_removes_the_patterns_and_keeps_what_a_package_loads(kb: KnowledgeBase, tmp_path: Path) -> None:
    site = tmp_path / "lib/python3.11/site-packages"
    files = ["numpy/_core/tests/test_a.py", "numpy/testing/utils.py", "astropy/tests/runner.py", "torch/include/a.h",
             "numpy/_core/include/numpy/ndarraytypes.h", "numpy/_core/lib/libnpymath.a", "numpy/__pycache__/x.pyc"]
    for rel in files:
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text("x", encoding="utf-8")
    (tmp_path / "share/doc/x").mkdir(parents=True)
    plan = plan_image(load_profile("cpu-smoke", env={}), kb).slim
    assert plan is not None
    command = plan.command(str(tmp_path)).replace("/opt/envgen/sh/slim.sh", str(ROOT / "templates/sh/slim.sh"))
    done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=False)
    assert done.returncode == 0 and "left out of" in done.stdout, done.stderr
    left = sorted(p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file())
    assert left == ["astropy/tests/runner.py", "numpy/__pycache__/x.pyc", "numpy/testing/utils.py",
                    "torch/include/a.h"], left
    assert not (tmp_path / "share/doc").exists()


def _slim_sh(kb: KnowledgeBase, env_dir: Path, tools: Path, apt_compiler: bool = False) -> str:
    """Run cpu-smoke's leave-out on ``env_dir`` with only ``tools`` on PATH (no compiler unless one is there)."""
    for tool in ("sh", "find", "rm", "du", "xargs", "awk", "mktemp"):
        if not (tools / tool).exists():
            (tools / tool).symlink_to(subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True,
                                                     text=True, check=True).stdout.strip())
    plan = plan_image(load_profile("cpu-smoke", env={}), kb).slim
    assert plan is not None
    plan = dataclasses.replace(plan, apt_compiler=apt_compiler)
    command = plan.command(str(env_dir)).replace("/opt/envgen/sh/slim.sh", str(ROOT / "templates/sh/slim.sh"))
    done = subprocess.run([str(tools / "sh"), "-c", command], capture_output=True, text=True, check=False,
                          env={"PATH": str(tools)})
    assert done.returncode == 0 and "left out of" in done.stdout, done.stderr
    return done.stdout


def test_what_only_a_compiler_reads_goes_where_the_image_has_none_and_the_new_rows_match(
        kb: KnowledgeBase, tmp_path: Path) -> None:
    """torch's headers (compiler: true) stay only where slim.sh finds a compiler, or where the plan's apt set may
    bring one (-k); TensorFlow's include/, torch's C++ test programs and the CUDA libraries for applications go,
    torch_shm_manager, protoc and the CUDA libraries frameworks load stay."""
    gone = ["tensorflow/include/external/eigen_archive/Eigen/Core", "torch/test/atest", "torch/bin/test_api",
            "torch/bin/TCPStoreTest", "nvidia/cusolver/lib/libcusolverMg.so.11", "nvidia/cufft/lib/libcufftw.so.10",
            "nvidia/cublas/lib/libnvblas.so.11"]
    stay = ["torch/bin/torch_shm_manager", "torch/bin/protoc", "nvidia/cusolver/lib/libcusolver.so.11",
            "nvidia/cufft/lib/libcufft.so.10", "nvidia/cublas/lib/libcublasLt.so.11", "nvidia/cuda_nvcc/include/a.h"]
    header = "torch/include/ATen/ATen.h"
    for case, compiler, apt_compiler in (("none", None, False), ("apt", None, True), ("path", "g++", False),
                                         ("conda", "x86_64-conda-linux-gnu-c++", False)):
        env_dir, tools = tmp_path / case / "env", tmp_path / case / "tools"
        site = env_dir / "lib/python3.11/site-packages"
        tools.mkdir(parents=True)
        for rel in [*gone, *stay, header]:
            (site / rel).parent.mkdir(parents=True, exist_ok=True)
            (site / rel).write_text("x", encoding="utf-8")
        if compiler:
            where = tools if case == "path" else env_dir / "bin"
            where.mkdir(exist_ok=True)
            (where / compiler).write_text("#!/bin/sh\n", encoding="utf-8")
            (where / compiler).chmod(0o755)
        out = _slim_sh(kb, env_dir, tools, apt_compiler)
        left = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
        assert left == {*stay, *([header] if case != "none" else [])}, (case, sorted(left), out)
        assert ("a compiler in the image: no" in out) == (case == "none"), (case, out)
