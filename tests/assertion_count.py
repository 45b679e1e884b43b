"""Every test item must check something (issue #34): a test that passes without executing one assertion fails.

The counter counts, per item, during its call phase (the test function and the helpers it calls; a fixture's
checks are setup, not the test's):

* every ``assert`` statement that passed, through pytest's ``pytest_assertion_pass`` hook (the
  ``enable_assertion_pass_hook`` ini option in pyproject.toml; pytest's assertion rewriting reaches the test modules,
  the conftest files and, registered in tests/conftest.py, every helper module under the ``tests`` package);
* every ``pytest.raises`` / ``pytest.RaisesGroup`` block that caught what it expected, and every ``pytest.warns`` /
  ``pytest.deprecated_call`` block that saw its warning: checks that are not ``assert`` statements.

An item whose call phase ends without an exception and with a count of zero fails with "asserted nothing". A skipped
or failing item is left alone. ``ENVGEN_TEST_ASSERTION_REPORT=FILE`` also writes ``nodeid<TAB>count`` per item that
ran its call phase (the minimum is the figure issue #34's closing note asks for).
"""

from __future__ import annotations

import os
import types
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from _pytest.recwarn import WarningsChecker

REPORT_ENV = "ENVGEN_TEST_ASSERTION_REPORT"
COUNT = pytest.StashKey[int]()
# Names that only pytest's rewritten assertions reference: the failure branch of every assert, and the pass branch
# that exists only when the module was rewritten with enable_assertion_pass_hook on.
REWRITTEN_ASSERT = "_format_explanation"
PASS_HOOK_CALL = "_call_assertion_pass"


class AssertionCounter:
    """A pytest plugin (registered by tests/conftest.py) that fails every item asserting nothing."""

    def __init__(self, report: Path | None) -> None:
        self._current: pytest.Item | None = None
        self._counts: dict[str, int] = {}
        self._report = report
        self._patches = pytest.MonkeyPatch()

    # -- the checks that are not assert statements ----------------------------------------------------------------
    def install(self) -> None:
        """Count the context managers' successful exits (pytest.raises, RaisesGroup, warns)."""
        for cls in _checking_context_managers():
            self._patches.setattr(cls, "__exit__", self._counting_exit(cls.__exit__))

    def uninstall(self) -> None:
        self._patches.undo()

    def _counting_exit(self, original: Callable[..., Any]) -> Callable[..., Any]:
        counter = self

        def __exit__(self: object, exc_type: Any, exc_val: Any, exc_tb: Any) -> Any:
            __tracebackhide__ = True
            handled = original(self, exc_type, exc_val, exc_tb)
            # raises: True once the expected exception was caught; warns: None once the warning was seen (a miss
            # raises from inside the original, and a propagated unrelated exception makes raises return False).
            if handled or (handled is None and exc_type is None):
                counter.checked()
            return handled

        return __exit__

    def checked(self) -> None:
        if self._current is not None:
            self._current.stash[COUNT] = self._current.stash.get(COUNT, 0) + 1

    # -- hooks --------------------------------------------------------------------------------------------------
    def pytest_assertion_pass(self, item: pytest.Item, lineno: int, orig: str, expl: str) -> None:
        item.stash[COUNT] = item.stash.get(COUNT, 0) + 1

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        stale = sorted({str(module.__file__) for module in _modules(items) if _rewritten_without_pass_hook(module)})
        if stale:
            raise pytest.UsageError(
                "assertion counter: these modules were loaded from a cached rewrite made without "
                "enable_assertion_pass_hook, so their passing asserts cannot be counted: " + ", ".join(stale)
                + "; delete the stale caches (find tests -name '*-pytest-*.pyc' -delete) and run again")

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object]:
        self._current = item
        item.stash[COUNT] = 0
        try:
            return (yield)
        finally:
            self._current = None

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, object]:
        item.stash[COUNT] = 0  # a fixture's checks (setup) are not the test's: only the call phase counts
        result = yield  # an exception (failure, skip, xfail) propagates from here untouched
        count = item.stash.get(COUNT, 0)
        self._counts[item.nodeid] = count
        if count == 0:
            pytest.fail(f"{item.nodeid} asserted nothing: no assert statement passed and no pytest.raises/warns "
                        "block caught what it expected (tests/assertion_count.py; issue #34)", pytrace=False)
        return result

    def pytest_sessionfinish(self) -> None:
        if self._report is not None and self._counts:
            self._report.write_text("".join(f"{nodeid}\t{count}\n" for nodeid, count in sorted(self._counts.items())),
                                    encoding="utf-8")

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self._counts:
            nodeid = min(self._counts, key=lambda key: self._counts[key])
            terminalreporter.write_line(f"assertions per item: minimum {self._counts[nodeid]} ({nodeid}), "
                                        f"{len(self._counts)} items counted")


def configure(config: pytest.Config) -> None:
    """Register the counter; refuse a run where pytest cannot see passing asserts."""
    if not config.getini("enable_assertion_pass_hook"):
        raise pytest.UsageError("assertion counter: enable_assertion_pass_hook must be true (pyproject.toml)")
    if config.getoption("assertmode") != "rewrite":
        raise pytest.UsageError("assertion counter: the suite needs pytest's assertion rewriting (--assert=rewrite)")
    report = os.environ.get(REPORT_ENV)
    counter = AssertionCounter(Path(report) if report else None)
    counter.install()
    config.pluginmanager.register(counter, "envgen-assertion-counter")
    config.add_cleanup(counter.uninstall)


def _checking_context_managers() -> list[type]:
    """pytest.raises' context manager (RaisesExc and RaisesGroup since pytest 8.4, RaisesContext before) and
    pytest.warns' (WarningsChecker)."""
    import importlib

    found = [getattr(pytest, name, None) for name in ("RaisesExc", "RaisesGroup")]
    if not found[0]:  # pytest < 8.4
        found.append(getattr(importlib.import_module("_pytest.python_api"), "RaisesContext", None))
    return [cls for cls in found if isinstance(cls, type)] + [WarningsChecker]


def _modules(items: list[pytest.Item]) -> Iterator[types.ModuleType]:
    seen: set[int] = set()
    for item in items:
        module = getattr(item, "module", None)
        if isinstance(module, types.ModuleType) and id(module) not in seen:
            seen.add(id(module))
            yield module


def _rewritten_without_pass_hook(module: types.ModuleType) -> bool:
    if "@pytest_ar" not in vars(module):
        return False
    names: set[str] = set()
    for code in _code_objects(vars(module)):
        if code.co_filename == module.__file__:  # not a decorator's wrapper from another package
            names.update(code.co_names)
    return REWRITTEN_ASSERT in names and PASS_HOOK_CALL not in names


def _code_objects(namespace: dict[str, Any]) -> Iterator[types.CodeType]:
    stack = [value.__code__ for value in _functions(namespace)]
    while stack:
        code = stack.pop()
        yield code
        stack.extend(const for const in code.co_consts if isinstance(const, types.CodeType))


def _functions(namespace: dict[str, Any]) -> Iterator[types.FunctionType]:
    for value in namespace.values():
        if isinstance(value, types.FunctionType):
            yield value
        elif isinstance(value, type):
            yield from (member for member in vars(value).values() if isinstance(member, types.FunctionType))
