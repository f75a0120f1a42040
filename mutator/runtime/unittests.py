"""How each unittest test of a program ends: unittest itself only prints it (to stderr).

A program that runs `unittest.main()` (or torch's `run_tests()`) is judged test by test,
so the runtime records every test's outcome, its exception, and which test was running
when each compiled call was made (`Session.current_test`).
"""

from __future__ import annotations

import contextlib
import unittest
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from mutator.core.observation import TestOutcome
from mutator.runtime.errors import exception_info
from mutator.runtime.own_checks import ProgramSource

_STATUSES = {  # unittest.TestResult method -> how the test ended, and the position of its error
    "addSuccess": ("pass", None), "addFailure": ("fail", 1), "addError": ("error", 1), "addSkip": ("skip", None),
    "addExpectedFailure": ("xfail", None), "addUnexpectedSuccess": ("xpass", None),
}


class TestLog(Protocol):
    """Where a run's tests are recorded (the run's `Session`)."""

    program: ProgramSource | None
    current_test: str  # the id of the test running now ("" between tests)
    tests: list[TestOutcome]

    def escaped_from(self, exc: BaseException) -> int | None:
        """The compiled call `exc` escaped from, if one did."""


class TestRecorder:
    """Patches `unittest.TestResult` for the length of a run; appends to `session.tests`."""

    def __init__(self, session: TestLog) -> None:
        self._session = session

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        result_type = unittest.TestResult
        originals = {name: result_type.__dict__[name] for name in (*_STATUSES, "addSubTest", "startTest", "stopTest")}
        session = self._session

        def start(result: Any, test: Any) -> Any:
            session.current_test = test_id(test)
            return originals["startTest"](result, test)

        def stop(result: Any, test: Any) -> Any:
            session.current_test = ""
            return originals["stopTest"](result, test)

        def ended(name: str) -> Callable[..., Any]:
            status, err_at = _STATUSES[name]

            def add(result: Any, test: Any, *rest: Any) -> Any:
                self._record(test, status, rest[err_at - 1] if err_at else None)
                return originals[name](result, test, *rest)
            return add

        def add_subtest(result: Any, test: Any, subtest: Any, err: Any) -> Any:
            if err is not None:
                self._record(subtest, "fail" if issubclass(err[0], test.failureException) else "error", err)
            return originals["addSubTest"](result, test, subtest, err)

        patches: dict[str, Any] = {name: ended(name) for name in _STATUSES}
        patches.update(addSubTest=add_subtest, startTest=start, stopTest=stop)
        for name, patch in patches.items():
            setattr(result_type, name, patch)
        try:
            yield
        finally:
            for name, original in originals.items():
                setattr(result_type, name, original)

    def _record(self, test: Any, status: str, err: Any) -> None:
        exc = err[1] if isinstance(err, tuple) and len(err) == 3 and isinstance(err[1], BaseException) else None
        session = self._session
        info = exception_info(exc, session.program) if exc is not None else None
        session.tests.append(TestOutcome(test_id(test), status, info, session.escaped_from(exc) if exc else None))


def test_id(test: Any) -> str:
    """"Tests.test_add" for __main__.Tests.test_add (a subtest's id carries its parameters)."""
    try:
        return str(test.id()).split(".", 1)[-1]
    except Exception:  # a program's own id() override may raise anything
        return "?"
