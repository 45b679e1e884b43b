"""GPU tests need an NVIDIA GPU: they skip elsewhere (they run on the device machine)."""

from __future__ import annotations

import pytest
from probe_run import gpu_present


@pytest.fixture(scope="session", autouse=True)
def _needs_gpu() -> None:
    if not gpu_present():
        pytest.skip("no NVIDIA GPU on this machine")
