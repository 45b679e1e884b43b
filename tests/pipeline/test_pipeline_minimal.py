"""The whole pipeline on a profile that builds in seconds: build -> smoke -> seal -> tag -> cache hit ->
run -> push -> remove -> pull (hash verified, smoke-tested) -> run; plus the refusals."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.conftest import session_namespace
from tests.counting import count_plans
from tests.pipeline.conftest import alias, minimal_profile, publish_registry

if TYPE_CHECKING:
    from docker import DockerClient

from envgen.docker import inspect_image, remove_image
from envgen.errors import BuildFailed, ImageNotValidated, RegistryError
from envgen.pipeline.build import build
from envgen.pipeline.publish import pull, push, remote_ref
from envgen.pipeline.run import run
from envgen.pipeline.state import ValidationStore
from envgen.plan.image import plan_image
from envgen.render import render_in_memory


@pytest.fixture(scope="module")
def built(envgen_home: Path, write_profile: Callable[[str, str], str], cleanup_tags: list[str]):  # type: ignore[no-untyped-def]
    name = write_profile("pipe-min", minimal_profile('"six==1.16.0"'))
    outcome = build(name)
    cleanup_tags += [outcome.tag, alias(name)]
    return outcome


def test_build_smoke_seal_and_tag(built, docker_client: DockerClient, envgen_home: Path) -> None:  # type: ignore[no-untyped-def]
    assert built.smoke is not None and built.smoke.passed and built.smoke.mode == "cpu-only"
    # the import check imported what the plan's expected document names (expected.distributions): six
    imports = built.smoke.check("imports")
    assert imports is not None and imports.status == "pass" and imports.figures["imported"] == ["six"]
    image = inspect_image(docker_client, built.tag)
    assert image is not None and image.id == built.image_id
    assert image.labels["io.envgen.smoke"] == "pass" and image.labels["io.envgen.profile"] == "pipe-min"
    record = ValidationStore(envgen_home / "state").get(image.id)
    assert record is not None and record.passed
    # The sealed image carries its own report.
    out = docker_client.containers.run(image.id, ["cat", "/etc/envgen/smoke-report.json"], remove=True)
    assert b'"envgen.smoke/1"' in out
    frozen = docker_client.containers.run(image.id, ["cat", "/etc/envgen/requirements.freeze.txt"], remove=True)
    assert b"six==1.16.0" in frozen and b"pip==" in frozen


def test_the_seals_freeze_against_the_real_engine(built, docker_client: DockerClient) -> None:  # type: ignore[no-untyped-def]
    """The seal's `pip freeze` run by the real engine (tests/unit/test_seal.py replays answers recorded from it):
    the built image's list is the one sealed into it; in a child without pip, the freeze is an error that seals
    nothing."""
    from envgen.pipeline.build import freeze

    sealed = docker_client.containers.run(built.image_id, ["cat", "/etc/envgen/requirements.freeze.txt"],
                                          remove=True).decode()
    assert freeze(docker_client, built.image_id) == sealed
    child = alias("pipe-min-no-pip")  # it carries pipe-min's labels: removed at once, so `images` never lists it
    dockerfile = f"FROM {built.image_id}\nUSER root\nRUN python -m pip uninstall --yes --quiet pip\n"
    try:
        docker_client.images.build(fileobj=io.BytesIO(dockerfile.encode()), tag=child, rm=True)
        with pytest.raises(BuildFailed, match="No module named pip"):
            freeze(docker_client, child)
    finally:
        remove_image(docker_client, child, force=True)


def test_unchanged_profile_is_a_cache_hit(built, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    counts = count_plans(monkeypatch)
    again = build("pipe-min")
    assert again.cached and again.image_id == built.image_id and again.tag == built.tag
    assert (counts.plans, counts.renders) == (1, 1)  # the check's plan, rendered once for the tag


def test_run_uses_uid_workdir_and_env_path(built, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "hello.txt").write_text("hi\n", encoding="utf-8")
    out = io.StringIO()
    # as root (CI): asked for with --as-root, else the container runs the image's own user (test_pipeline_disk_faults)
    code = run("pipe-min", command=["/bin/sh", "-c", "id -u; cat hello.txt; command -v python"], gpus="none",
               workdir=tmp_path, out=out.write, as_root=__import__("os").geteuid() == 0)
    lines = out.getvalue().split()
    assert code == 0
    assert lines[0] == str(__import__("os").getuid()) and "hi" in lines and "/opt/env/bin/python" in lines


WARM_RUN = """
import runpy, sys
sys.argv = ["envgen", "run", "pipe-min", "--", "true"]
try:
    runpy.run_module("envgen", run_name="__main__")
except SystemExit as exc:
    code = exc.code
heavy = ("cryptography", "pydantic_core", "pydantic", "envgen.kb.knowledge", "envgen.plan.image", "envgen.render.core")
print("LOADED", sorted(m for m in sys.modules if m in heavy or m.split(".")[0] in heavy[:3]), code)
"""


def test_a_warm_run_verifies_and_loads_nothing_again(built, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`envgen run PROFILE` as typed, twice: the second finds the profile, the tag, the config and the signature's
    verdict where the first (or the build) left them, keyed by what decides each (bench/bench_run.py times it):
    no KB, no plan or render, no cryptography, no pydantic_core in the process, and the container still runs."""
    import subprocess
    import sys

    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", WARM_RUN], capture_output=True, text=True, cwd=tmp_path,
                              timeout=300, check=False)
    assert done.stdout.splitlines()[-1] == "LOADED [] 0", done.stdout + done.stderr


RUN_SDK = """
import runpy, sys
sys.argv = ["envgen", "run", "pipe-min", "--", "echo", "ran"]
try:
    runpy.run_module("envgen", run_name="__main__")
except SystemExit as exc:
    code = exc.code
print("SDK", sorted(m for m in sys.modules if m.split(".")[0] in ("docker", "requests", "urllib3")), code)
"""


def test_a_run_by_profile_imports_no_docker_sdk(built, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`envgen run PROFILE` on a unix:// engine talks to it over its socket (envgen.docker.socket_engine): the
    container runs and no module of the Docker SDK is imported, the SDK's import being most of what a run spent
    over a check (#41, bench/bench_run.py)."""
    import os
    import subprocess
    import sys

    from envgen.docker.client import engine_url, socket_path

    assert socket_path(engine_url()) is not None, "the suite's engine is reached over a Unix socket"
    done = subprocess.run([sys.executable, "-c", RUN_SDK], capture_output=True, text=True, cwd=tmp_path, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}, check=False)
    assert done.stdout.splitlines()[-2:] == ["ran", "SDK [] 0"], done.stdout + done.stderr


def test_push_remove_pull_verifies_hash(built, docker_client: DockerClient, local_registry: str) -> None:  # type: ignore[no-untyped-def]
    pushed = push("pipe-min", registry=publish_registry(local_registry))
    ref = remote_ref(publish_registry(local_registry), built.tag)
    assert ref in pushed and "@sha256:" in pushed
    for tag in (built.tag, ref, alias("pipe-min")):
        remove_image(docker_client, tag, force=True)
    assert inspect_image(docker_client, built.tag) is None
    message = pull("pipe-min", registry=publish_registry(local_registry))
    assert "labels match the profile" in message and "smoke test on this host: pass" in message
    assert inspect_image(docker_client, built.tag) is not None
    out = io.StringIO()
    assert run("pipe-min", command=["python", "-c", "import six; print(six.__version__)"], gpus="none",
               out=out.write) == 0
    assert "1.16.0" in out.getvalue()


def test_pull_rejects_image_with_other_labels(built, docker_client: DockerClient, local_registry: str,  # type: ignore[no-untyped-def]
                                              write_profile: Callable[[str, str], str]) -> None:
    # Publish pipe-min's image under the tag another profile renders to: labels cannot match.
    other = write_profile("pipe-other", minimal_profile('"six==1.16.0"'))
    from envgen.kb import load_kb
    from envgen.profile import load_profile

    other_tag = render_in_memory(plan_image(load_profile(other), load_kb())).tag
    ref = remote_ref(publish_registry(local_registry), other_tag)
    docker_client.api.tag(built.image_id, *ref.rsplit(":", 1))  # Podman refuses a repository with its tag in it
    docker_client.images.push(ref)
    remove_image(docker_client, ref, force=True)
    # unsigned in the registry: refused before anything is pulled (a signed one with other labels:
    # tests/pipeline/test_pipeline_attest.py)
    with pytest.raises(ImageNotValidated, match="the registry holds no signed validation beside it"):
        pull(other, registry=publish_registry(local_registry), smoke=False)
    assert inspect_image(docker_client, ref) is None and inspect_image(docker_client, other_tag) is None


def test_registry_down_is_one_clear_error(built, docker_client: DockerClient) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(RegistryError) as info:
        push("pipe-min", registry=f"localhost:5999/{session_namespace()}")
    assert "localhost:5999" in info.value.one_line()
    assert not [t for img in docker_client.images.list() for t in img.tags if t.startswith("localhost:5999/")]


def test_unvalidated_image_is_refused_by_run(write_profile: Callable[[str, str], str],  # type: ignore[no-untyped-def]
                                             cleanup_tags: list[str]) -> None:
    name = write_profile("pipe-nosmoke", minimal_profile('"six==1.15.0"'))
    outcome = build(name, smoke=False)
    cleanup_tags += [outcome.tag, alias(name)]
    with pytest.raises(ImageNotValidated, match="has not passed its smoke test"):
        run(name, command=["true"], gpus="none")
    assert run(name, command=["true"], gpus="none", force=True, out=lambda _l: None) == 0
    with pytest.raises(ImageNotValidated):
        push(name, registry=f"localhost:5000/{session_namespace()}")


def test_failing_step_names_step_and_tags_nothing(write_profile: Callable[[str, str], str],  # type: ignore[no-untyped-def]
                                                  docker_client: DockerClient) -> None:
    name = write_profile("pipe-broken", minimal_profile('"envgen-no-such-package-xyz==1.0"'))
    with pytest.raises(BuildFailed) as info:
        build(name)
    err = info.value
    assert "RUN" in err.one_line() or "step" in err.one_line()
    assert "envgen-no-such-package-xyz" in err.tail
    assert err.log_path and Path(err.log_path).is_file()
    prefix = f"{session_namespace()}/pipe-broken"
    assert not [t for img in docker_client.images.list() for t in img.tags if t.startswith(prefix)]


def test_sealed_image_keeps_the_image_config(built, docker_client: DockerClient) -> None:  # type: ignore[no-untyped-def]
    config = docker_client.api.inspect_image(built.image_id)["Config"]
    assert config["Cmd"] == ["/bin/bash"] and config["User"] == "1000:1000"
    assert config["WorkingDir"] == "/workspace"


def test_changing_an_extra_package_reuses_the_environment_layer(  # type: ignore[no-untyped-def]
        built, docker_client: DockerClient, write_profile: Callable[[str, str], str], cleanup_tags: list[str]) -> None:
    """Only the extras layer and what follows it change; the layer holding /opt/env is the same layer."""
    from envgen.docker.engine import engine_info

    if engine_info(docker_client).kind == "podman":
        pytest.skip("this test pairs Docker's image history with RootFS layers; on Podman 4.3 no history entry "
                    "names the /opt/env copy the way Docker's does (seen 2026-12-01), so it runs on Docker only")

    def env_layer(image_id: str) -> tuple[str, list[str]]:
        attrs = docker_client.api.inspect_image(image_id)
        layers = attrs["RootFS"]["Layers"]
        history = [h for h in docker_client.api.history(image_id)[::-1] if h["Size"] or "COPY" in h["CreatedBy"]]
        return layers[[i for i, h in enumerate(history) if "/opt/env /opt/env" in h["CreatedBy"]][0]], layers

    name = write_profile("pipe-min2", minimal_profile('"six==1.17.0"'))
    other = build(name, smoke=False)
    cleanup_tags += [other.tag, alias(name)]
    layer_a, layers_a = env_layer(built.image_id)
    layer_b, layers_b = env_layer(other.image_id)
    assert layer_a == layer_b
    assert layers_a != layers_b
    assert other.cached_steps >= 8, f"only {other.cached_steps}/{other.steps} steps came from the cache"


def test_classic_builder_builds_offline_from_a_host_wheelhouse(  # type: ignore[no-untyped-def]
        write_profile: Callable[[str, str], str], cleanup_tags: list[str], envgen_home: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The classic builder has no secrets: the host downloads the wheels, the build installs offline. One plan,
    one render (it was 5 and 4: the host's download re-rendered the context twice)."""
    name = write_profile("pipe-classic", minimal_profile('"six==1.16.0"'))
    counts = count_plans(monkeypatch)
    outcome = build(name, builder="classic")
    assert (counts.plans, counts.renders) == (1, 1)
    cleanup_tags += [outcome.tag, alias(name)]
    assert outcome.builder == "classic" and outcome.smoke is not None and outcome.smoke.passed
    houses = list((envgen_home / "state" / "wheelhouse").glob("pipe-classic-*"))
    assert houses and any(w.name.startswith("six-1.16.0") for w in houses[0].glob("*.whl"))


def test_images_lists_validation_status(built) -> None:  # type: ignore[no-untyped-def]
    from envgen.pipeline.image_list import image_rows, rows_table

    rows = {row["profile"]: row for row in image_rows()}
    assert rows["pipe-min"]["validation"] == "pass (cpu-only)" and rows["pipe-min"]["signed_by"]
    assert rows["pipe-nosmoke"]["validation"] == "not validated: no signed validation names its digest"
    assert "pipe-min" in rows_table(list(rows.values()))


def test_images_of_another_namespace_are_not_listed(built, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """Issue 32 item 9: with ENVGEN_NAMESPACE=other, images tagged only in another namespace (here the suite's own,
    validated through the same state directory) were listed."""
    from envgen.pipeline.image_list import image_rows

    monkeypatch.setenv("ENVGEN_NAMESPACE", f"{session_namespace()}-other")
    rows = image_rows()
    assert all(not row["tags"] or any(t.startswith(f"{session_namespace()}-other/") for t in row["tags"])
               for row in rows), rows
    assert "pipe-min" not in {row["profile"] for row in rows}


def test_push_without_smoke_is_refused_before_building() -> None:
    from envgen.errors import InputError

    with pytest.raises(InputError, match="only images that passed their smoke test are published"):
        build("pipe-min", smoke=False, push=True)
