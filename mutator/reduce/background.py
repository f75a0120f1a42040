"""Reduction beside the fuzz loop: every new finding is reduced while the fuzzer goes on.

One thread reduces one finding at a time through the campaign's own pool, frontend bugs
before low-severity findings. Its runs are
throttled so that, averaged over the session, they take at most `max_share` of the
workers' time (the fuzzer's checks fill the rest). The thread writes only `reduced.py`
and `repro.py` of the finding it works on; the fuzz loop, which owns the findings,
collects finished reductions (`completed`) and records them, so the two never write the
same file.
"""

from __future__ import annotations

import itertools
import queue
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path

from mutator.core.cpu import Ledger
from mutator.judge.check import CheckReply, CheckTask, TaskRunner
from mutator.findings.finding import Finding
from mutator.core.observation import ExecResult, Mode, RunConfig
from mutator.exec.pool import URGENT
from mutator.core.program import Program
from mutator.reduce.reducer import ReductionStopped
from mutator.reduce.driver import ReductionReport, ReduceDriver

DEFAULT_SHARE = 0.25
REDUCTION_RUNS = "background reduction: runs"
REDUCTION_DRIVER = "background reduction: passes in the driver"


class ThrottledRunner:
    """A runner that submits to `runner` only while its runs have used at most `max_share`
    of `workers` workers' time since it was made."""

    def __init__(self, runner: TaskRunner, *, workers: int, max_share: float, stop: threading.Event,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._runner = runner
        self._capacity = max(1, workers) * max_share
        self._stop = stop
        self._clock = clock
        self._started = clock()
        self._used = 0.0
        self._lock = threading.Lock()
        self._cpu = Ledger()  # the workers' CPU on the reduction's runs, since the last `take_cpu`

    @property
    def used_seconds(self) -> float:
        return self._used

    def over_budget(self) -> bool:
        elapsed = max(1e-6, self._clock() - self._started)
        return self._used > elapsed * self._capacity

    def charge(self, seconds: float) -> None:
        """Time spent outside the pool on the reduction's behalf (running a repro.py)."""
        with self._lock:
            self._used += seconds

    def submit(self, program: Program, mode: Mode, config: RunConfig | None = None, *,
               avoid: int | None = None) -> Future[ExecResult]:
        self._wait_for_budget()
        # ahead of the loop's checks: the share is bounded here, so jumping the queue costs the
        # loop no more than that share, and the reduction is not bound by the queue's latency
        future = self._runner.submit(program, mode, config, avoid=avoid, priority=URGENT)
        future.add_done_callback(self._account)
        return future

    def submit_check(self, task: CheckTask, config: RunConfig | None = None, *,
                     priority: int = URGENT) -> Future[CheckReply]:
        self._wait_for_budget()
        future = self._runner.submit_check(task, config, priority=URGENT)
        future.add_done_callback(self._account)
        return future

    def _wait_for_budget(self) -> None:
        while self.over_budget() and not self._stop.is_set():
            time.sleep(0.05)

    def _account(self, future: Future[ExecResult] | Future[CheckReply]) -> None:
        if future.cancelled() or future.exception() is not None:
            return
        done = future.result()
        if isinstance(done, CheckReply):
            self.charge(done.result.seconds if done.result is not None else 0.0)
            used = sum(seconds for _, seconds in done.cpu_lines())
        else:
            self.charge(done.seconds)
            used = sum(seconds for _, seconds in done.cpu)
        with self._lock:
            self._cpu.add(REDUCTION_RUNS, used)

    def take_cpu(self) -> Ledger:
        """The workers' CPU on the reduction's runs since the last call."""
        with self._lock:
            taken, self._cpu = self._cpu, Ledger()
        return taken


class BackgroundReduction:
    def __init__(self, runner: TaskRunner, root: Path, *, workers: int, config: RunConfig, torch_version: str,
                 max_share: float = DEFAULT_SHARE, time_limit: float | None = 600.0,
                 python: str = sys.executable) -> None:
        self._root = root
        self._stop = threading.Event()
        self.runner = ThrottledRunner(runner, workers=workers, max_share=max_share, stop=self._stop)
        # candidates in batches as large as the pool: every worker takes one when the
        # throttle lets the reduction run
        self._driver = ReduceDriver(self.runner, workers=workers, config=config, torch_version=torch_version,
                                    time_limit=time_limit, ablate=False, python=python)
        # frontend bugs first, then low-severity findings; in the order they were found
        self._todo: queue.PriorityQueue[tuple[int, int, str, Finding | None]] = queue.PriorityQueue()
        self._order = itertools.count()
        self._done: queue.Queue[tuple[str, ReductionReport]] = queue.Queue()
        self._queued: set[str] = set()
        self._lock = threading.Lock()
        self._thread_cpu = 0.0  # this thread's CPU since the last `take_cpu`
        self.busy_with = ""
        self.reduced = 0
        self.failed = 0
        self._thread = threading.Thread(target=self._work, name="mutator-reduce", daemon=True)
        self._thread.start()

    def submit(self, finding: Finding) -> None:
        """Reduce `finding` (a copy of its record is taken now) when its turn comes."""
        if finding.directory in self._queued or finding.reduction:
            return
        self._queued.add(finding.directory)
        rank = 0 if finding.signature.verdict.is_frontend_bug else 1
        self._todo.put((rank, next(self._order), finding.directory, Finding.from_json(finding.as_json())))

    @property
    def pending(self) -> int:
        return self._todo.qsize() + (1 if self.busy_with else 0)

    def completed(self) -> list[tuple[str, ReductionReport]]:
        """Reductions finished since the last call: (finding directory, outcome)."""
        done = []
        while True:
            try:
                done.append(self._done.get_nowait())
            except queue.Empty:
                return done

    def close(self, timeout: float = 30.0) -> None:
        """Stop after the candidate in flight; unfinished reductions are redone next session."""
        self._stop.set()
        self._todo.put((-1, -1, "", None))
        self._thread.join(timeout)

    def take_cpu(self) -> Ledger:
        """CPU the reductions cost since the last call: the workers' on their runs, and this
        thread's own (the passes, parsing, verifying repro.py)."""
        taken = self.runner.take_cpu()
        with self._lock:
            taken.add(REDUCTION_DRIVER, self._thread_cpu)
            self._thread_cpu = 0.0
        return taken

    def _work(self) -> None:
        while not self._stop.is_set():
            _, _, directory, finding = self._todo.get()
            if finding is None:
                return
            began = time.thread_time()
            try:
                self._reduce(directory, finding)
            finally:
                with self._lock:
                    self._thread_cpu += time.thread_time() - began

    def _reduce(self, directory: str, finding: Finding) -> None:
        self.busy_with = directory
        try:
            outcome = self._driver.reduce_finding(self._root / directory, finding, stop=self._stop.is_set,
                                                   charge=self.runner.charge)
        except ReductionStopped:
            return  # the stop is set: the thread ends
        except Exception as exc:  # a reduction must never take the campaign down with it
            outcome = ReductionReport(directory, error=f"{type(exc).__name__}: {exc}")
        finally:
            self.busy_with = ""
        if outcome.error:
            self.failed += 1
        else:
            self.reduced += 1
        self._done.put((directory, outcome))
