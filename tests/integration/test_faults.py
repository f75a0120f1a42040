"""Faults a days-long campaign meets, each survived with the right verdict and nothing left
behind: loops in C code that no Python signal stops, programs that ignore SIGTERM and
SIGINT, delete their own directory, or leave processes running (even in a session of their
own). Through real workers and real torch."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mutator.judge.check import Checker
from mutator.core.observation import Outcome, RunConfig
from mutator.core.verdict import Verdict

from tests.conftest import ONLY_COMPILED, program
from tests.helpers import alive

pytestmark = pytest.mark.integration

C_LOOP = "__import__('re').match(r'(a|aa)+$', 'a' * 200 + 'b')  # backtracking in the regex engine, in C"
IGNORES_SIGNALS = ("signal.signal(signal.SIGTERM, signal.SIG_IGN); signal.signal(signal.SIGINT, signal.SIG_IGN); "
                   "exec('while True: pass')")


@pytest.mark.parametrize("action", [C_LOOP, IGNORES_SIGNALS], ids=["loop in C", "ignores SIGTERM and SIGINT"])
def test_a_run_nothing_can_interrupt_is_killed_at_its_deadline_and_is_a_hang(pool, action: str):
    checker = Checker(pool, config=RunConfig(timeout=2))
    started = time.monotonic()
    result = checker.check(program(ONLY_COMPILED.format(action=action)))
    assert result.verdict is Verdict.HANG, result.judgement
    assert result.compiled.outcome is Outcome.TIMEOUT and result.eager.outcome is Outcome.COMPLETED
    assert time.monotonic() - started < 60  # two timed-out compiled runs and a few quick ones


LIMITED = """
import os
import torch
def fn(x):
    return x + 1
def inputs():
    return (torch.ones(3),)
def drive(f):
    {action}
    return f(*inputs())
"""


@pytest.mark.parametrize("action,config,message", [
    ("held = [open(os.devnull) for _ in range(5000)]", RunConfig(timeout=30), "Too many open files"),
    ("open('big.bin', 'wb').write(bytes(3 << 20))", RunConfig(timeout=30, file_mb=1), "File too large"),
], ids=["open files", "file size"])
def test_a_limit_hit_in_both_runs_is_invalid_and_named(pool, action: str, config: RunConfig, message: str):
    result = Checker(pool, config=config).check(program(LIMITED.format(action=action)))
    assert result.verdict is Verdict.INVALID and message in result.reason, result.judgement
    assert result.eager.outcome is result.compiled.outcome is Outcome.RAISED


def test_a_program_deleting_its_own_directory_is_judged_and_the_worker_goes_on(pool, checker):
    result = checker.check(program("""
        import os, shutil
        import torch
        def fn(x):
            return x + 1
        def inputs():
            return (torch.ones(3),)
        def drive(f):
            shutil.rmtree(os.getcwd())  # and stays in it: a directory that is gone
            out = f(*inputs())
            open("after.txt", "w")  # fails the same way in both runs
            return out
    """))
    assert result.verdict is Verdict.INVALID and "FileNotFoundError" in result.reason, result.judgement
    assert checker.check(program("import torch\ndef fn(x):\n    return x * 2\ndef inputs():\n"
                                 "    return (torch.ones(2),)\n")).verdict is Verdict.PASS


def test_processes_a_program_leaves_running_do_not_outlive_its_run(checker):
    """Children that sleep on after the program ends, half of them grandchildren in a session
    of their own (out of reach of the run's process group, orphaned at once): none is alive
    once the check is done."""
    result = checker.check(program("""
        import json, os, time
        import torch
        def fn(x):
            return x + 1
        def inputs():
            return (torch.ones(3),)
        def drive(f):
            read, write = os.pipe()
            for i in range(20):
                if os.fork() == 0:
                    if i % 2:
                        os.setsid()
                        if os.fork():
                            os._exit(0)
                    os.write(write, f"{os.getpid()} ".encode())
                    time.sleep(300)
                    os._exit(0)
            pids = []
            while len(pids) < 20:
                pids += os.read(read, 4096).decode().split()
            print("PIDS " + json.dumps(sorted(map(int, pids))))
            return f(*inputs())
    """))
    assert result.verdict is Verdict.PASS, result.judgement
    pids = [pid for run in result.runs for pid in json.loads(
        next(line for line in run.observation.stdout.head.splitlines() if line.startswith("PIDS "))[5:])]
    assert len(pids) == 20 * len(result.runs)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(map(alive, pids)):
        time.sleep(0.2)
    assert [pid for pid in pids if alive(pid)] == []


FORK_BOMB = "exec('while True:\\n    try:\\n        os.fork()\\n    except OSError:\\n        pass')"


def _system_tasks() -> int:
    with open("/proc/loadavg") as f:
        return int(f.read().split()[3].split("/")[1])


def test_a_fork_bomb_is_held_to_the_run_s_process_limit_and_ends_with_its_run(pool):
    """Every process of the bomb forks again until the limit says no: a pids cgroup for root
    (which RLIMIT_NPROC does not bind), RLIMIT_NPROC otherwise. The machine never sees more
    than the limit's worth of new tasks, the run is a hang at its deadline, nothing of it is
    left afterwards, and the worker goes on."""
    from mutator.exec import sandbox

    parent = sandbox.own_pids_cgroup()
    if os.geteuid() == 0 and not (parent and os.access(parent, os.W_OK)):
        pytest.skip("root without a writable pids cgroup: nothing here could hold a fork bomb")
    before = _system_tasks()
    peak = [before]
    stop = threading.Event()

    def watch() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], _system_tasks())
            time.sleep(0.01)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        result = Checker(pool, config=RunConfig(timeout=3)).check(program(ONLY_COMPILED.format(action=FORK_BOMB)))
    finally:
        stop.set()
        watcher.join()
    assert result.verdict is Verdict.HANG, result.judgement
    # two compiled runs of the bomb, one after the other; the pool's other runs and threads beside
    assert peak[0] - before < 2 * sandbox.MORE_PROCESSES, (before, peak[0])
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _system_tasks() > before + 16:
        time.sleep(0.2)
    assert _system_tasks() <= before + 16, (before, _system_tasks())
    after = Checker(pool).check(program(LIMITED.format(action="pass")))  # the workers go on as before
    assert after.verdict is Verdict.PASS, after.judgement


def test_a_full_disk_stops_the_campaign_cleanly_with_everything_written_before_whole(tmp_path, monkeypatch):
    """Every write after the 30th fails with ENOSPC (as a full disk does, and goes on doing):
    mutate fuzz stops with one error line saying what to do, exit status 2, and the campaign
    directory is exactly as it was when the disk filled."""
    import errno
    import shutil as _shutil

    from click.testing import CliRunner

    from cli import main
    from mutator.core import storage

    seeds = tmp_path / "seeds"
    seeds.mkdir()
    root = Path(__file__).resolve().parents[2] / "seeds"
    for rel in ("C_iterators/map_filter_zip_enumerate.py", "others/format_and_mappingproxy.py",
                "E2_exceptions/attribute_access_try.py"):
        _shutil.copy(root / rel, seeds / Path(rel).name)
    out = tmp_path / "campaign"
    writes, at_failure = [0], {}

    def filling(real):  # type: ignore[no-untyped-def]
        def write(path, *args, **kwargs):  # type: ignore[no-untyped-def]
            writes[0] += 1
            if writes[0] > 30:
                if not at_failure:
                    at_failure.update(_contents(out))
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
            return real(path, *args, **kwargs)
        return write

    monkeypatch.setattr(storage, "write_bytes", filling(storage.write_bytes))
    monkeypatch.setattr(storage, "append_line", filling(storage.append_line))
    result = CliRunner().invoke(main, ["fuzz", "--no-ui", "--no-reduce", "-j", "2", "--corpus", str(seeds),
                                       "--out", str(out), "--max-execs", "400"])
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "No space left on device" in errors[0] and "--resume" in errors[0], result.output
    assert at_failure and _contents(out) == at_failure
    for path in out.rglob("*.json"):
        json.loads(path.read_text())


def _contents(root) -> dict[str, bytes]:  # type: ignore[no-untyped-def]
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and not p.name.endswith(".tmp") and p.name != ".lock"}


# A driver that starts one worker as WorkerPool does (the worker's stdin and stdout are its
# pipes), says the worker's pid, optionally sends it a run, then waits to be killed.
_DRIVER = """
import subprocess, sys, time
from mutator.core.observation import Mode, RunConfig
from mutator.core.program import Program, ProgramForm
from mutator.exec import wire
from mutator.exec.protocol import Job
worker = subprocess.Popen([sys.executable, "-m", "mutator.exec.worker"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, start_new_session=True, bufsize=0)
print(worker.pid, flush=True)
if sys.argv[1] == "running":
    wire.recv(worker.stdout)  # Ready
    source = "import time\\nimport torch\\ntime.sleep(300)\\n"
    wire.send(worker.stdin, Job(1, Program(source, ProgramForm.SCRIPT, "sleeps.py"), Mode.EAGER, RunConfig(timeout=300)))
    print("sent", flush=True)
time.sleep(600)
"""

# Runs the driver as its own child, as a subreaper, so that the worker the driver leaves
# behind comes to it and how the worker ended can be read (its wait status). Prints one
# JSON line: how the worker ended, and the run's child, if one was started.
_WITNESS = """
import json, os, signal, subprocess, sys, time
from mutator.exec import sandbox
sandbox.become_subreaper()
driver = subprocess.Popen([sys.executable, "-c", sys.argv[1], sys.argv[2]], stdout=subprocess.PIPE, text=True)
worker = int(driver.stdout.readline())

def libraries(pid):
    try:
        with open(f"/proc/{pid}/maps") as f:
            return f.read()
    except OSError:
        return ""

if sys.argv[2] == "warming":  # killed while the worker imports torch: its warm-up has begun
    while "libtorch" not in libraries(worker) and driver.poll() is None:
        time.sleep(0.01)
else:
    assert driver.stdout.readline().strip() == "sent"
    while not open(f"/proc/{worker}/task/{worker}/children").read().split():
        time.sleep(0.01)
run_child = [int(p) for p in open(f"/proc/{worker}/task/{worker}/children").read().split()]
os.kill(driver.pid, signal.SIGKILL)
driver.wait()
ended = {}
deadline = time.monotonic() + 60  # generous: the kernel's parent-death signal is immediate
while len(ended) < 1 + len(run_child) and time.monotonic() < deadline:
    try:
        pid, status = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        break
    if pid:
        ended[pid] = os.WTERMSIG(status) if os.WIFSIGNALED(status) else f"exit {os.WEXITSTATUS(status)}"
    else:
        time.sleep(0.01)
for pid in (worker, *run_child):
    if pid not in ended:
        os.kill(pid, signal.SIGKILL)
print(json.dumps({"worker": ended.get(worker, "alive"), "run": [ended.get(p, "alive") for p in run_child]}))
"""


@pytest.mark.parametrize("stage", ["warming", "running"])
def test_a_worker_whose_driver_is_killed_goes_with_it_at_any_stage(stage: str):
    """kill -9 of the driver while its worker warms up (imports torch), or while the worker
    waits on a run that sleeps: the worker, and the run's child, are killed by the kernel's
    parent-death signal, not left to notice a closed pipe once their work is done."""
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, "-c", _WITNESS, _DRIVER, stage], capture_output=True, text=True,
                          cwd=root, env={**os.environ, "PYTHONPATH": str(root)}, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    ended = json.loads(proc.stdout.splitlines()[-1])
    assert ended["worker"] == signal.SIGKILL, ended
    assert ended["run"] == ([signal.SIGKILL] if stage == "running" else []), ended


def test_a_closed_pool_stops_its_workers_in_order_not_by_the_parent_death_signal():
    """The kernel sends a worker its parent-death signal when the thread that started it ends:
    the pool stops each worker from its serving thread before that thread ends, so the worker
    exits on its own (status 0) after cleaning up."""
    from mutator.exec.pool import WorkerPool

    pool = WorkerPool(workers=1)
    pool.wait_ready()
    worker = pool._handles[0]._proc
    pool.close()
    assert worker.returncode == 0


BACKWARD = """
import torch
fn = torch.nn.Linear(3, 3)
def inputs():
    return (torch.randn(2, 3),)
def drive(f):
    out = f(*inputs())
    out.sum().backward()
    return out, fn.weight.grad
"""


def test_a_backward_in_a_forked_run_does_not_abort_it(pool):
    """The first backward() of a run starts the autograd engine's device threads, which race the
    program for the thread pool fork left to be replaced: without the worker replacing it first,
    a few runs in a hundred died of SIGABRT ("Invalid thread pool!") on torch 2.14.1's build."""
    from mutator.core.observation import Mode

    runs = [pool.submit(program(BACKWARD), Mode.EAGER) for _ in range(150)]
    aborted = [r for r in (run.result() for run in runs) if r.outcome is not Outcome.COMPLETED]
    assert not aborted, f"{len(aborted)} of 150 runs: {aborted[0].detail}\n{aborted[0].stderr_tail[-1500:]}"
