"""The Python versions a candidate may use: where the frameworks' wheel windows meet, cut to the one asked for."""

from __future__ import annotations

from envgen.kb.versions import vtuple
from envgen.suggest.parts import TorchPart
from envgen.suggest.request import Request


def _pythons(low: str, high: str) -> list[str]:
    lo, hi = vtuple(low), vtuple(high)
    return [f"3.{m}" for m in range(hi[1], lo[1] - 1, -1)] if lo[0] == hi[0] == 3 else []


def torch_window(torch: TorchPart) -> tuple[str, str]:
    """The Python range with wheels, experimental Pythons included (the check warns on those), cut to what the
    paired torchvision and torchaudio wheels cover: the suggested set has to install as a whole."""
    release = torch.build.release
    high = max([release.python_max, *release.python_experimental], key=vtuple)
    if release.companions_python_max is not None:
        high = min(high, release.companions_python_max, key=vtuple)
    return release.python_min, high


def python_choices(req: Request, windows: list[tuple[str, str]]) -> list[str]:
    low = max((w[0] for w in windows), key=vtuple)
    high = min((w[1] for w in windows), key=vtuple)
    choices = _pythons(low, high)
    if req.python is not None:
        want = ".".join(req.python.split(".")[:2])
        return [want] if want in choices else []
    return choices[:2]  # the newest, and the one below it in case the newest is only experimental
