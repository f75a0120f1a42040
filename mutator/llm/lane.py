"""The LLM's lane beside the fuzz loop: repairs and LLM mutants, never in the loop's way.

An LLM answer takes seconds; a check takes a fraction of one. The loop hands work to this
lane (`submit`) only while it has room, polls finished work (`completed`) on every turn,
and turns each result into a job like any mutant's. Nothing here touches the campaign's
state: the loop owns it. Work still in flight when the campaign stops is dropped; its
answers are in the LLM's disk cache, so a resumed campaign gets them without paying.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mutator.llm.client import LLM


@dataclass(frozen=True, slots=True)
class Done:
    kind: str  # "repair" or "mutation"
    context: Any  # what the loop handed in with the work (the job it came from)
    result: Any  # what the work returned (a RepairResult, a Mutant or None)
    error: str = ""  # a bug of ours in the work: counted, never raised


class LLMLane:
    def __init__(self, llm: LLM, *, queued: int | None = None) -> None:
        self.llm = llm
        self._room = queued or 2 * llm.config.max_inflight  # at most this many waiting or in flight
        # daemon threads, not an executor's: a request in flight when the campaign ends must
        # not keep the process alive for its timeout
        self._work: queue.Queue[tuple[str, Callable[[], Any], Any] | None] = queue.Queue()
        self._done: queue.Queue[Done] = queue.Queue()
        self._threads = [threading.Thread(target=self._serve, name=f"mutator-llm-{i}", daemon=True)
                         for i in range(llm.config.max_inflight)]
        for thread in self._threads:
            thread.start()
        self._lock = threading.Lock()
        self._pending = 0
        self._closed = False

    @property
    def pending(self) -> int:
        return self._pending

    def has_room(self) -> bool:
        return not self._closed and self._pending < self._room

    def submit(self, kind: str, work: Callable[[], Any], context: Any) -> bool:
        """Run `work` beside the loop; False (nothing queued) when the lane is full."""
        with self._lock:
            if not self.has_room():
                return False
            self._pending += 1
        self._work.put((kind, work, context))
        return True

    def _serve(self) -> None:
        while True:
            item = self._work.get()
            if item is None or self._closed:
                return
            self._run(*item)

    def _run(self, kind: str, work: Callable[[], Any], context: Any) -> None:
        try:
            done = Done(kind, context, work())
        except Exception as exc:  # the work's own bug: one result lost, never the loop
            done = Done(kind, context, None, f"{type(exc).__name__}: {exc}"[:300])
        with self._lock:
            self._pending -= 1
        self._done.put(done)

    def completed(self) -> list[Done]:
        found = []
        while True:
            try:
                found.append(self._done.get_nowait())
            except queue.Empty:
                return found

    def close(self) -> None:
        """Drop what has not started; what is in flight ends on its own (its thread is a daemon's)."""
        self._closed = True
        for _ in self._threads:
            self._work.put(None)
