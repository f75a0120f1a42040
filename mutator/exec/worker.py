"""A warm worker process: imports torch once, warms Dynamo, then forks one child per run.

Started by `WorkerPool` as `python -m mutator.exec.worker` (it speaks `mutator.exec.protocol`
frames on its stdin/stdout), or inside a Ray actor (`mutator.exec.ray`): either way
`answer` does the work. Every run happens in a forked child in its own process group, with
a scrubbed environment, a temporary working directory, memory and CPU limits and
faulthandler; the worker turns however the child ends into an `ExecResult`. A check task
is done whole here (`mutator.judge.check.first_pass`): the mutant is built in this process,
whose parsed programs stay cached from task to task, and its two runs are children.
"""

from __future__ import annotations

import dataclasses
import faulthandler
import gc
import math
import os
import select
import shutil
import signal
import sys
import tempfile
import time
import traceback
from typing import Any

from mutator.core import cpu
from mutator.core.build import Build
from mutator.exec import sandbox, wire
from mutator.core.observation import CallRecord, ExecResult, Mode, Observation, Outcome
from mutator.core.program import Program
from mutator.judge.check import CheckReply, CheckTask, first_pass, report_coverage
from mutator.core.features import DYNAMO_SIGNALS, WorkerCoverage
from mutator.exec.protocol import CheckJob, Done, Job, Ready, Stop
from mutator.core.values import OpaqueValue

MAX_REPORT_BYTES = 256 << 20
STDERR_TAIL = 4096
KILL_GRACE = 2.0  # seconds to wait for the pipe to close after killing a timed-out child
_INTERNAL_FAILURE = 70  # exit status of a child whose runtime (not program) failed
_ALLOCATION_FAILURE = ("can't allocate memory", "not enough memory", "DefaultCPUAllocator")


_tracer = None  # a runtime.tracing.Tracer when the pool asked for coverage (built once, in warm_up)
_signals = None  # a DynamoSignals when the pool asked for them among its coverage sources (likewise)
_builder = None  # the MutantBuilder of check tasks (built once, in warm_up)
_oracle = None
_coverage: tuple[str, WorkerCoverage] = ("", WorkerCoverage())  # what it told which coverage map
_readable: tuple[str, ...] = ()  # where a confined run may read (made in warm_up, before the heap freezes)
_layer = ""  # the best confinement this machine offers (see _offered)
_tasks_cgroup: str | None = None  # the pids cgroup this worker and its runs are in, where one can be made (warm_up)
WORKER_CONTEXTS = 256  # parsed programs a worker keeps for the mutants it builds (about 0.3 MB each)


def main(argv: list[str] | None = None) -> None:
    # first of all, before the seconds of importing torch and warming up: a worker whose
    # driver dies (kill -9 included) at any stage is killed with it, and with it each run's
    # child (which asks the same of the worker). Reading the closed pipe would tell only once
    # the warm-up or the current run is over.
    sandbox.die_with_parent()
    if _hung_up(0):  # the driver died before we asked
        return
    args = (sys.argv[1:] if argv is None else argv)
    includes = tuple(args[args.index("--coverage") + 1].split(",")) if "--coverage" in args else ()
    proto_in = os.fdopen(os.dup(0), "rb", buffering=0)
    proto_out = os.fdopen(os.dup(1), "wb", buffering=0)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(2, 1)  # stray prints from torch must not corrupt the protocol
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when we stop
    wire.send(proto_out, warm_up(includes))
    private_fds = (proto_in.fileno(), proto_out.fileno())
    messages = 0.0  # CPU spent on messages (the last reply sent, this job received): told with this reply
    try:
        while True:
            began = time.process_time()
            try:
                message = wire.recv(proto_in)
            except wire.WireError:
                return  # the parent is gone
            if isinstance(message, Stop):
                return
            messages += time.process_time() - began
            reply = _with_messages(answer(message, private_fds), messages)
            began = time.process_time()
            wire.send(proto_out, Done(message.job_id, reply))
            messages = time.process_time() - began
    finally:
        _reap_exiting()
        sandbox.remove_task_cgroup(_tasks_cgroup)


def _with_messages(reply: ExecResult | CheckReply, seconds: float) -> ExecResult | CheckReply:
    """The reply with the worker's CPU on messages added to its stages (`mutator.core.cpu.IPC`)."""
    return dataclasses.replace(reply, cpu=(*reply.cpu, (cpu.IPC, seconds)))


def _hung_up(fd: int) -> bool:
    """Whether the writing end of pipe `fd` is closed: the driver that held it is gone."""
    poller = select.poll()
    poller.register(fd, 0)  # a hang-up is reported whatever is asked for
    return any(events & (select.POLLHUP | select.POLLERR) for _, events in poller.poll(0))


def answer(message: Job | CheckJob, private_fds: tuple[int, ...] = ()) -> ExecResult | CheckReply:
    """The result of one run, or the reply to one check task; never raises for a program."""
    if isinstance(message, Job):
        return run_isolated(message, private_fds)
    assert _builder is not None and _oracle is not None, "warm_up() first"
    job_id, config = message.job_id, message.config

    def runs(program):  # type: ignore[no-untyped-def]
        return [run_isolated(Job(job_id, program, mode, config), private_fds) for mode in (Mode.EAGER, Mode.COMPILED)]

    reply = first_pass(message.task, runs, oracle=_oracle, builder=_builder, configuration=config.configuration)
    return _reported(message.task, reply)


def _reported(task: CheckTask, reply: CheckReply) -> CheckReply:
    """The reply with its features reported to the coverage map the task names (see
    `mutator.judge.check.report_coverage`), relative to what this worker told that map before."""
    global _coverage
    if not task.coverage_key:
        return reply
    if _coverage[0] != task.coverage_key:  # another campaign (or loop) on this worker now
        _coverage = (task.coverage_key, WorkerCoverage())
    return report_coverage(task, reply, _coverage[1])


def warm_up(coverage_includes: tuple[str, ...] = ()) -> Ready:
    """Import torch and run the warm-up programs in this process, then freeze the heap.

    With `coverage_includes` (paths under site-packages, like "torch/_dynamo"), also build
    the arc tracer and record the arcs the warm-up programs cover as its baseline; with
    `DYNAMO_SIGNALS` among them, install the recorder of Dynamo's own signals.
    """
    global _tracer, _signals, _builder, _oracle, _readable, _tasks_cgroup, _harness_pending
    started = time.perf_counter()
    import torch

    torch.set_num_threads(1)  # forked children of a process with an OpenMP pool hang
    torch.set_num_interop_threads(1)
    import torch._inductor.config as inductor_config
    from torch._dynamo import utils as dynamo_utils

    from mutator.core.observation import RunConfig
    from mutator.runtime.execute import deterministic_memory, run_program
    from mutator.runtime import lean
    from mutator.runtime.ownership import remember_library_objects
    from mutator.runtime.warmup import WARMUP_PROGRAMS

    inductor_config.compile_threads = 1
    deterministic_memory()
    lean.skip_guard_latency_profile()
    dynamo_utils.set_compilation_metrics_limit(1_000_000)
    for program in WARMUP_PROGRAMS:
        for mode in (Mode.EAGER, Mode.COMPILED):
            run_program(program, mode, RunConfig(), emit=lambda _: None)
            torch._dynamo.reset()
    if DYNAMO_SIGNALS in coverage_includes:
        from mutator.runtime.signals import DynamoSignals

        _signals = DynamoSignals()
    coverage_includes = tuple(path for path in coverage_includes if path != DYNAMO_SIGNALS)
    if coverage_includes:
        from mutator.runtime.tracing import arc_tracer

        _tracer = arc_tracer(coverage_includes)
        baseline: frozenset[int] = frozenset()
        for program in WARMUP_PROGRAMS:
            _tracer.start()
            run_program(program, Mode.COMPILED, RunConfig(), emit=lambda _: None)
            baseline |= _tracer.stop()
            torch._dynamo.reset()
        _tracer.set_baseline(baseline)
    from mutator.mutation.mutator import MutantBuilder
    from mutator.mutation.registry import all_operators
    from mutator.judge.oracle import Oracle

    _builder, _oracle = MutantBuilder(all_operators(), cache=WORKER_CONTEXTS), Oracle()
    dynamo_utils.counters.clear()
    dynamo_utils.clear_compilation_metrics()
    remember_library_objects()  # after warm-up: the objects torch made while warming are its own
    _harness_pending = True  # preloaded before the first run of a program that imports it (_settle)
    _readable = sandbox.readable_roots()
    _tasks_cgroup = sandbox.task_cgroup(sandbox.MORE_PROCESSES)
    sandbox.become_subreaper()  # what escapes a run's process group comes back to us (_reap)
    gc.collect()
    gc.freeze()  # children then do not touch (and copy) the warm heap when they collect
    from mutator.runtime import configs

    return Ready(pid=os.getpid(), build=Build.of_torch(torch), warmup_seconds=time.perf_counter() - started,
                 sandbox=_offered(), notes=unsupported(), configurations=configs.available(),
                 tracer=_tracer.core if _tracer is not None else "")


def unsupported() -> tuple[str, ...]:
    """The runtime's hooks into Dynamo that this torch does not offer (each then does nothing,
    or fails, on this release): said when the worker is ready instead of silently."""
    from mutator.runtime import configs, perturb, session

    return (*perturb.unavailable(), *session.unavailable(), *configs.unavailable())


def _offered() -> str:
    global _layer
    if not _layer:
        _layer = sandbox.available()
    return _layer


def run_isolated(job: Job, private_fds: tuple[int, ...] = ()) -> ExecResult:
    """Run `job` in a forked child and describe how it ended; never raises for the program."""
    own = time.process_time()  # this worker's CPU on the run: isolation (the child counts its own)
    _reap_exiting()
    _settle(job.program)
    scratch = tempfile.mkdtemp(prefix="mutator-run-")
    read_end, write_end = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        _child(job, write_end, scratch, private_fds)  # does not return
    os.close(write_end)
    try:
        os.setpgid(pid, pid)
    except OSError:
        pass  # the child already did it, or already exited
    frames, timed_out, overflow, reported = _collect(read_end, pid, started + job.config.timeout)
    os.close(read_end)
    # A child that reported is done; its exit (tearing down a copy of the warm heap) can
    # finish while we answer. Otherwise how it died is the answer: wait for it.
    status = _reap(pid, wait=not reported, reported=_reported_seconds(frames))
    if status is not None and not reported:  # killed or died: its orphans are ours now
        sandbox.end_descendants(spare=frozenset(_exiting))
    seconds = time.monotonic() - started
    stderr_tail = _tail(os.path.join(scratch, "stderr"))
    shutil.rmtree(scratch, ignore_errors=True)
    result = _result(job, frames, status, timed_out=timed_out, overflow=overflow, seconds=seconds,
                     stderr_tail=stderr_tail)
    return dataclasses.replace(result, cpu=(*result.cpu, *_beyond_reports(),
                                            (cpu.ISOLATION, time.process_time() - own)))


def _settle(program: Program) -> None:
    """Make this process cheap to fork for `program`: before the first run of a program that
    imports torch's test harness, what the harness needs besides torch is imported here, once
    (`lean.preload_test_harness`: a worker that never sees such a program never pays for it);
    what this process made since warm-up (the parsed programs of the mutants it built) joins
    the frozen heap, so that the child's collections do not walk, and copy, its pages; and, once
    it has shown to be a worker that runs many programs, its memory is backed by huge pages, now
    and then again for what it allocated since (`lean.huge_pages`)."""
    global _forks, _harness_pending
    from mutator.runtime import lean

    if _harness_pending and lean.wants_harness(program.source):
        from mutator.runtime.ownership import remember_library_objects

        _harness_pending = False
        lean.preload_test_harness()
        remember_library_objects()  # the globals of what it imported are a library's
    gc.collect()
    gc.freeze()
    _forks += 1
    if _forks == lean.COLLAPSE_FIRST or _forks % lean.COLLAPSE_EVERY == 0:
        lean.huge_pages()


def _child(job: Job, write_end: int, scratch: str, private_fds: tuple[int, ...]) -> None:
    status = _INTERNAL_FAILURE
    try:
        os.setpgid(0, 0)
        sandbox.die_with_parent()
        sandbox.become_subreaper()  # the program's orphans are ours to end before we exit
        for fd in private_fds:
            os.close(fd)
        _redirect(1, os.path.join(scratch, "stdout"))
        _redirect(2, os.path.join(scratch, "stderr"))
        faulthandler.enable(file=sys.stderr, all_threads=True)
        work = os.path.join(scratch, "work")
        os.mkdir(work)
        os.chdir(work)
        tempfile.tempdir = work
        sandbox.scrub_os_environ()
        os.environ.update(HOME=work, TMPDIR=work, TORCHINDUCTOR_CACHE_DIR=os.path.join(work, "inductor"))
        _own_caches(os.path.join(work, "inductor"))
        _own_thread_pool()
        pipe = os.fdopen(write_end, "wb", buffering=0)

        def emit(record: CallRecord) -> None:
            pipe.write(_encode_call(record))

        from mutator.runtime.execute import run_program

        sandbox.confine(sandbox.effective(job.config.sandbox, _offered()), scratch=scratch,
                        readable=(*(_readable or sandbox.readable_roots()), *sandbox.beside(job.program.name)))
        sandbox.limit_resources(
            memory_bytes=sandbox.address_space_bytes() + (job.config.memory_mb << 20),
            cpu_seconds=math.ceil(job.config.timeout) + 1,
            file_bytes=job.config.file_mb << 20,
        )
        tracing = _tracer is not None and job.mode is Mode.COMPILED and job.config.arcs
        signalling = _signals is not None and job.mode is Mode.COMPILED
        if signalling:
            _signals.start()
        if tracing:
            _tracer.start()
        ready = time.process_time()
        observation = run_program(job.program, job.mode, job.config, emit)
        ran = time.process_time()
        features = _tracer.stop() if tracing else frozenset()
        if signalling:
            features |= _signals.stop()
        sandbox.lift_memory_limit()
        collected = time.process_time()
        # this process's CPU clock started at the fork: its set-up includes the fork's epilogue
        # in the child (at-fork handlers, the first copies of the pages it wrote)
        used = ((cpu.SETUP, ready), (cpu.PROGRAM, ran - ready), (cpu.COVERAGE, collected - ran))
        pipe.write(wire.encode(("final", (observation, features, used))))
        status = 0
    except BaseException:  # our runtime failed, not the program: report it as such
        try:
            sandbox.lift_memory_limit()
            text = traceback.format_exc()
            os.write(2, text.encode("utf-8", "replace"))
            os.write(write_end, wire.encode(("error", text[-STDERR_TAIL:])))
        except BaseException:
            pass
    finally:
        try:
            sandbox.end_descendants()  # after the report: what the program left running dies with the run
        finally:
            os._exit(status)


def _own_caches(inductor: str) -> None:
    """Point the cache paths torch fixed when the worker imported it into this run's directory:
    a run writes nothing another run reads (and, confined, could not write there)."""
    codecache = sys.modules.get("torch._inductor.codecache")
    if codecache is not None and hasattr(codecache, "_HEADER_DIR"):
        codecache._HEADER_DIR = os.path.join(inductor, "precompiled_headers")
        codecache._HEADER_LOCK_DIR = os.path.join(codecache._HEADER_DIR, "locks")


def _own_thread_pool() -> None:
    """Replace, while this child has one thread, the intra-op thread pool fork left unusable.

    torch marks its pthreadpool as corrupted at fork and swaps in a new one on the next use;
    the swap is not thread-safe, so the first two users racing (the autograd engine's device
    thread sets the thread count as it starts, while the program's first op asks for the
    pool) let one see no pool at all: "pool INTERNAL ASSERT FAILED ... Invalid thread pool!"
    in a thread, and the run dies of SIGABRT (torch 2.14.1's CUDA build, about one backward()
    in thirty under load). Setting the thread count here makes the swap before any thread."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(torch.get_num_threads())


def _encode_call(record: CallRecord) -> bytes:
    try:
        return wire.encode(("call", record))
    except Exception as exc:  # a snapshot we cannot pickle: keep the call, drop the values
        lost = OpaqueValue("unpicklable", type(exc).__name__)
        return wire.encode(
            ("call", dataclasses.replace(record, args=lost, kwargs=lost, result=lost, program_state=lost))
        )


def _redirect(fd: int, path: str) -> None:
    target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(target, fd)
    os.close(target)


def _collect(read_end: int, pid: int, deadline: float) -> tuple[list[Any], bool, bool, bool]:
    """Read the child's reports until it reports its end or closes the pipe; kill it at the deadline.

    Returns the frames, whether it timed out, whether it reported too much, and whether it
    sent its final report.
    """
    reader = wire.FrameReader()
    size = 0
    timed_out = overflow = False
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            if timed_out:
                break  # killed, yet something still holds the pipe open
            timed_out = True
            _kill_group(pid)
            deadline = time.monotonic() + KILL_GRACE
            continue
        ready, _, _ = select.select([read_end], [], [], min(remaining, 1.0))
        if not ready:
            continue
        chunk = os.read(read_end, 1 << 16)
        if not chunk:
            break
        size += len(chunk)
        if any(kind in ("final", "error") for kind, _ in reader.feed(chunk)):
            break
        if size > MAX_REPORT_BYTES:
            overflow = True
            _kill_group(pid)
            break
    reported = any(kind in ("final", "error") for kind, _ in reader.frames)
    return reader.frames, timed_out, overflow, reported and not timed_out


_exiting: dict[int, float] = {}  # children that reported and are still tearing down -> the CPU they reported
_forks = 0  # runs forked from this worker so far (see _settle)
_harness_pending = False  # a warm worker that has not preloaded torch's test harness yet (see _settle)
# CPU of reaped children beyond what they reported, not yet in a run's stages: sending the report
# and exiting (cpu.EXIT, a reported child's, charged to the run that reaps it) and all of a child
# that never reported (cpu.PROGRAM: a hang killed at its deadline, a crash)
_unreported: dict[str, float] = {}


def _reported_seconds(frames: list[Any]) -> float | None:
    """The CPU a child's final report says it used, by its stages; None without one."""
    used = next((body[2] for kind, body in frames if kind == "final"), None)
    return sum(seconds for _, seconds in used) if used is not None else None


def _reap(pid: int, *, wait: bool, reported: float | None = None) -> int | None:
    """The child's wait status; None if it reported and has not finished exiting yet."""
    if not wait:
        done, status = _waited(pid, os.WNOHANG, reported)
        if done:
            _kill_group(pid)  # anything the program left running in its group
            return status
        _exiting[pid] = reported or 0.0
        return None
    deadline = time.monotonic() + KILL_GRACE
    while time.monotonic() < deadline:
        done, status = _waited(pid, os.WNOHANG, reported)
        if done:
            _kill_group(pid)
            return status
        time.sleep(0.002)
    _kill_group(pid)
    _, status = _waited(pid, 0, reported)
    return status


def _waited(pid: int, options: int, reported: float | None) -> tuple[int, int]:
    """`os.waitpid`, noting the CPU a reaped child used beyond `reported` (see `_unreported`)."""
    done, status, usage = os.wait4(pid, options)
    if done:
        used = usage.ru_utime + usage.ru_stime  # the child's, and its reaped descendants'
        stage = cpu.EXIT if reported is not None else cpu.PROGRAM
        _unreported[stage] = _unreported.get(stage, 0.0) + max(0.0, used - (reported or 0.0))
    return done, status


def _beyond_reports() -> tuple[tuple[str, float], ...]:
    """What `_unreported` holds, as stages of the run now answered; emptied."""
    stages = tuple(_unreported.items())
    _unreported.clear()
    return stages


def _reap_exiting() -> None:
    while _exiting:
        pid, reported = _exiting.popitem()
        _kill_group(pid)
        try:
            _waited(pid, 0, reported)
        except ChildProcessError:
            pass
    sandbox.end_descendants()  # orphans of runs killed before they could end their own


def _kill_group(pid: int) -> None:
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
            return
        except (ProcessLookupError, PermissionError):
            continue


def _tail(path: str) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - STDERR_TAIL))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return ""
    # faulthandler ends its dump with a long list of extension modules: not worth the space
    return "\n".join(line for line in text.splitlines() if not line.startswith("Extension modules:"))


def _result(job: Job, frames: list[Any], status: int | None, *, timed_out: bool, overflow: bool,
            seconds: float, stderr_tail: str) -> ExecResult:
    calls = tuple(body for kind, body in frames if kind == "call")
    final, features, used = next((body for kind, body in frames if kind == "final"), (None, frozenset(), ()))
    error = next((body for kind, body in frames if kind == "error"), None)
    observation = dataclasses.replace(final if final is not None else Observation(), calls=calls)
    base: dict[str, Any] = dict(
        program=job.program.name, mode=job.mode, observation=observation, seconds=round(seconds, 4),
        stderr_tail=stderr_tail, features=features, worker=os.getpid(), cpu=tuple(used),
    )
    signum = os.WTERMSIG(status) if status is not None and os.WIFSIGNALED(status) else None
    code = os.WEXITSTATUS(status) if status is not None and os.WIFEXITED(status) else None
    if timed_out:
        return ExecResult(**base, outcome=Outcome.TIMEOUT, signal=signum,
                          detail=f"no result after {job.config.timeout:g} s of wall clock; killed")
    if overflow:
        return ExecResult(**base, outcome=Outcome.LOST, detail=f"reported more than {MAX_REPORT_BYTES >> 20} MB")
    if final is not None:
        outcome, detail = _program_outcome(final)
        return ExecResult(**base, outcome=outcome, exit_code=code, detail=detail)
    if error is not None:
        return ExecResult(**base, outcome=Outcome.LOST, exit_code=code,
                          detail="the runtime failed: " + error.strip().splitlines()[-1])
    if signum == signal.SIGXCPU:
        return ExecResult(**base, outcome=Outcome.TIMEOUT, signal=signum, detail="exceeded its CPU time limit")
    if signum is not None:
        name = signal.Signals(signum).name if signum in signal.Signals._value2member_map_ else str(signum)
        hint = " (the kernel's OOM killer?)" if signum == signal.SIGKILL else ""
        return ExecResult(**base, outcome=Outcome.SIGNALLED, signal=signum, detail=f"killed by {name}{hint}")
    return ExecResult(**base, outcome=Outcome.EXITED, exit_code=code,
                      detail=f"the process exited with status {code} before reporting (os._exit?)")


def _program_outcome(observation: Observation) -> tuple[Outcome, str]:
    exc = observation.uncaught
    if exc is not None:
        if exc.is_a("MemoryError") or any(marker in exc.message for marker in _ALLOCATION_FAILURE):
            return Outcome.MEMORY, "ran out of memory: " + exc.one_line()
        return Outcome.RAISED, "raised " + exc.one_line()
    if observation.exit_code not in (None, 0):
        return Outcome.EXITED, f"called sys.exit({observation.exit_code})"
    return Outcome.COMPLETED, ""


if __name__ == "__main__":
    main()
