"""Each verdict from a real program, through real workers and real torch.

A deterministic way to make compiled code differ from eager: Dynamo evaluates
`torch.compiler.is_compiling()` as True inside the compiled region.
"""

from __future__ import annotations

import pytest

from mutator.judge.check import Checker
from mutator.core.observation import Mode, Outcome, RunConfig
from mutator.core.verdict import Verdict

from tests.conftest import ONLY_COMPILED, SECRET, program

pytestmark = pytest.mark.integration


def check(checker, source, name="prog.py"):
    return checker.check(program(source, name))


def test_equal_program_passes_in_two_runs(checker):
    result = check(checker, """
        import torch
        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(4, 2)
            def forward(self, x):
                return self.lin(x).relu().sum(0)
        fn = M()
        def inputs():
            return (torch.randn(3, 4),)
    """)
    assert result.verdict is Verdict.PASS, result.reason
    assert [r.mode for r in result.runs] == [Mode.EAGER, Mode.COMPILED]
    assert result.compiled.observation.compile.graphs == 1


def test_value_mismatch(checker):
    result = check(checker, """
        import torch
        def fn(x):
            if torch.compiler.is_compiling():
                return x + 1
            return x * 1
        def inputs():
            return (torch.ones(3),)
    """)
    assert result.verdict is Verdict.MISMATCH, result.reason
    assert "3 of 3 values differ" in result.reason
    assert len(result.runs) == 5  # confirmed: eager and compiled again, plus the float64 reference


def test_compiled_swallowing_an_exception_is_a_mismatch(checker):
    result = check(checker, """
        import torch
        def fn(x):
            if not torch.compiler.is_compiling():
                raise KeyError("eager only")
            return x
        def inputs():
            return (torch.ones(3),)
    """)
    assert result.verdict is Verdict.MISMATCH and "KeyError" in result.reason


def test_exception_only_when_compiled_is_a_crash(checker):
    result = check(checker, """
        import torch
        def fn(x):
            if torch.compiler.is_compiling():
                x = x.view(7)  # fake-tensor propagation fails at trace time
            return x + 1
        def inputs():
            return (torch.ones(3),)
    """)
    assert result.verdict is Verdict.CRASH, result.reason
    assert result.judgement.exception.short_type == "TorchRuntimeError"


def test_both_raising_is_invalid_with_both_types(checker):
    result = check(checker, """
        import torch
        def fn(x):
            return x @ x
        def inputs():
            return (torch.ones(2, 3),)
    """)
    assert result.verdict is Verdict.INVALID
    assert result.judgement.eager_exception.type_name == "RuntimeError"
    assert result.judgement.exception.short_type == "TorchRuntimeError"
    assert len(result.runs) == 2


def test_raising_backend_is_a_backend_failure(checker):
    result = check(checker, """
        import torch
        def refusing_backend(gm, example_inputs):
            raise RuntimeError("backend says no")
        COMPILE_KWARGS = {"backend": refusing_backend}
        def fn(x):
            return x.sin() * 2
        def inputs():
            return (torch.ones(3),)
    """)
    assert result.verdict is Verdict.BACKEND_FAILURE, result.reason
    assert result.compiled.observation.compiled[0].backend == "callable:refusing_backend"


def test_graph_break_under_fullgraph(checker):
    result = check(checker, """
        import torch
        COMPILE_KWARGS = {"fullgraph": True}
        def fn(x):
            y = x * 2
            print("between graphs")
            return y + 1
        def inputs():
            return (torch.ones(3),)
    """)
    assert result.verdict is Verdict.FULLGRAPH_BREAK, result.reason
    assert result.judgement.exception.gb_type == "Failed to trace builtin operator"


def test_an_explicit_graph_break_under_fullgraph_is_not_a_finding(checker):
    result = check(checker, """
        import torch
        COMPILE_KWARGS = {"fullgraph": True}
        def fn(x):
            y = x * 2
            torch._dynamo.graph_break()
            return y + 1
        def inputs():
            return (torch.ones(3),)
    """)
    assert result.verdict is Verdict.INVALID, result.reason
    assert not result.verdict.is_finding


def test_graph_break_without_fullgraph_passes_and_is_counted(checker):
    result = check(checker, """
        import torch
        def fn(x):
            y = x * 2
            print("between graphs")
            return y + 1
        def inputs():
            return (torch.ones(3),)
    """)
    assert result.verdict is Verdict.PASS, result.reason
    assert result.compiled.observation.compile.graph_breaks == ("Failed to trace builtin operator",)


def test_recompile_limit_on_a_changing_global_is_documented_specialisation(checker):
    result = check(checker, """
        import torch
        SCALE = 0
        def fn(x):
            return x * SCALE
        def inputs():
            return (torch.ones(2),)
        def drive(f):
            global SCALE
            outs = []
            for i in range(12):
                SCALE = i
                outs.append(f(*inputs()))
            return outs
    """)
    assert result.verdict is Verdict.SPECIALIZATION, result.reason
    assert "recompile limit" in result.reason and result.judgement.key == "limit:value"


@pytest.mark.parametrize("action,signal_name", [("os.abort()", "SIGABRT"),
                                                ("os.kill(os.getpid(), signal.SIGSEGV)", "SIGSEGV")])
def test_death_by_signal_is_a_crash_with_faulthandler_output(checker, action, signal_name):
    result = check(checker, ONLY_COMPILED.format(action=action))
    assert result.verdict is Verdict.CRASH and signal_name in result.reason
    assert "Fatal Python error" in result.compiled.stderr_tail


def test_infinite_loop_on_the_compiled_path_is_a_hang(pool):
    checker = Checker(pool, config=RunConfig(timeout=5))
    result = check(checker, ONLY_COMPILED.format(action="while True: pass"))
    assert result.verdict is Verdict.HANG
    assert result.compiled.outcome is Outcome.TIMEOUT and result.runs[3].outcome is Outcome.TIMEOUT


def test_memory_bomb_on_the_compiled_path_is_a_crash(checker):
    result = check(checker, ONLY_COMPILED.format(action="blob = bytearray(64 * 1024 ** 3)"))
    assert result.verdict is Verdict.CRASH and result.compiled.outcome is Outcome.MEMORY


def test_memory_bomb_in_both_runs_is_invalid(checker):
    result = check(checker, ONLY_COMPILED.format(action="pass").replace(
        "def inputs():\n", "def inputs():\n    blob = bytearray(64 * 1024 ** 3)\n"))
    assert result.verdict is Verdict.INVALID and result.eager.outcome is Outcome.MEMORY


def test_os_exit_and_sys_exit_are_results(checker):
    exits = check(checker, ONLY_COMPILED.format(action="os._exit(0)"))
    assert exits.verdict is Verdict.CRASH and exits.compiled.outcome is Outcome.EXITED
    both = check(checker, """
        import sys
        import torch
        def fn(x):
            return x + 1
        def inputs():
            return (torch.ones(3),)
        def drive(f):
            f(*inputs())
            sys.exit(3)
    """)
    assert both.verdict is Verdict.INVALID and both.eager.observation.exit_code == 3
    clean = check(checker, """
        import sys
        import torch
        def fn(x):
            return x + 1
        def inputs():
            return (torch.ones(3),)
        def drive(f):
            f(*inputs())
            sys.exit(0)
    """)
    assert clean.verdict is Verdict.PASS, clean.reason


def test_hundred_megabytes_of_stdout(checker):
    result = check(checker, """
        import torch
        def fn(x):
            return x + 1
        def inputs():
            return (torch.ones(3),)
        def drive(f):
            print("x" * (100 * 1024 * 1024))
            return f(*inputs())
    """)
    assert result.verdict is Verdict.PASS
    out = result.eager.observation.stdout
    assert out.length == 100 * 1024 * 1024 + 1 and out.truncated and len(out.head) == 64 * 1024


def test_secrets_never_reach_the_program(checker):
    result = check(checker, """
        import os
        import torch
        def fn(x):
            return x + 1
        def inputs():
            return (torch.ones(3),)
        def drive(f):
            print(os.environ.get("OPENAI_API_KEY"), os.environ.get("MUTATOR_TEST_TOKEN"))
            print(open("/proc/self/environ", "rb").read().decode(errors="replace"))
            return f(*inputs())
    """)
    assert result.verdict is Verdict.PASS
    for run in result.runs:
        assert run.observation.stdout.head.startswith("None None\n")
        assert SECRET not in run.observation.stdout.head


def test_unseeded_randomness_is_unstable(checker):
    result = check(checker, """
        import random
        import torch
        def fn(x):
            return x * 2
        def inputs():
            return (torch.ones(3),)
        def drive(f):
            return f(torch.ones(2) * random.SystemRandom().random())
    """)
    assert result.verdict is Verdict.UNSTABLE and "two eager runs disagree" in result.reason


def test_seeded_randomness_is_reproducible(checker):
    result = check(checker, """
        import random
        import numpy as np
        import torch
        def fn(x):
            return x * torch.rand(3) + random.random() + float(np.random.rand())
        def inputs():
            return (torch.randn(3),)
    """)
    assert result.verdict is Verdict.PASS, result.reason


def test_in_place_mutation_of_arguments_is_observed(pool):
    result = pool.run(program("""
        import torch
        def fn(x):
            x.add_(1)
            return x.sum()
        def inputs():
            return (torch.zeros(3),)
    """), Mode.COMPILED)
    [call] = result.observation.calls
    assert list(call.args.items[0].values) == [1.0, 1.0, 1.0]


def test_a_program_killing_its_worker_is_lost_and_the_pool_recovers(pool, checker):
    # unconfined: the sandbox refuses the signal (tests/integration/test_sandbox.py), but a
    # worker still dies of other causes (the kernel's OOM killer, a crash in torch)
    restarts = pool.restarts
    lost = check(Checker(pool, config=RunConfig(timeout=30, sandbox="off")), """
        import os, signal
        import torch
        def fn(x):
            return x + 1
        def inputs():
            os.kill(os.getppid(), signal.SIGKILL)
            return (torch.ones(3),)
    """)
    assert lost.eager.outcome is Outcome.LOST and lost.verdict is Verdict.INVALID
    assert pool.restarts >= restarts + 2  # both workers that ran it (eager and compiled, side by side) died
    assert check(checker, "import torch\ndef fn(x):\n    return x\ndef inputs():\n    return (torch.ones(1),)\n").verdict \
        is Verdict.PASS


def test_pool_keeps_working_after_crashes(checker):
    for action in ("os.abort()", "blob = bytearray(64 * 1024 ** 3)"):
        assert check(checker, ONLY_COMPILED.format(action=action)).verdict is Verdict.CRASH
    # the same program without the misbehaviour still differs only by the global it sets
    result = check(checker, ONLY_COMPILED.format(action="pass"))
    assert result.verdict is Verdict.MISMATCH and "program globals" in result.reason


def test_float64_reference_run_computes_the_same_values(pool):
    source = program("""
        import torch
        class M(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(4, 3)
            def forward(self, x):
                return torch.tanh(self.lin(x)) + torch.randn(3)
        fn = M()
        def inputs():
            return (torch.randn(2, 4),)
    """)
    eager, reference = pool.run(source, Mode.EAGER), pool.run(source, Mode.REFERENCE)
    e, r = eager.observation.calls[0].result, reference.observation.calls[0].result
    assert r.dtype == "torch.float64" and abs(e.values - r.values).max() < 1e-5


def test_compiling_again_after_a_dynamo_reset_is_not_a_storm(checker):
    result = check(checker, """
        import torch
        def fn(x):
            return x.cos() * 2
        def inputs():
            return (torch.ones(3),)
        def drive(f):
            x = torch.ones(3)
            out = [f(x)]
            torch._dynamo.reset()
            out.append(f(x))
            torch.compiler.reset()
            out.append(f(x))
            return out
    """)
    assert result.verdict is Verdict.PASS, result.reason
    assert [c.resets for c in result.compiled.observation.calls] == [0, 1, 2]


def test_calls_under_other_torch_function_modes_are_other_states_not_a_storm(checker):
    """Dynamo guards on the TorchFunctionMode stack and on DisableTorchFunction: recompiling
    when either changes is what it should do, and the states differ, so no storm."""
    result = check(checker, """
        import torch
        from torch.overrides import TorchFunctionMode
        class Passing(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                return func(*args, **(kwargs or {}))
        def fn(x):
            return x * 2
        def inputs():
            return (torch.ones(3),)
        def drive(f):
            x = torch.ones(3)
            out = [f(x)]
            with Passing():
                out.append(f(x))
            with torch._C.DisableTorchFunctionSubclass():
                out.append(f(x))
                with torch._C.DisableTorchFunction():
                    out.append(f(x))
            out.append(f(x))
            return out
    """)
    assert result.verdict is Verdict.PASS, result.reason
    assert sum(len(c.recompiles) for c in result.compiled.observation.calls) >= 2  # Dynamo did recompile


def test_a_restarted_worker_sees_the_same_environment_as_the_others(pool, checker, monkeypatch):
    # The parent's environment changes after the pool started (pytest itself does this between
    # tests); a worker restarted then must not see the change, or eager and compiled runs differ.
    monkeypatch.setenv("MUTATOR_SET_AFTER_THE_POOL_STARTED", "1")
    restarts = pool.restarts
    killer = program("""
        import os, signal
        import torch
        def fn(x):
            return x + 1
        def inputs():
            os.kill(os.getppid(), signal.SIGKILL)
            return (torch.ones(3),)
    """)
    assert pool.run(killer, Mode.EAGER, RunConfig(timeout=30, sandbox="off")).outcome is Outcome.LOST
    assert pool.restarts == restarts + 1  # one worker restarted, the other one is as it was
    result = check(checker, """
        import torch
        def fn(x):
            return x + 1
        def inputs():
            return (torch.ones(3),)
        def drive(f):
            print(sorted(open("/proc/self/environ", "rb").read().split(b"\\0")))
            return f(*inputs())
    """)
    assert result.verdict is Verdict.PASS, result.reason
    assert "MUTATOR_SET_AFTER_THE_POOL_STARTED" not in result.eager.observation.stdout.head


def test_an_urgent_run_jumps_the_queue_and_avoid_still_holds(pool):
    """A throttled background reduction submits URGENT: it waits for a free worker, not for
    every check queued before it. Order of completion, not time, is asserted."""
    from mutator.exec.pool import URGENT

    slow = program("""
        import time
        import torch
        def fn(x):
            return x + 1
        def inputs():
            time.sleep(0.3)
            return (torch.ones(1),)
    """)
    finished: list[str] = []
    normal = [pool.submit(slow, Mode.EAGER) for _ in range(8)]
    for i, future in enumerate(normal):
        future.add_done_callback(lambda _, i=i: finished.append(f"normal{i}"))
    urgent = pool.submit(slow, Mode.EAGER, priority=URGENT)
    urgent.add_done_callback(lambda _: finished.append("urgent"))
    first = urgent.result()
    for future in normal:
        assert future.result().outcome is Outcome.COMPLETED
    assert first.outcome is Outcome.COMPLETED
    assert finished.index("urgent") <= 3, finished  # behind at most the runs already started
    avoiding = pool.submit(slow, Mode.EAGER, avoid=first.worker, priority=URGENT).result()
    assert avoiding.worker != first.worker


def test_runs_find_the_harness_s_other_modules_imported_and_torch_s_not(pool):
    # the worker imported pytest and the rest of what torch's test harness needs besides
    # torch before forking (runtime.lean): a run that imports the harness does not pay for
    # them, and one that does not sees torch as plain python would, flags settable
    result = pool.run(program("""
        import sys
        import torch
        STATE = ("pytest" in sys.modules, hasattr(torch._dynamo, "test_case"), torch.backends.flags_frozen())
        torch.backends.cudnn.benchmark = True
        import torch._dynamo.test_case
        AFTER = torch.backends.flags_frozen()  # the harness's own import forbids it, as under plain python
        def fn(x):
            return x + sum(STATE) * 10 + AFTER
        def inputs():
            return (torch.zeros(3),)
    """), Mode.COMPILED)
    assert result.outcome is Outcome.COMPLETED, result.stderr_tail
    [call] = result.observation.calls
    assert list(call.result.values) == [11.0, 11.0, 11.0]


def test_runs_tell_what_their_children_used_beyond_their_own_stages(pool):
    # a forked child's report and exit (its copy of the warm worker torn down) is CPU no stage
    # of its own can time: the kernel's count, charged to the run during which the worker
    # reaped it; a child that never reports is charged whole to its program
    from mutator.core import cpu

    quick = program("""
        import torch
        def fn(x):
            return x + 1
        def inputs():
            return (torch.zeros(3),)
    """)
    stages = [dict(pool.run(quick, Mode.EAGER).cpu) for _ in range(4)]
    assert sum(s.get(cpu.EXIT, 0.0) for s in stages) > 0, stages
    assert all(seconds >= 0 for s in stages for seconds in s.values())
    hang = pool.run(program("""
        import torch
        def fn(x):
            while True:
                x = x + 1
        def inputs():
            return (torch.zeros(3),)
    """), Mode.EAGER, RunConfig(timeout=2.0))
    assert hang.outcome is Outcome.TIMEOUT
    assert dict(hang.cpu).get(cpu.PROGRAM, 0.0) > 0, hang.cpu


def test_a_worker_preloads_the_harness_for_the_first_program_that_imports_it_and_not_before():
    from mutator.exec.pool import WorkerPool

    plain = program("""
        import sys
        import torch
        SEEN = "pytest" in sys.modules
        def fn(x):
            return x + SEEN
        def inputs():
            return (torch.zeros(2),)
    """)
    harvested = program("""
        import torch
        import torch._dynamo.test_case
        def fn(x):
            return x + 1
        def inputs():
            return (torch.zeros(2),)
    """)
    with WorkerPool(workers=1, config=RunConfig(timeout=30)) as own:
        seen = []
        for prog in (plain, harvested, plain):
            result = own.run(prog, Mode.EAGER)
            assert result.outcome is Outcome.COMPLETED, result.stderr_tail
            [call] = result.observation.calls
            seen.append(list(call.result.values))
    assert seen == [[0.0, 0.0], [1.0, 1.0], [1.0, 1.0]]
