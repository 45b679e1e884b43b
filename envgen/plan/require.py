"""NVIDIA_REQUIRE_CUDA: the requirement an image declares, and its evaluation as the NVIDIA Container Toolkit
evaluates it, so that `check --driver` and the container runtime cannot disagree.

The toolkit's rules (libnvidia-container, src/cli/dsl.c and src/cli/configure.c,
https://github.com/NVIDIA/libnvidia-container): the value is a list of rules separated by spaces, any one of
which satisfies the requirement; a rule is conditions joined by commas, all of which must hold. A condition is
``name OP value`` with name ``cuda`` (the CUDA version the driver supports), ``driver`` (its version), ``arch``
(the GPU's compute capability) or ``brand`` (tesla, geforce, ...; only ``=`` and ``!=``), OP one of
``= != < <= > >=`` (there is no ``==``). Versions compare number by number, trailing zeros ignored; a fact the
toolkit cannot read satisfies its condition. A refusal names the value's first rule: "unsatisfied condition:
cuda>=12.1".

What envgen declares: ``cuda>=X``, X the oldest CUDA whose driver runs every CUDA runtime the image's code
calls (``check.gpu.driver.cuda_in_use``), minor-version compatibility included (11.x user space on any 11.x driver
>= 450.80.02, so X = 11.0). The base image's ``brand=...,driver>=...`` alternatives are dropped on purpose:
they admit older datacenter drivers through the CUDA forward-compatibility package, which check does not
model for a CUDA base, so keeping them would start containers check calls broken.

An NGC framework base keeps its own value, as NVIDIA ships it, unless what envgen adds needs a newer CUDA than
the base's: NVIDIA's notes of each release name the data-centre driver branches it runs on through the
forward-compatibility libraries in the image (ngc.yaml ``datacenter_drivers``), which its own requirement admits,
and check judges that path (``check.base.ngc``). envgen then writes no NVIDIA_REQUIRE_CUDA at all.
"""

from __future__ import annotations

from dataclasses import dataclass

from envgen.kb import KnowledgeBase
from envgen.kb.versions import at_least, minor, vtuple
from envgen.plan.stack import Stack

_OPERATORS = ("=", "!=", "<", "<=", ">", ">=")
_OP_CHARS = "<>=!"
_VERSION_FACTS = ("cuda", "driver", "arch")


@dataclass(frozen=True)
class ToolkitFacts:
    """What the toolkit reads from the host: None where it cannot read it."""

    cuda: str | None = None  # the newest CUDA the driver supports ("12.0" for 525.60.13)
    driver: str | None = None
    arch: str | None = None  # compute capability of the GPU ("8.0")
    brand: str | None = None  # "Tesla", "GeForce", ...


@dataclass(frozen=True)
class Verdict:
    ok: bool
    unsatisfied: str | None = None  # the value's first rule, as the toolkit's refusal names it


def _numbers(version: str, condition: str) -> tuple[int, ...]:
    if not version or version.strip("0123456789."):
        raise ValueError(f"invalid expression {condition!r}: {version!r} is not a version")
    parts = [int(p) for p in version.split(".") if p]
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def _compare(have: tuple[int, ...] | str, op: str, want: tuple[int, ...] | str) -> bool:
    if op == "=":
        return have == want
    if op == "!=":
        return have != want
    assert isinstance(have, tuple) and isinstance(want, tuple)
    return {"<": have < want, "<=": have <= want, ">": have > want, ">=": have >= want}[op]


def _condition(condition: str, facts: ToolkitFacts) -> bool:
    cut = next((i for i, ch in enumerate(condition) if ch in _OP_CHARS), 0)
    name = condition[:cut].lower()
    end = cut
    while end < len(condition) and condition[end] in _OP_CHARS:
        end += 1
    op, value = condition[cut:end], condition[end:]
    if not name or op not in _OPERATORS or not value or name not in (*_VERSION_FACTS, "brand"):
        raise ValueError(f"invalid expression {condition!r}")
    if name == "brand":
        if op not in ("=", "!="):
            raise ValueError(f"invalid expression {condition!r}: brand takes = or != only")
        return True if facts.brand is None else _compare(facts.brand.lower(), op, value.lower())
    have = getattr(facts, name)
    want = _numbers(value, condition)
    return True if have is None else _compare(_numbers(have, condition), op, want)


def evaluate(requirement: str, facts: ToolkitFacts) -> Verdict:
    """The toolkit's verdict on ``requirement``; ValueError where it says "invalid expression"."""
    rules = [rule for rule in requirement.split(" ") if rule]
    for rule in rules:
        if all(_condition(c, facts) for c in rule.split(",") if c):
            return Verdict(True)
    return Verdict(not rules, rules[0] if rules else None)


def driver_cuda(kb: KnowledgeBase, driver: str, windows: bool = False) -> str | None:
    """The newest CUDA in the knowledge base that ``driver`` serves: what the toolkit's ``cuda`` fact reads
    (``windows``: the Windows driver, as on WSL 2)."""
    served = [row.version for row in kb.cuda_toolkits
              if at_least(driver, row.driver_windows_min if windows else row.driver_linux_min) is True]
    return max(served, key=vtuple, default=None)


def _oldest_cuda_running(kb: KnowledgeBase, version: str) -> str:
    """The oldest driver CUDA a ``version`` runtime runs on: the minor-compatibility floor's, else itself."""
    row = kb.cuda(version)
    if row is None or row.minor_compat_driver_min is None:
        return minor(version)
    return driver_cuda(kb, row.minor_compat_driver_min) or minor(version)


def required_cuda(stack: Stack) -> str | None:
    """The X of ``cuda>=X`` the image declares; None when its code calls no CUDA runtime, or when the NGC base's
    own requirement covers what envgen adds (the base's value then stays)."""
    used = [version for version, _ in stack.cuda_in_use] if stack.gpu or stack.profile.cuda else []
    floors = [_oldest_cuda_running(stack.kb, v) for v in used]
    need = max(floors, key=vtuple, default=None)
    # an NGC base's own CUDA: its release row's, else (a release without a row) the profile's, which describes it
    base_cuda = stack.ngc.cuda if stack.ngc is not None else stack.profile.cuda if stack.family.release_table else None
    if base_cuda is None or need is None:
        return need
    return need if vtuple(need) > vtuple(_oldest_cuda_running(stack.kb, base_cuda)) else None


def requirement(stack: Stack) -> str | None:
    """The image's NVIDIA_REQUIRE_CUDA value."""
    cuda = required_cuda(stack)
    return f"cuda>={cuda}" if cuda else None


__all__ = ["ToolkitFacts", "Verdict", "driver_cuda", "evaluate", "requirement", "required_cuda"]
