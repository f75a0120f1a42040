"""`RayExecutor`: the warm workers as Ray actors, on one machine or a cluster.

Each actor is what a pool worker is (`mutator.exec.worker`): it imports torch once, warms
Dynamo and forks a child per run, with the same isolation, limits and timeouts; it does
whole check tasks too. Nothing above this module knows which engine runs: the executor
has the pool's `submit` / `submit_check` / `health` / `wait_ready` / `close`.

What Ray's guidance on actor fault tolerance asks for: an actor holds only what its
constructor rebuilds (torch imported, Dynamo warmed, parsed programs cached), and the
driver keeps every fact it must not lose. Actors restart (`max_restarts`) after they die;
tasks are never retried (`max_task_retries=0`): a program that killed its actor would kill
the next one too, so its run comes back LOST (the fuzz loop keeps it in `lost/`) and the
restarted actor goes on with the next run. A task that outlives its deadline (the actor
itself wedged) gets its actor killed, as the pool kills a stuck worker.

Dispatch keeps one task per actor (an actor is one core) from a driver-side priority
queue, with the pool's `avoid` rule, and no thread per actor: an actor's reply completes a
future whose callback hands it its next task.
"""

from __future__ import annotations

import heapq
import itertools
import os
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from mutator.judge.check import NORMAL, CheckReply, CheckTask
from mutator.exec import ExecutorError, ReadyWorkers
from mutator.exec.protocol import CheckJob, Job, Ready
from mutator.core.observation import ExecResult, Mode, Outcome, RunConfig
from mutator.core.program import Program

REPLY_MARGIN = 30.0  # beyond a task's own deadline, before its actor is presumed stuck
START_TIMEOUT = 600.0  # actors import torch and warm up; on a cluster they may wait for a node
ACTOR_ENVIRONMENT = {"PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1"}  # as the pool's workers (sandbox)


class RayUnavailable(ExecutorError):
    """Ray is not installed or the cluster cannot be reached; the message says what to do."""


class WorkerActor:
    """The body of a Ray actor: a warm worker (made a Ray actor class in `RayExecutor`)."""

    def __init__(self, coverage: tuple[str, ...]) -> None:
        from mutator.exec import worker

        self._worker = worker
        self._ready = worker.warm_up(coverage)

    def ready(self) -> Ready:
        return self._ready

    def answer(self, message: Job | CheckJob) -> ExecResult | CheckReply:
        return self._worker.answer(message)


@dataclass
class _Actor:
    handle: Any
    pid: int | None = None
    state: str = "starting"  # starting, idle, busy, restarting, stopped
    task: _Pending | None = None
    since: float = 0.0  # when its task was sent


@dataclass(order=True)
class _Pending:
    priority: int
    order: int
    message: Job | CheckJob = field(compare=False)
    future: Future[Any] = field(compare=False)
    avoid: int | None = field(default=None, compare=False)


class RayExecutor(ReadyWorkers):
    """Run programs and check tasks in warm Ray actors: `submit`, `submit_check` as `WorkerPool`."""

    def __init__(self, *, address: str | None = None, workers: int | None = None, config: RunConfig | None = None,
                 coverage: tuple[str, ...] = (), init: dict[str, Any] | None = None,
                 python: str | None = None) -> None:
        """`address`: a cluster's ("ray://head:10001", "auto"); None starts a local instance
        (or joins the one RAY_ADDRESS names). `workers`: actors (default: the cluster's CPUs).
        `init`: more `ray.init` arguments (tests pass `num_cpus`). `python`: the actors'
        interpreter (Ray's `py_executable`; it needs Ray, torch and this package's
        dependencies, on every node), default the cluster's."""
        try:
            import ray
        except ImportError:
            raise RayUnavailable("--ray needs Ray: pip install 'mutator[ray]' (./mutate installs it when "
                                 "--ray is given)") from None
        self._ray = ray
        self.config = config or RunConfig()
        self.coverage = tuple(coverage)
        self._started_ray = False
        if not ray.is_initialized():
            options: dict[str, Any] = dict(include_dashboard=False, log_to_driver=False, logging_level="ERROR",
                                           runtime_env={"env_vars": dict(ACTOR_ENVIRONMENT)})
            if address is not None:  # a cluster's nodes may not have this package: ship it
                import mutator

                options["runtime_env"]["py_modules"] = [os.path.dirname(mutator.__file__)]
            try:
                ray.init(address=address, **{**options, **(init or {})})
            except (ConnectionError, RuntimeError, ValueError) as exc:
                raise RayUnavailable(f"cannot reach the Ray cluster at {address or 'a local instance'}: {exc}") \
                    from None
            self._started_ray = True
            _raylet_messages_to_stderr()
        self.size = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
        actor_class = ray.remote(num_cpus=1, max_restarts=-1, max_task_retries=0)(WorkerActor)
        if python is not None:
            actor_class = actor_class.options(runtime_env={"py_executable": python,
                                                           "env_vars": dict(ACTOR_ENVIRONMENT)})
        self._actors = [_Actor(actor_class.remote(self.coverage)) for _ in range(self.size)]
        self._queue: list[_Pending] = []
        self._ids = itertools.count()
        self._lock = threading.RLock()
        self._closed = False
        self.restarts = 0
        self.ready: list[Ready] = []
        self._settled = threading.Event()
        self._starting = len(self._actors)
        self._start_errors: list[str] = []
        for actor in self._actors:
            self._await_ready(actor)
        self._watchdog = threading.Thread(target=self._watch, name="mutator-ray-watchdog", daemon=True)
        self._watchdog.start()

    # -- the executor's interface ------------------------------------------------------------
    def submit(self, program: Program, mode: Mode, config: RunConfig | None = None, *,
               avoid: int | None = None, priority: int = NORMAL) -> Future[ExecResult]:
        return self._enqueue(Job(next(self._ids), program, mode, config or self.config), priority,
                             avoid if self.size > 1 else None)

    def submit_check(self, task: CheckTask, config: RunConfig | None = None, *,
                     priority: int = NORMAL) -> Future[CheckReply]:
        return self._enqueue(CheckJob(next(self._ids), task, config or self.config), priority, None)

    def run(self, program: Program, mode: Mode, config: RunConfig | None = None) -> ExecResult:
        return self.submit(program, mode, config).result()

    def health(self) -> list[str]:
        return [actor.state for actor in self._actors]

    def wait_ready(self, timeout: float = START_TIMEOUT) -> list[Ready]:
        if not self._settled.wait(timeout):
            raise RayUnavailable(f"Ray actors did not start within {timeout:g} s (does the cluster have "
                                 f"{self.size} free CPUs?)")
        if not self.ready:
            raise RayUnavailable("no Ray actor could start: " + (self._start_errors[0] if self._start_errors else ""))
        return list(self.ready)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            waiting, self._queue = self._queue, []
        for pending in waiting:
            pending.future.cancel()
        for actor in self._actors:
            actor.state = "stopped"
            try:
                self._ray.kill(actor.handle, no_restart=True)
            except Exception:  # noqa: BLE001 - an actor already gone
                pass
        if self._started_ray:
            self._ray.shutdown()

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- dispatch -------------------------------------------------------------------------------
    def _enqueue(self, message: Job | CheckJob, priority: int, avoid: int | None) -> Future[Any]:
        future: Future[Any] = Future()
        with self._lock:
            if self._closed:
                raise RayUnavailable("the Ray executor is closed")
            heapq.heappush(self._queue, _Pending(priority, message.job_id, message, future, avoid))
            self._dispatch()
        return future

    def _dispatch(self) -> None:
        """Give every idle actor the first queued task it may take (under the lock)."""
        for actor in self._actors:
            if actor.state != "idle" or not self._queue:
                continue
            skipped: list[_Pending] = []
            while self._queue:
                pending = heapq.heappop(self._queue)
                if pending.future.cancelled():
                    continue
                if pending.avoid is not None and pending.avoid == actor.pid and self._another_can_run(actor):
                    skipped.append(pending)
                    continue
                if self._send(actor, pending):
                    break
            for pending in skipped:
                heapq.heappush(self._queue, pending)

    def _another_can_run(self, actor: _Actor) -> bool:
        """Whether a run that avoids `actor` can wait for another (one working or restarting)."""
        return any(a is not actor and a.state != "stopped" for a in self._actors)

    def _send(self, actor: _Actor, pending: _Pending) -> bool:
        """Start `pending` on `actor`; False when its caller cancelled it meanwhile."""
        if not pending.future.set_running_or_notify_cancel():
            return False
        actor.state, actor.task, actor.since = "busy", pending, time.monotonic()
        reply = actor.handle.answer.remote(pending.message).future()
        reply.add_done_callback(lambda done: self._finished(actor, pending, done))
        return True

    def _finished(self, actor: _Actor, pending: _Pending, done: Future[Any]) -> None:
        ray = self._ray
        try:
            pending.future.set_result(done.result())
            with self._lock:
                actor.state, actor.task = "idle", None
                self._dispatch()
            return
        except ray.exceptions.RayTaskError as exc:  # our code raised in the actor: surface it to the caller
            pending.future.set_exception(exc)
            with self._lock:
                actor.state, actor.task = "idle", None
                self._dispatch()
            return
        except ray.exceptions.RayError as exc:  # the actor died (or Ray lost it): whatever ran is lost
            pending.future.set_result(_lost(pending.message, actor, exc))
        with self._lock:
            self.restarts += 1
            actor.state, actor.task = "restarting", None
        self._await_ready(actor)  # Ray restarts it; it takes work once warm again

    def _await_ready(self, actor: _Actor, *, since: float | None = None) -> None:
        """Ask `actor` for its Ready: at once when it starts; after a death, until Ray has
        restarted it (a call to a restarting actor can fail as unavailable: asked again every
        second, for at most START_TIMEOUT)."""
        reply = actor.handle.ready.remote().future()
        reply.add_done_callback(lambda done: self._actor_ready(actor, done, since))

    def _actor_ready(self, actor: _Actor, done: Future[Any], since: float | None) -> None:
        first = actor.pid is None
        try:
            ready: Ready = done.result()
        except Exception as exc:  # noqa: BLE001 - the actor could not start, or is not back yet
            since = since if since is not None else time.monotonic()
            if not first and not self._closed and time.monotonic() - since < START_TIMEOUT:
                timer = threading.Timer(1.0, self._await_ready, args=(actor,), kwargs=dict(since=since))
                timer.daemon = True
                timer.start()
                return
            with self._lock:
                actor.state = "stopped"
                self._start_errors.append(f"{type(exc).__name__}: {exc}"[:2000])
            self._settle(first)
            return
        with self._lock:
            actor.pid = ready.pid
            if first:
                self.ready.append(ready)
            if actor.state != "stopped":
                actor.state = "idle"
                self._dispatch()
        self._settle(first)

    def _settle(self, first: bool) -> None:
        if first:
            with self._lock:
                self._starting -= 1
                if self._starting == 0:
                    self._settled.set()

    def _watch(self) -> None:
        """Kill an actor whose task outlived its deadline (the actor, not the program, is stuck:
        the program's own timeout is enforced inside the actor)."""
        while not self._closed:
            time.sleep(1.0)
            now = time.monotonic()
            with self._lock:
                stuck = [a for a in self._actors if a.state == "busy" and a.task is not None
                         and now - a.since > _deadline(a.task.message) + REPLY_MARGIN]
            for actor in stuck:
                try:
                    self._ray.kill(actor.handle, no_restart=False)  # its task then fails as lost
                except Exception:  # noqa: BLE001 - already gone
                    pass


def _deadline(message: Job | CheckJob) -> float:
    return message.deadline


def _lost(message: Job | CheckJob, actor: _Actor, exc: BaseException) -> ExecResult | CheckReply:
    detail = f"the Ray actor (pid {actor.pid}) died during the run ({type(exc).__name__}); it was restarted"
    if isinstance(message, CheckJob):
        return CheckReply(None, lost=detail)
    return ExecResult(program=message.program.name, mode=message.mode, outcome=Outcome.LOST, detail=detail)


def _raylet_messages_to_stderr() -> None:
    """Ray prints the raylet's messages to the driver (an actor died: which the executor
    reports as a lost run) on stdout, where `mutate run --json` prints its JSON: send them
    to stderr. `print_to_stdstream` is Ray's internal printer; where a Ray version has
    none, its messages stay where Ray puts them."""
    import ray._private.worker as ray_worker

    printer = getattr(ray_worker, "print_to_stdstream", None)
    if printer is None or getattr(printer, "_to_stderr", False):
        return

    def to_stderr(data: dict[str, Any], *args: Any, **kwargs: Any) -> None:
        printer({**data, "is_err": True}, *args, **kwargs)

    to_stderr._to_stderr = True  # type: ignore[attr-defined]
    ray_worker.print_to_stdstream = to_stderr
