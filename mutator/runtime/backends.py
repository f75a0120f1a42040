"""What a backend of the program's own writes: the compiler's output, not the program's state.

A backend callable the program defines (`def keep(gm, example_inputs): global LAST; LAST =
gm; return gm.forward`) runs only when Dynamo compiles, so what it stores where the program
can see it (the graph module, the example inputs, a count of graphs) exists only in the
compiled run: in the eager run the global keeps its first value. In the compiled run such a
backend is watched: each time Dynamo calls it, the program globals whose snapshot it changed
are noted, every later call's record names them (`CallRecord.compiler_made`), and the oracle
leaves them out of the comparison. Dynamo calls a backend while it compiles, between the
program's own steps, so what changes during that call is the backend's doing.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from mutator.core.values import structure_digest
from mutator.runtime.snapshot import snapshot

COMPILER_MADE = "<written by the program's backend>"  # what a compiled run's globals keep of such a global


class BackendWatch:
    """The program's own backends of one compiled run, and the globals they wrote."""

    def __init__(self, program_file: str, globals_view: Callable[[], dict[str, Any]]) -> None:
        self._program_file = program_file
        self._globals_view = globals_view
        self._watched: dict[int, tuple[Any, WatchedBackend]] = {}  # id -> (backend kept alive, its watcher)
        self.wrote: set[str] = set()

    def backend(self, backend: Any) -> Any:
        """`backend`, watched when the program defined it; one watcher per backend, so that
        Dynamo, which keys compiled code by backend, sees the same object every time."""
        if not self._programs_own(backend):
            return backend
        kept = self._watched.get(id(backend))
        if kept is None:
            kept = self._watched[id(backend)] = (backend, WatchedBackend(backend, self))
        return kept[1]

    def called(self, backend: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        before = self._digests()
        try:
            return backend(*args, **kwargs)
        finally:
            after = self._digests()
            self.wrote.update(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))

    def _digests(self) -> dict[str, str]:
        digests: dict[str, str] = {}
        for name, value in self._globals_view().items():
            try:
                digests[name] = structure_digest(snapshot(value), with_values=True)
            except Exception:  # our snapshot must never break the backend: an unreadable global is not watched
                continue
        return digests

    def _programs_own(self, backend: Any) -> bool:
        target = backend.func if isinstance(backend, functools.partial) else backend
        code = getattr(target, "__code__", None) or getattr(getattr(type(target), "__call__", None), "__code__", None)
        return code is not None and code.co_filename == self._program_file


class WatchedBackend:
    """A program's backend as Dynamo gets it: called through its watch, anything else read from it."""

    def __init__(self, backend: Any, watch: BackendWatch) -> None:
        self.__dict__["_backend"], self.__dict__["_watch"] = backend, watch

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__dict__["_watch"].called(self.__dict__["_backend"], args, kwargs)

    def __getattr__(self, name: str) -> Any:  # __name__, compiler_name, reset, ...: the backend's own
        return getattr(self.__dict__["_backend"], name)
