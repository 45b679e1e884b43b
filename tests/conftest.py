"""Shared fixtures. Engine-backed fixtures FAIL under CI=true when their service is unreachable
(CI must never silently skip the Docker tests) and skip otherwise."""

from __future__ import annotations

import os
import sys
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import pytest

if TYPE_CHECKING:
    from docker import DockerClient


def _helper_modules(root: Path) -> list[str]:
    """The import names of the helper modules under tests/ (not test files, not conftest files, which pytest
    rewrites anyway): a helper in a package by its dotted name, one in a folder without ``__init__.py`` (put on
    sys.path by pytest's prepend import mode) by its bare name."""
    names = []
    for path in sorted(root.rglob("*.py")):
        if path.name.startswith("test_") or path.name in ("conftest.py", "__init__.py"):
            continue
        parts = [path.stem]
        folder = path.parent
        while (folder / "__init__.py").is_file():
            parts.insert(0, folder.name)
            folder = folder.parent
        name = ".".join(parts)
        if all(part.isidentifier() for part in parts) and name not in sys.modules:
            names.append(name)
    return names


# Asserts in the helpers count for the test that calls them (tests/assertion_count.py): rewrite them too.
pytest.register_assert_rewrite(*_helper_modules(Path(__file__).parent))

LOCAL_REGISTRY = "localhost:5000"
# Set on an engine shared with other people's envgen builds in the default namespace: the end-of-session
# check of the user's world then reports what changed instead of failing (tests/isolation.py).
SHARED_ENGINE_ENV = "ENVGEN_TEST_SHARED_ENGINE"
# Every test in these folders needs the real engine: they carry the `docker` marker.
DOCKER_DIRS = ("docker", "pipeline")


def pytest_configure(config: pytest.Config) -> None:
    """Every item must assert something: the counter of tests/assertion_count.py fails one that asserts nothing."""
    from tests.assertion_count import configure

    configure(config)


def _in_docker_dirs(path: object) -> bool:
    here = Path(__file__).parent
    return any(here / name in Path(str(path)).parents for name in DOCKER_DIRS)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if _in_docker_dirs(item.path):
            item.add_marker(pytest.mark.docker)


def pytest_report_header(config: pytest.Config) -> str | None:
    """The free disk the session starts with (tests/disk.py), so a run that runs out says how much it had."""
    from tests.disk import header

    client = _engine_or_none()
    if client is None:
        return None
    try:
        return header(client)
    finally:
        client.close()


@pytest.fixture(scope="module", autouse=True)
def _disk_kept_bounded(request: pytest.FixtureRequest, pytestconfig: pytest.Config) -> Iterator[None]:
    """After each module under tests/docker and tests/pipeline: its images go, and the build cache is cut when the
    disk runs low (tests/disk.py)."""
    yield
    if not _in_docker_dirs(request.node.path):
        return
    from tests.disk import after_module

    client = _engine_or_none()
    if client is None:
        return
    try:
        line = after_module(client, session_namespace())
    finally:
        client.close()
    reporter = pytestconfig.pluginmanager.get_plugin("terminalreporter")
    capture = pytestconfig.pluginmanager.get_plugin("capturemanager")
    if line and reporter is not None and capture is not None:
        with capture.global_and_fixture_disabled():  # a module's teardown runs under capture: say it on the terminal
            reporter.write_line(f"\n{line}")


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def unavailable(reason: str) -> NoReturn:
    """Fail under CI=true, skip elsewhere."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: Docker tests must not be skipped; run scripts/host-setup first)",
                    pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session", autouse=True)
def isolated_from_the_user(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Iterator[str]:
    """Every test of the session runs in its own image namespace and state directory (tests/isolation.py);
    at the end, nothing of the user's (images and containers in their namespaces, base images, state
    records, envgen and Docker client config) may have been created, changed or removed. Yields the
    session's namespace."""
    from tests.isolation import new_namespace, remove_namespace_tags, session_environment, take_snapshot, user_world

    world = user_world(os.environ)
    client = _engine_or_none()
    before = take_snapshot(world, client)
    namespace = new_namespace()
    with pytest.MonkeyPatch.context() as mp:
        for key, value in session_environment(namespace, tmp_path_factory.mktemp("envgen-session")).items():
            mp.setenv(key, value)
        mp.delenv("XDG_CONFIG_HOME", raising=False)
        yield namespace
    if client is not None:
        remove_namespace_tags(client, namespace)
    after = take_snapshot(world, client)
    if client is not None:
        client.close()
    changed = before.differences(after)
    if changed and os.environ.get(SHARED_ENGINE_ENV):
        # Someone else builds in the default namespace on this engine right now: report, do not fail.
        reporter = pytestconfig.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"\n{SHARED_ENGINE_ENV} set: changes to the user's world during the session, "
                                "not asserted (other processes share this engine):")
            for line in changed:
                reporter.write_line(f"  {line}")
        return
    assert not changed, (
        "the test suite touched the user's world:\n" + "\n".join(changed) + "\n(if other people build in "
        f"the default namespace on this engine at the same time, their changes show here; {SHARED_ENGINE_ENV}=1 "
        "reports instead of failing)")


def session_namespace() -> str:
    """The image namespace of this test session (``ENVGEN_NAMESPACE``, set for the whole session)."""
    return os.environ["ENVGEN_NAMESPACE"]


def _engine_or_none() -> DockerClient | None:
    from envgen.docker import connect
    from envgen.errors import DockerUnavailable

    try:
        return connect()
    except DockerUnavailable:
        return None


@pytest.fixture(scope="session", name="unavailable")
def unavailable_fixture() -> Callable[[str], NoReturn]:
    """The fail-under-CI-else-skip rule, for fixtures in sub-directories' conftest files."""
    return unavailable


@pytest.fixture(scope="session")
def docker_client() -> Iterator[DockerClient]:
    from envgen.docker import connect
    from envgen.errors import DockerUnavailable

    try:
        client = connect()
    except DockerUnavailable as exc:
        unavailable(f"Docker engine unreachable: {exc.one_line()}")
    yield client
    client.close()


@pytest.fixture(scope="session")
def local_registry() -> str:
    """``"localhost:5000"`` once its /v2/ endpoint answers 200 (scripts/host-setup starts it)."""
    url = f"http://{LOCAL_REGISTRY}/v2/"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never via a proxy
    try:
        with opener.open(url, timeout=5) as response:
            status = response.status
    except urllib.error.HTTPError as exc:
        unavailable(f"registry at {LOCAL_REGISTRY} answered HTTP {exc.code} for /v2/ (auth enabled?)")
    except OSError as exc:
        unavailable(f"no registry answers at {LOCAL_REGISTRY}: {exc}")
    if status != 200:
        unavailable(f"registry at {LOCAL_REGISTRY} answered HTTP {status}")
    return LOCAL_REGISTRY


@pytest.fixture(autouse=True, scope="session")
def _private_kb_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The knowledge-base cache of every CLI call in the tests goes to a temp dir, never ~/.cache/envgen."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("ENVGEN_CACHE_DIR", str(tmp_path_factory.mktemp("kb-cache")))
        yield
