"""The symbol tables runtime images strip (issue #44): strip_symbols.yaml's rows are sourced (Debian's flags, the
licences that allow a modified copy, NVIDIA's wheels refused by their own License.txt), the plan strips by default
and `slim: false` or `slim: {strip_symbols: false}` does not, the strip stage is one the image never builds on, and
strip.sh, run here with the host's GNU strip gathered by strip-tool.sh, rewrites only the files of a distribution
whose own METADATA declares an allowed licence, keeps what the loader reads (the stripped module still loads and
exports its init function), lists what it did, and does nothing the second time. The real engine's side (the
probe's verdicts, every stripped object loaded in the image, the megabytes): tests/pipeline/test_pipeline_slim.py."""

from __future__ import annotations

import ctypes
import dataclasses
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

from envgen.kb import KnowledgeBase
from envgen.plan.image import plan_image
from envgen.profile import load_profile
from envgen.profile.model import Slim
from envgen.render.files import render_files
from envgen.render.plan import render_context

ROOT = Path(__file__).resolve().parents[2]
# a Python extension module of a wheel that ships its symbol table (charset-normalizer's, MIT): envgen's own venv has it
MODULE = next(Path(shutil.which("ruff") or "/").parent.parent.glob("lib/python3*/site-packages/charset_normalizer/"
                                                                    "md.cpython-*.so"), None)


def test_every_row_is_sourced_and_nvidia_is_refused_by_its_own_license(kb: KnowledgeBase) -> None:
    assert [row.flags for row in kb.strip_tools] == [["--strip-unneeded", "--remove-section=.comment",
                                                      "--remove-section=.note"]]
    assert "debian-policy" in kb.strip_tools[0].source and ".symtab" in kb.strip_tools[0].sections
    for row in (*kb.strip_licences, *kb.strip_refused):
        assert row.source.startswith("https://") and len(row.why) > 40, row.name
    licences = {row.name: row for row in kb.strip_licences}
    assert licences["Apache-2.0"].notice and not licences["MIT"].notice
    refused = kb.strip_refused[0]
    assert refused.distributions == ["nvidia-*"] and "not modified in any way" in refused.why
    assert "sha256 92d04069" in refused.source


def test_the_plan_strips_by_default_and_either_opt_out_keeps_the_symbols(kb: KnowledgeBase) -> None:
    profile = load_profile("cpu-smoke", env={})
    plan = plan_image(profile, kb)
    assert plan.strip is not None and plan.slim is not None
    assert plan.strip.command("/opt/env").startswith("sh /opt/envgen/sh/strip.sh /opt/env /opt/envgen-strip -m "
                                                     "stripped.txt -f --strip-unneeded")
    assert "-m stripped-extras.txt" in plan.strip.command("/opt/extras") and "-x 'nvidia-*'" in plan.strip.words()
    assert plan_image(dataclasses.replace(profile, slim=False), kb).strip is None
    symbols = plan_image(dataclasses.replace(profile, slim=Slim(strip_symbols=False)), kb)
    assert symbols.strip is None and symbols.slim is not None
    files = plan_image(dataclasses.replace(profile, slim=Slim(leave_out=False)), kb)
    assert files.strip is not None and files.slim is None


def test_nothing_is_stripped_on_a_base_that_provides_the_environment(kb: KnowledgeBase) -> None:
    # the H200 host's adopted venv (scripts/gpu-host-adopt, 2026-12-04): a strip stage there apt-installed binutils on
    # an offline server whose imported userland has no apt lists, and the build stopped at it ("List directory
    # /var/lib/apt/lists/partial is missing", exit 100)
    held = load_profile(ROOT / "tests/fixtures/profiles/host-torch-held.yaml", env={})
    extra = dataclasses.replace(held, packages=dataclasses.replace(held.packages, pip=[*held.packages.pip,
                                                                                      "colorama==0.4.6"]))
    for profile in (load_profile(ROOT / "tests/fixtures/profiles/host-torch.yaml", env={}), held, extra):
        plan = plan_image(profile, kb)
        assert plan.strip is None and plan.slim is not None, profile.name
        files = render_files(render_context(plan)).files
        assert all(b"AS strip" not in files[f] and b"binutils" not in files[f]
                   for f in ("Dockerfile", "Dockerfile.classic")), profile.name
    # elsewhere the profile's kind decides, not what this build installs: a profile's first packages.pip line keeps
    # the environment layer's cache key (tests/pipeline/test_pipeline_layer_cache.py)
    bare = load_profile("cpu-minimal", env={})
    assert plan_image(dataclasses.replace(bare, packages=dataclasses.replace(bare.packages, pip=[])), kb).strip \
        is not None


def test_strip_runs_in_the_installing_step_from_a_stage_the_image_never_builds_on(kb: KnowledgeBase) -> None:
    profile = load_profile("cpu-smoke", env={})
    files = render_files(render_context(plan_image(profile, kb))).files
    uv = files["Dockerfile"].decode()
    # on the base, not on the system stage: its apt runs beside the system stage's (a100-pypi cold: 5.3 s off the
    # critical path), and GNU strip built for the base's C library runs on the system stage's, the same or newer
    assert "FROM ${BASE_IMAGE} AS strip" in uv and "apt-install.sh binutils" in uv and "FROM system AS strip" not in uv
    install = next(part for part in uv.split("\nRUN ") if "-r /tmp/envgen/requirements.lock" in part)
    assert "--mount=type=bind,from=strip,source=/opt/envgen-strip,target=/opt/envgen-strip" in install
    # the same RUN, after the leave-out and before the byte-compiling (compile.sh last)
    assert install.index("slim.sh /opt/env") < install.index("strip.sh /opt/env") < install.index("compile.sh /opt/env")
    runtime = uv[uv.index("AS runtime"):]
    assert "binutils" not in runtime and "FROM strip" not in uv and "COPY --from=strip" not in runtime
    classic = files["Dockerfile.classic"].decode()  # the staged path: copied into the build stage, never shipped
    build = classic[classic.index("AS build"):classic.index("AS extras")]
    assert "COPY --from=strip /opt/envgen-strip /opt/envgen-strip" in build and "strip.sh /opt/env" in build
    assert "envgen-strip" not in classic[classic.index("AS runtime"):]
    kept = render_files(render_context(plan_image(dataclasses.replace(profile, slim=Slim(strip_symbols=False)), kb)))
    for name in ("Dockerfile", "Dockerfile.classic"):
        text = kept.files[name].decode()
        assert "strip.sh" not in text and "AS strip" not in text and "slim.sh" in text


def _dist(site: Path, name: str, metadata: str) -> Path:
    """A distribution ``name`` 1.0 holding a copy of MODULE, its METADATA lines ``metadata``."""
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    module = site / name.replace("-", "_") / MODULE.name  # type: ignore[union-attr]
    module.parent.mkdir()
    shutil.copyfile(MODULE, module)  # type: ignore[arg-type]
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n{metadata}", encoding="utf-8")
    (info / "RECORD").write_text(f"{module.relative_to(site).as_posix()},,\n{info.name}/METADATA,,\n", encoding="utf-8")
    return module


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_strip_sh_rewrites_only_what_its_licence_allows_keeps_what_the_loader_reads_and_says_so(
        kb: KnowledgeBase, tmp_path: Path) -> None:
    assert MODULE is not None and shutil.which("strip"), "charset-normalizer in envgen's venv and binutils on the host"
    tool = tmp_path / "tool"
    done = subprocess.run(["sh", str(ROOT / "templates/sh/strip-tool.sh"), str(tool)], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0 and "GNU strip" in done.stdout, done.stderr
    env = tmp_path / "env"
    site = env / "lib/python3.11/site-packages"
    mit = _dist(site, "mit-pkg", "License-Expression: MIT AND (Apache-2.0 WITH LLVM-exception)\n")
    classifier = _dist(site, "bsd-pkg", "License: Copyright (c) someone\n  the full text\n"
                                        "Classifier: License :: OSI Approved :: BSD License\n")
    nvidia = _dist(site, "nvidia-fake-cu11", "License-Expression: MIT\n")  # refused whatever it declares
    unknown = _dist(site, "odd-pkg", "License: Some Licence 1.0\n")
    original = _sha(MODULE)  # type: ignore[arg-type]
    plan = plan_image(load_profile("cpu-smoke", env={}), kb).strip
    assert plan is not None
    command = plan.command(str(env)).replace("/opt/envgen/sh/strip.sh", str(ROOT / "templates/sh/strip.sh")).replace(
        "/opt/envgen-strip", str(tool))
    first = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=False)
    assert first.returncode == 0, first.stderr
    assert "stripped the symbol tables of 2 ELF file(s)" in first.stdout and "mit-pkg==1.0" in first.stdout
    assert "untouched nvidia-fake-cu11==1.0: its licence forbids" in first.stdout
    assert "untouched odd-pkg==1.0: licence not one that allows a modified copy, or unknown: Some Licence" in (
        first.stdout)
    assert _sha(nvidia) == original == _sha(unknown)
    listed = env / "share/envgen/stripped-env.txt"  # the extras directory's name: this one is not /opt/env
    manifest = listed.read_text(encoding="utf-8").splitlines()
    rows = [line.split("\t") for line in manifest if not line.startswith("#")]
    assert sorted(row[1] for row in rows) == ["bsd-pkg==1.0", "mit-pkg==1.0"], rows
    for row, module in zip(sorted(rows), (classifier, mit), strict=True):
        assert row[3] == original and row[5] == _sha(module) != original and int(row[6]) < int(row[4])
        assert ".symtab" in row[7].split(",")
        lib = ctypes.CDLL(str(module), os.RTLD_LAZY)  # the dynamic symbols are still there
        assert hasattr(lib, "PyInit_md"), module
    again = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=False)
    assert again.returncode == 0 and "of 0 ELF file(s)" in again.stdout, again.stdout
    assert listed.read_text(encoding="utf-8").splitlines() == manifest
    # each distribution examined once per directory: a later step (the +1 package's extras layer) looks only at
    # what it installed; cpu-smoke's +1 rebuild spent 3 s of its 4.5 s reading every file of the environment again
    examined = env / "share/envgen/examined-stripped-env.txt"
    assert examined.read_text(encoding="utf-8").split() == ["bsd-pkg==1.0", "mit-pkg==1.0", "nvidia-fake-cu11==1.0",
                                                            "odd-pkg==1.0"]
    # the same name==version, unstripped again: not looked at again. A new file put in place (this process has the
    # stripped one loaded above: rewriting that mapped file in place crashed the interpreter at exit)
    shutil.copyfile(MODULE, f"{mit}.new")  # type: ignore[arg-type]
    os.replace(f"{mit}.new", mit)
    added = _dist(site, "new-pkg", "License-Expression: MIT\n")
    third = subprocess.run(["sh", "-c", command], capture_output=True, text=True, check=False)
    assert third.returncode == 0 and "of 1 ELF file(s)" in third.stdout and "new-pkg==1.0" in third.stdout
    assert _sha(mit) == original != _sha(added) and "new-pkg==1.0" in examined.read_text(encoding="utf-8").split()


def test_strip_sh_without_a_python_that_reads_metadata_strips_nothing_and_says_so(tmp_path: Path) -> None:
    """legacy-maxwell's environment is Python 3.7 (no importlib.metadata) on a CUDA 10.1 base with no other Python:
    strip.sh leaves the environment as it is and says so in one line instead of failing the build on an import (a
    Python 3.7 interpreter is not to be had here: its stand-in fails that import the same way)."""
    env = tmp_path / "env"
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "python").write_text("#!/bin/sh\nexit 1\n", encoding="utf-8")
    (env / "bin" / "python").chmod(0o755)
    tools = tmp_path / "bin"  # the shell's tools without a python3
    tools.mkdir()
    (tools / "dirname").symlink_to(shutil.which("dirname") or "/usr/bin/dirname")
    done = subprocess.run(["/bin/sh", str(ROOT / "templates/sh/strip.sh"), str(env), str(tmp_path / "tool")],
                          capture_output=True, text=True, check=False,
                          env={"PATH": str(tools), "ENVGEN_ENV": str(env)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == (f"envgen: nothing stripped in {env}: no Python 3.8 or later here to read its "
                                   "distributions' metadata")


def test_a_wrong_key_under_slim_is_one_line_naming_the_keys_it_takes(tmp_path: Path) -> None:
    import pytest

    from envgen.errors import ProfileError

    path = tmp_path / "demo.yaml"
    path.write_text('name: demo\nbase: ubuntu:22.04\ninstaller: pip\npython: "3.10"\ngpu: {required: false}\n'
                    "slim: {strip: false}\n", encoding="utf-8")
    with pytest.raises(ProfileError) as caught:
        load_profile(str(path), env={})
    assert str(caught.value).count("\n") == 0, str(caught.value)
    assert "demo.yaml:6: unknown field 'slim.strip'; allowed here: leave_out, strip_symbols" in str(caught.value)
    path.write_text(path.read_text(encoding="utf-8").replace("{strip: false}", "{strip_symbols: false}"),
                    encoding="utf-8")
    assert load_profile(str(path), env={}).slim == Slim(strip_symbols=False)
