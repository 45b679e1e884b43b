"""Shared fixtures. Engine-backed fixtures FAIL under CI=true when their service is unreachable
(CI must never silently skip the Docker tests) and skip otherwise."""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import pytest

if TYPE_CHECKING:
    from docker import DockerClient

LOCAL_REGISTRY = "localhost:5000"
# Every test in these folders needs the real engine: they carry the `docker` marker.
DOCKER_DIRS = ("docker", "pipeline")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if any(here / name in Path(str(item.path)).parents for name in DOCKER_DIRS):
            item.add_marker(pytest.mark.docker)


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def unavailable(reason: str) -> NoReturn:
    """Fail under CI=true, skip elsewhere."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: Docker tests must not be skipped; run scripts/host-setup first)",
                    pytrace=False)
    pytest.skip(reason)


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
