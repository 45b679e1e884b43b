"""Secrets and credentials stay out of rendered files; mirrors do not move hashes; writes are atomic."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest

from envgen.config import UserConfig
from envgen.errors import InputError, RenderError
from envgen.kb import load_kb
from envgen.plan.image import plan_image
from envgen.profile import list_profiles, load_profile
from envgen.profile.model import Mirrors
from envgen.render import render
from envgen.render import writer as writer_module
from envgen.render.core import render_in_memory
from envgen.render.jinja import make_environment, render_template

PROFILES = [s.name for s in list_profiles({})]
CREDENTIAL = "user:s3cret"
MIRRORS = Mirrors(
    pip_index_url=f"https://{CREDENTIAL}@pypi.mirror.example/simple",
    pip_extra_index_urls=["https://extra.mirror.example/simple"],
    pip_trusted_hosts=["pypi.mirror.example"],
    conda_channel_alias="https://conda.mirror.example/",
    conda_channels={"conda-forge": "https://conda.mirror.example/conda-forge"},
    apt_mirror="http://apt.mirror.example/debian",
    http_proxy=f"http://{CREDENTIAL}@proxy.example:3128",
    https_proxy=f"http://{CREDENTIAL}@proxy.example:3128",
    no_proxy="localhost,127.0.0.1",
)


@pytest.fixture(scope="module")
def kb():
    return load_kb()


@pytest.fixture()
def config(tmp_path: Path) -> UserConfig:
    ca = tmp_path / "corp-proxy-ca.pem"
    ca.write_text("-----BEGIN CERTIFICATE-----\nMIIBsecretcertificatebody\n-----END CERTIFICATE-----\n")
    return UserConfig(mirrors=MIRRORS, ca_bundle=ca)


def _instructions(text: str) -> list[str]:
    """Dockerfile instructions with continuation lines joined (comments dropped)."""
    out: list[str] = []
    current = ""
    for line in text.splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        current += line.rstrip("\\") + " "
        if not line.endswith("\\"):
            out.append(current.strip())
            current = ""
    return out


@pytest.mark.parametrize("name", PROFILES)
def test_no_secret_ca_or_credential_in_rendered_files(name: str, kb, config: UserConfig) -> None:
    ctx = render_in_memory(plan_image(load_profile(name, env={}), kb), config)
    assert config.ca_bundle is not None
    forbidden = [CREDENTIAL, "proxy.example", "mirror.example", str(config.ca_bundle), "corp-proxy-ca",
                 "MIIBsecretcertificatebody"]
    for path, data in ctx.files.items():
        text = data.decode("utf-8", errors="replace")
        for needle in forbidden:
            assert needle not in text, f"{needle!r} leaked into {path}"
    # The CA bundle is reached only through the BuildKit secret mount, never COPY/ADD/ARG/ENV.
    buildkit = _instructions(ctx.files["Dockerfile"].decode())
    for instruction in buildkit:
        if "/run/secrets/ca_bundle" in instruction:
            assert instruction.startswith("RUN "), instruction
            assert "--mount=type=secret,id=ca_bundle" in instruction, instruction
        assert not instruction.startswith(("ADD ", "ENV ", "ARG ")) or "ca_bundle" not in instruction
    assert "/run/secrets" not in ctx.files["Dockerfile.classic"].decode()
    # ...and the values reach the builder as build args and secrets instead.
    assert ctx.plan.build_args["HTTP_PROXY"] == MIRRORS.http_proxy
    assert ctx.plan.build_args["http_proxy"] == MIRRORS.http_proxy
    assert ctx.plan.secrets == {"ca_bundle": str(config.ca_bundle)}


@pytest.mark.parametrize("name", PROFILES)
def test_mirrors_change_neither_files_nor_hashes(name: str, kb, config: UserConfig) -> None:
    profile = load_profile(name, env={})
    plain = render_in_memory(plan_image(profile, kb))
    mirrored = render_in_memory(plan_image(profile.model_copy(update={"mirrors": MIRRORS}), kb), config)
    assert plain.plan.profile_hash == mirrored.plan.profile_hash
    assert plain.content_hash == mirrored.content_hash
    assert plain.files == mirrored.files
    assert mirrored.plan.build_args["CONDA_CHANNEL_MIRRORS"] == "conda-forge=https://conda.mirror.example/conda-forge"


def test_profile_change_changes_both_hashes(kb) -> None:
    profile = load_profile("cpu-minimal", env={})
    other = profile.model_copy(update={"description": "another description"})
    a, b = render_in_memory(plan_image(profile, kb)), render_in_memory(plan_image(other, kb))
    assert a.plan.profile_hash != b.plan.profile_hash and a.content_hash != b.content_hash


def test_wheelhouse_is_copied_but_not_hashed(kb, tmp_path: Path) -> None:
    wheelhouse = tmp_path / "wheelhouse"
    wheelhouse.mkdir()
    (wheelhouse / "demo-1.0-py3-none-any.whl").write_bytes(b"not really a wheel")
    (wheelhouse / "notes.txt").write_text("ignored")
    profile = load_profile("cpu-smoke", env={})
    plain = render(plan_image(profile, kb), tmp_path / "plain")
    offline = render(plan_image(profile, kb), tmp_path / "offline", wheelhouse=wheelhouse, offline=True)
    assert offline.wheels == ("demo-1.0-py3-none-any.whl",)
    assert (offline.dir / "wheels" / "demo-1.0-py3-none-any.whl").read_bytes() == b"not really a wheel"
    assert not (offline.dir / "wheels" / "notes.txt").exists()
    assert offline.content_hash == plain.content_hash
    assert offline.build_args == {"PIP_NO_INDEX": "1"}
    classic = (offline.dir / "Dockerfile.classic").read_text()
    assert "COPY wheels/ /tmp/wheels/" in classic
    runtime = classic[classic.index("AS runtime"):]
    assert "wheels" not in runtime
    assert "--mount=type=bind,source=wheels,target=/tmp/wheels" in (offline.dir / "Dockerfile").read_text()


def test_offline_without_wheelhouse_is_an_error(kb, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="wheelhouse"):
        render(plan_image(load_profile("cpu-smoke", env={}), kb), tmp_path / "x", offline=True)
    assert not (tmp_path / "x").exists()


def test_render_replaces_existing_target_atomically(kb, tmp_path: Path) -> None:
    target = tmp_path / "ctx"
    target.mkdir()
    (target / "stale.txt").write_text("old")
    result = render(plan_image(load_profile("cpu-minimal", env={}), kb), target)
    assert not (target / "stale.txt").exists()
    assert (target / "Dockerfile").is_file() and result.dir == target.absolute()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ctx"]


def test_failed_render_leaves_nothing_behind(kb, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "ctx"
    target.mkdir()
    (target / "keep.txt").write_text("previous context")
    calls = {"n": 0}
    real_chmod = Path.chmod

    def failing_chmod(self: Path, mode: int, **kwargs: object) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(28, "No space left on device")
        real_chmod(self, mode)

    monkeypatch.setattr(writer_module.Path, "chmod", failing_chmod)
    with pytest.raises(RenderError, match="No space left"):
        render(plan_image(load_profile("cpu-minimal", env={}), kb), target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ctx"]
    assert sorted(p.name for p in target.iterdir()) == ["keep.txt"]


def test_failed_render_into_new_target_creates_nothing(
    kb, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(writer_module, "_fill", boom)
    with pytest.raises(RenderError):
        render(plan_image(load_profile("cpu-minimal", env={}), kb), tmp_path / "new")
    assert list(tmp_path.iterdir()) == []


def test_output_path_that_is_a_file_is_an_error(kb, tmp_path: Path) -> None:
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(RenderError, match="not a directory"):
        render(plan_image(load_profile("cpu-minimal", env={}), kb), target)


def test_undefined_template_value_is_a_render_error(tmp_path: Path) -> None:
    (tmp_path / "t.j2").write_text("FROM {{ base.from_ref }}\n")
    env = make_environment(tmp_path)
    with pytest.raises(RenderError, match="undefined"):
        render_template(env, "t.j2", {})
    with pytest.raises(RenderError, match="not found"):
        render_template(env, "missing.j2", {})
    assert isinstance(env.undefined, type) and issubclass(env.undefined, jinja2.StrictUndefined)


def test_strict_undefined_in_real_templates(kb) -> None:
    from envgen.render.files import DOCKERFILE_TEMPLATE, template_context
    from envgen.render.plan import render_context

    plan = render_context(plan_image(load_profile("cpu-minimal", env={}), kb))
    context = template_context(plan, DOCKERFILE_TEMPLATE, buildkit=True)
    del context["labels"]
    with pytest.raises(RenderError, match="labels"):
        render_template(make_environment(), "docker/Dockerfile.j2", context)
    context = template_context(plan, DOCKERFILE_TEMPLATE, buildkit=False)
    del context["stages"]
    with pytest.raises(RenderError, match="stages"):
        render_template(make_environment(), "docker/Dockerfile.j2", context)
