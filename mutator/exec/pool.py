"""`WorkerPool`: warm worker processes on this machine that run programs in isolation
(docs/design.md, "Execution"), the local executor.

The parent never imports torch. Each worker is `python -m mutator.exec.worker`; a thread per
worker feeds it runs and check tasks from one queue. A worker that dies or wedges is
replaced, and the run it had becomes an `ExecResult` with outcome LOST (a check task, a
`CheckReply` saying it was lost): nothing a program does raises here.
"""

from __future__ import annotations

import itertools
import os
import queue
import select
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from typing import IO

from mutator.judge.check import NORMAL, CheckReply, CheckTask
from mutator.exec import ExecutorError, ReadyWorkers, sandbox, wire
from mutator.exec.interpreter import InterpreterError, check_interpreter, package_root
from mutator.exec.protocol import CheckJob, Done, Job, Ready, Stop
from mutator.core.observation import ExecResult, Mode, Outcome, RunConfig
from mutator.core.program import Program

START_TIMEOUT = 300.0  # importing torch and warming up on a loaded machine
REPLY_MARGIN = 30.0  # beyond the run's own timeout, before the worker itself is presumed stuck


class PoolError(ExecutorError):
    """The pool cannot work at all (workers fail to start); not about any program."""


@dataclass
class _Pending:
    job: Job | CheckJob
    future: Future[ExecResult] | Future[CheckReply]
    avoid: int | None = None  # a worker's pid that should not take this job


URGENT = -1  # `submit(priority=)`: ahead of every ordinary run (a throttled background reduction)
_STOP = sys.maxsize  # the workers' stop marker: behind every queued run


class WorkerPool(ReadyWorkers):
    """Run programs in warm, isolated workers: `pool.run(program, mode) -> ExecResult`.

    Thread-safe; `submit` returns a Future so callers can run eager and compiled at once.
    """

    def __init__(self, *, workers: int | None = None, config: RunConfig | None = None,
                 coverage: tuple[str, ...] = (), python: str = sys.executable) -> None:
        """`coverage`: paths under site-packages ("torch/_dynamo") whose arcs compiled runs record."""
        self.config = config or RunConfig()
        self.coverage = tuple(coverage)
        self.size = workers or os.cpu_count() or 1
        self._python = python
        # One snapshot for every worker, restarts included: eager and compiled runs (different
        # workers) must see the same environment, whatever the parent's changed since.
        self.environment = _worker_environment()
        try:
            check_interpreter(python, self.environment)  # another interpreter: what it lacks, in a line, now
        except InterpreterError as exc:
            raise PoolError(str(exc)) from None
        # (priority, order, run): lower priorities first, first come first served within one
        self._queue: queue.PriorityQueue[tuple[int, int, _Pending | None]] = queue.PriorityQueue()
        self._ids = itertools.count()
        self._closed = False
        self.restarts = 0
        self.ready: list[Ready] = []
        self._lock = threading.Lock()
        self._handles = [_Worker(self) for _ in range(self.size)]
        self._settled = threading.Semaphore(0)  # released once per worker that started or failed to
        self._start_errors: list[PoolError] = []
        self._threads = [
            threading.Thread(target=self._serve, args=(h,), name=f"mutator-worker-{i}", daemon=True)
            for i, h in enumerate(self._handles)
        ]
        for thread in self._threads:
            thread.start()

    def submit(self, program: Program, mode: Mode, config: RunConfig | None = None, *,
               avoid: int | None = None, priority: int = NORMAL) -> Future[ExecResult]:
        """Queue one run; `config` overrides the pool's for this run only. `avoid`: the pid of a
        worker (`ExecResult.worker`) that should not take it, when another one can. `priority`:
        lower runs first (`URGENT` jumps the queue: for callers that bound their own share)."""
        if self._closed:
            raise PoolError("the pool is closed")
        future: Future[ExecResult] = Future()
        job = Job(next(self._ids), program, mode, config or self.config)
        self._queue.put((priority, job.job_id, _Pending(job, future, avoid if self.size > 1 else None)))
        return future

    def submit_check(self, task: CheckTask, config: RunConfig | None = None, *,
                     priority: int = NORMAL) -> Future[CheckReply]:
        """Queue one check task (`mutator.judge.check.first_pass`), done whole by one worker."""
        if self._closed:
            raise PoolError("the pool is closed")
        future: Future[CheckReply] = Future()
        job = CheckJob(next(self._ids), task, config or self.config)
        self._queue.put((priority, job.job_id, _Pending(job, future)))
        return future

    def run(self, program: Program, mode: Mode, config: RunConfig | None = None) -> ExecResult:
        return self.submit(program, mode, config).result()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for _ in self._threads:
            self._queue.put((_STOP, next(self._ids), None))
        for thread in self._threads:
            thread.join(timeout=10)
        for handle in self._handles:
            handle.stop()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _another_can_run(self, handle: _Worker) -> bool:
        """Whether a run that avoids `handle` can wait for another worker: one that works, or is
        warming up again after it died (a confirmation's second eager run must not take the
        first's worker because the other is restarting)."""
        return any(h is not handle and h.state != "stopped" for h in self._handles)

    def health(self) -> list[str]:
        """One word per worker: starting, idle, busy, restarting, stopped."""
        return [h.state for h in self._handles]

    def wait_ready(self, timeout: float = START_TIMEOUT) -> list[Ready]:
        """Block until every worker has warmed up (or failed to); raises if none could start."""
        for _ in self._handles:
            if not self._settled.acquire(timeout=timeout):
                raise PoolError(f"workers did not start within {timeout:g} s")
        for _ in self._handles:
            self._settled.release()  # later callers return at once
        if len(self._start_errors) == len(self._handles):
            raise self._start_errors[0]
        return list(self.ready)

    def _serve(self, handle: _Worker) -> None:
        try:
            handle.start()  # start warming up at once, not at the first job
        except PoolError as exc:
            self._start_errors.append(exc)
        finally:
            self._settled.release()
        while True:
            if handle.state == "restarting" and not self._closed:
                # the replacement of a worker that died warms up before it takes a job, so that
                # no run waits for a warm-up while another worker is free
                try:
                    handle.start()
                except PoolError:
                    pass  # tried again by the next job, whose caller gets the error
            pending = self._next_for(handle)
            if pending is None:
                # from this thread: the worker dies with the thread that started it
                # (sandbox.die_with_parent), so it is stopped in order before the thread ends
                handle.stop()
                return
            if not pending.future.set_running_or_notify_cancel():
                continue
            try:
                pending.future.set_result(handle.execute(pending.job))
            except BaseException as exc:  # a bug of ours or no worker at all: surface it to the caller
                pending.future.set_exception(exc)

    def _next_for(self, handle: _Worker) -> _Pending | None:
        """The first queued run `handle` may take (None: stop). A run that avoids it goes back
        in its place for another worker, and `handle` takes the one behind it, if any."""
        while True:
            item = self._queue.get()
            if not self._avoids(item[2], handle):
                return item[2]
            behind = self._get_nowait()
            self._queue.put(item)
            if behind is not None and not self._avoids(behind[2], handle):
                return behind[2]
            if behind is not None:
                self._queue.put(behind)
            time.sleep(0.002)

    def _avoids(self, pending: _Pending | None, handle: _Worker) -> bool:
        return (pending is not None and pending.avoid is not None and pending.avoid == handle.pid
                and self._another_can_run(handle))

    def _get_nowait(self) -> tuple[int, int, _Pending | None] | None:
        try:
            return self._queue.get_nowait()
        except queue.Empty:
            return None


class _Worker:
    """One worker process and the pipes to it; restarted on demand."""

    def __init__(self, pool: WorkerPool) -> None:
        self._pool = pool
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self.state = "starting"
        self.starts = 0

    def start(self) -> None:
        if self._proc is None:
            self._start()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def execute(self, job: Job | CheckJob) -> ExecResult | CheckReply:
        if self._proc is None:
            self._start()
        assert self._proc is not None and self._proc.stdin is not None and self._proc.stdout is not None
        self.state = "busy"
        started = time.monotonic()
        try:
            wire.send(self._proc.stdin, job)
            reply = self._receive(job.deadline + REPLY_MARGIN)
        except (wire.WireError, OSError, TimeoutError) as exc:
            detail = self._failure(exc)
            self._kill()
            with self._pool._lock:
                self._pool.restarts += 1
            if isinstance(job, CheckJob):
                return CheckReply(None, lost=detail)
            return ExecResult(program=job.program.name, mode=job.mode, outcome=Outcome.LOST,
                              seconds=round(time.monotonic() - started, 4), detail=detail)
        self.state = "idle"
        if not isinstance(reply, Done) or reply.job_id != job.job_id:
            self._kill()
            raise PoolError(f"worker answered job {job.job_id} with {reply!r}")
        return reply.result

    def _start(self) -> None:
        self.state = "starting"
        self._log = tempfile.TemporaryFile(prefix="mutator-worker-")
        self._proc = subprocess.Popen(
            [self._pool._python, "-m", "mutator.exec.worker",
             *(["--coverage", ",".join(self._pool.coverage)] if self._pool.coverage else [])],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=self._pool.environment,
            start_new_session=True,  # Ctrl-C reaches the parent, which stops workers in order
            bufsize=0,
        )
        self.starts += 1
        try:
            ready = self._receive(START_TIMEOUT)
        except (wire.WireError, OSError, TimeoutError) as exc:
            log = self._log_tail()
            self._kill()
            raise PoolError(f"a worker failed to start ({exc}):\n{log}") from None
        if not isinstance(ready, Ready):
            self._kill()
            raise PoolError(f"a worker sent {ready!r} instead of Ready")
        with self._pool._lock:
            self._pool.ready.append(ready)
        self.state = "idle"

    def _receive(self, timeout: float) -> object:
        assert self._proc is not None and self._proc.stdout is not None
        ready, _, _ = select.select([self._proc.stdout], [], [], timeout)
        if not ready:
            raise TimeoutError(f"no answer within {timeout:g} s")
        return wire.recv(self._proc.stdout)

    def _failure(self, exc: BaseException) -> str:
        assert self._proc is not None
        code = self._proc.poll()
        if isinstance(exc, TimeoutError):
            return f"the worker stopped answering ({exc}); it was replaced"
        return f"the worker died (exit status {code}) during the run; it was replaced"

    def _log_tail(self) -> str:
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read()[-4000:].decode("utf-8", "replace")

    def _kill(self) -> None:
        self.state = "restarting"
        if self._proc is not None:
            try:
                os.killpg(self._proc.pid, 9)
            except (ProcessLookupError, PermissionError):
                pass
            self._proc.wait()
            for stream in (self._proc.stdin, self._proc.stdout):
                if stream is not None:
                    stream.close()
        if self._log is not None:
            self._log.close()
        self._proc = None
        self._log = None

    def stop(self) -> None:
        if self._proc is not None and self._proc.poll() is None and self._proc.stdin is not None:
            try:
                wire.send(self._proc.stdin, Stop())
                self._proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired, wire.WireError):
                pass
        self._kill()
        self.state = "stopped"


def _worker_environment() -> dict[str, str]:
    """The scrubbed environment, able to import this very copy of the package."""
    env = sandbox.scrubbed_environment()
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root(), env.get("PYTHONPATH", "")) if p)
    return env
