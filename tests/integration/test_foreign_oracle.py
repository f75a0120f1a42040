"""What the oracle needs from a run of someone else's program, observed with real workers.

The verdicts themselves are checked program by program in tests/quality
(test_foreign_programs.py); here, the observations and the confirmation protocol they
rest on: masks for run-specific values, the program's own checks, unittest outcomes,
library-owned state, graph-break settings, recompile records.
"""

from __future__ import annotations

import pytest

from mutator.core.observation import Mode, RunConfig
from mutator.core.values import MapValue, OpaqueValue
from mutator.core.verdict import Verdict
from mutator.judge.check import Checker

from tests.conftest import program

pytestmark = pytest.mark.integration


def check(checker, source):
    return checker.check(program(source))


def test_run_specific_globals_are_masked_after_a_third_eager_run_and_listed(checker):
    result = check(checker, """
        import threading
        import torch
        seen = []
        def work(x):
            return x.cos() + 1
        opt = torch.compile(work, backend="eager")
        def body():
            seen.append(threading.get_ident())
            seen.append(id(object()))  # differs between any two runs: the heap is shifted in each
            seen.append(opt(torch.ones(3)))
        t = threading.Thread(target=body)
        t.start(); t.join()
        main_thread = threading.get_ident()
        print("done", opt(torch.zeros(2)).sum().item())
    """)
    assert result.verdict is Verdict.PASS, result.reason
    assert result.judgement.masked and all("program globals" in path for path in result.judgement.masked)
    modes = [r.mode for r in result.runs]
    assert modes.count(Mode.EAGER) == 3 and modes.count(Mode.COMPILED) == 2
    assert result.runs[2].worker != result.runs[0].worker  # the second eager run avoided the first's worker


def test_a_crash_is_still_reported_beside_run_specific_values(checker):
    # a crash of both releases (2.13.0, 2.14.1): a guard on what a user __getattr__ counts fails
    # where it was made (the shape-mismatched torch.cat in a try that 2.13.0 crashes on passes on 2.14.1)
    result = check(checker, """
        import torch
        ids = {}
        class LazySettings:
            def __init__(self):
                self.lookups = 0
            def __getattr__(self, name):
                self.lookups += 1
                return 0.5
        settings = LazySettings()
        def damp(x):
            return x * getattr(settings, "damping", 1.0)
        opt = torch.compile(damp, backend="eager")
        a = torch.ones(2)
        ids["a"] = id(a)
        print(opt(a))
    """)
    assert result.verdict is Verdict.CRASH, result.reason
    assert result.judgement.exception.short_type == "AssertionError" and "Guard failed" in result.reason
    assert result.judgement.masked == ("call 1 (damp) program globals after the call['ids']['a']",)


def test_a_compiled_call_returning_an_id_is_unstable(checker):
    result = check(checker, """
        import torch
        def tag(x):
            return x + 1, id(object())
        opt = torch.compile(tag, backend="eager")
        opt(torch.ones(2))
    """)
    assert result.verdict is Verdict.UNSTABLE and "result" in result.reason


def test_torchs_objects_in_globals_are_kept_as_their_type_only(pool):
    run = pool.run(program("""
        import logging
        import torch
        from torch._dynamo.utils import counters
        from torch._dynamo.testing import CompileCounter
        frames = counters["frames"]
        log = logging.getLogger("mine")
        cnt = CompileCounter()
        mine = {"n": 1}
        f = torch.compile(lambda x: x + 1, backend=cnt)
        f(torch.ones(1))
    """), Mode.COMPILED)
    [call] = run.observation.calls
    state = dict(call.program_state.items)
    assert set(state) == {"mine", "f", "log", "cnt"}  # names bound to torch's objects are not the program's
    assert isinstance(state["mine"], MapValue)
    assert [(state[n].kind, state[n].text) for n in ("log", "cnt")] == [
        ("Logger", "library object"), ("CompileCounter", "library object")]


def test_library_objects_reached_through_the_programs_own_objects_are_opaque(pool):
    run = pool.run(program("""
        import threading
        import torch
        class Holder:
            def __init__(self):
                self.lock = threading.Lock()
                self.worker = threading.Thread(target=print)
                self.count = 3
        holder = Holder()
        f = torch.compile(lambda x: x * holder.count, backend="eager")
        f(torch.ones(1))
    """), Mode.EAGER)
    holder = dict(dict(run.observation.calls[0].program_state.items)["holder"].fields)
    assert isinstance(holder["worker"], OpaqueValue) and holder["count"] == 3
    assert (holder["worker"].kind, holder["worker"].text) == ("Thread", "library object")


def test_own_checks_are_classified_where_they_fail(pool):
    counting = pool.run(program("""
        import torch
        from torch._dynamo.testing import CompileCounter
        cnt = CompileCounter()
        f = torch.compile(lambda x: x + 1, backend=cnt)
        f(torch.ones(1))
        assert cnt.frame_count == 1
    """), Mode.EAGER)
    assert counting.uncaught.check == "compiler" and counting.observation.uncaught_call is None
    value = pool.run(program("""
        import torch
        f = torch.compile(lambda x: x + 1, backend="eager")
        out = f(torch.ones(1))
        assert out.item() == 5, "wrong"
    """), Mode.COMPILED)
    assert value.uncaught.check == "check"
    torch_error = pool.run(program("""
        import torch
        f = torch.compile(lambda x: x @ x, backend="eager")
        f(torch.ones(2, 3))
    """), Mode.COMPILED)
    assert torch_error.uncaught.check is None and torch_error.observation.uncaught_call == 0


def test_unittest_outcomes_and_the_calls_of_each_test_are_recorded(pool):
    run = pool.run(program("""
        import unittest
        import torch
        f = torch.compile(lambda x: x * 2, backend="eager")
        class T(unittest.TestCase):
            def test_ok(self):
                self.assertEqual(f(torch.ones(1)).item(), 2.0)
            def test_bad(self):
                f(torch.ones(1))
                self.assertEqual(1, 2)
            @unittest.skip("not today")
            def test_skipped(self):
                pass
        if __name__ == "__main__":
            unittest.main()
    """), Mode.EAGER)
    assert [(t.test, t.status) for t in run.observation.tests] == [
        ("T.test_bad", "fail"), ("T.test_ok", "pass"), ("T.test_skipped", "skip")]
    assert [c.test for c in run.observation.calls] == ["T.test_bad", "T.test_ok"]
    assert run.observation.exit_code == 1


def test_printing_compiler_state_is_withheld_from_stdout(pool):
    source = """
        import torch
        from torch._dynamo.utils import counters
        f = torch.compile(lambda x: x + 1, backend="eager")
        f(torch.ones(1))
        print("frames", dict(counters["frames"]))
        print("mine", 42)
    """
    eager, compiled = (pool.run(program(source), mode) for mode in (Mode.EAGER, Mode.COMPILED))
    assert eager.observation.stdout.head == compiled.observation.stdout.head == "mine 42\n"
    assert compiled.observation.stdout.withheld > 0


def test_uninitialised_memory_reads_the_same_in_every_run(pool):
    source = """
        import torch
        f = torch.compile(lambda n: torch.empty(n, 4), backend="eager")
        f(3)
    """
    first, second = (pool.run(program(source), Mode.EAGER) for _ in range(2))
    assert first.observation.calls[0].result.digest == second.observation.calls[0].result.digest


def test_graph_break_settings_are_recorded_for_the_oracle(pool):
    run = pool.run(program("""
        import torch
        def inner(x):
            print("break")
            return x
        f = torch.compile(lambda x: inner(x) + 1, backend="eager")
        with torch._dynamo.error_on_graph_break(True):
            f(torch.ones(1))
    """), Mode.COMPILED)
    [call] = run.observation.calls
    assert call.error_on_graph_break and call.exception.short_type == "Unsupported"
    assert [frame.lineno for frame in call.exception.user_stack][-1] == 3
    assert call.exception.error_on_graph_break is True


def test_recompiles_carry_dynamos_hint_and_the_limit(pool):
    run = pool.run(program("""
        import torch
        class Step(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.n = 0
            def forward(self, x):
                self.n += 1
                return x * self.n
        f = torch.compile(Step(), backend="eager")
        for _ in range(10):
            f(torch.ones(1))
    """), Mode.COMPILED)
    recompiles = [r for c in run.observation.calls for r in c.recompiles]
    assert len({r.code for r in recompiles}) == 1 and recompiles[-1].limit
    assert "integer" in recompiles[0].hint and recompiles[0].reason.startswith("self.n ==")
    assert len({c.signature for c in run.observation.calls}) == 10  # the state never repeats


def test_a_harvested_assertion_helper_stands_for_its_caller(pool):
    run = pool.run(program("""
        import torch
        from torch._dynamo.testing import CompileCounter
        class HarvestedChecks:
            def assertEqual(self, first, second):
                assert first == second, f"{first!r} != {second!r}"
            def assertExpectedInline(self, actual, expected):
                assert actual.strip() == expected.strip(), "expected"
        class T(HarvestedChecks):
            def test_counts(self):
                cnt = CompileCounter()
                torch.compile(lambda x: x + 1, backend=cnt)(torch.ones(1))
                self.assertEqual(cnt.frame_count, 1)
            def test_printout(self):
                text = str(torch.compile(lambda x: x * 2, backend="eager")(torch.ones(1)).shape)
                self.assertExpectedInline(text, "torch.Size([2])")
        if __name__ == "__main__":
            T().test_counts()
    """), Mode.EAGER)
    assert run.uncaught.check == "compiler"  # the helper's own line compares plain ints
    printout = pool.run(program("""
        import torch
        class HarvestedChecks:
            def assertExpectedInline(self, actual, expected):
                assert actual.strip() == expected.strip(), "expected"
        class T(HarvestedChecks):
            def test_printout(self):
                text = str(torch.compile(lambda x: x * 2, backend="eager")(torch.ones(1)).shape)
                self.assertExpectedInline(text, "torch.Size([2])")
        T().test_printout()
    """), Mode.COMPILED)
    assert printout.uncaught.check == "compiler"  # what expecttest compares is the compiler's printout


def test_under_an_aot_backend_a_grad_fn_name_is_not_compared_but_the_values_are(pool):
    aot = Checker(pool, config=RunConfig(timeout=30, backend="aot_eager"))  # mutate run --backend aot_eager
    source = """
        import torch
        def shift(x, w):
            h = x * w + 1
            print("inside", h)
            return h * 2
        opt = torch.compile(shift)
        w = torch.ones(3, requires_grad=True)
        out = opt(torch.arange(3.0), w)
        print(out)
        node, text = out.grad_fn, str(out)
    """
    result = check(aot, source)
    assert result.verdict is Verdict.PASS, result.reason
    assert "grad_fn=<CompiledFunctionBackward>" in result.compiled.observation.stdout.head  # the names did differ
    wrong = check(aot, source.replace('"inside", h', '"inside", h + torch.compiler.is_compiling()'))
    assert wrong.verdict is Verdict.MISMATCH and wrong.judgement.divergence.observation == "stdout", wrong.reason


def test_the_globals_a_backend_of_the_programs_own_writes_are_named_in_the_compiled_run(pool):
    source = program("""
        import torch
        from torch._dynamo.testing import CompileCounter
        graphs, seen = [], {"n": 0}
        def keep(gm, example_inputs):
            graphs.append(gm)
            return gm.forward
        cnt = CompileCounter()
        torch.compile(lambda x: x + 1, backend=cnt)(torch.ones(1))  # torch's backend: nothing of the program's
        seen["n"] += 1
        torch.compile(lambda x: x * 2, backend=keep)(torch.ones(1))
        seen["n"] += 1
        torch.compile(lambda x: x - 1, backend=keep)(torch.ones(1))  # compiled again: still the same names
    """)
    compiled, eager = pool.run(source, Mode.COMPILED), pool.run(source, Mode.EAGER)
    assert [c.compiler_made for c in compiled.observation.calls] == [(), ("graphs",), ("graphs",)]
    assert all(c.compiler_made == () for c in eager.observation.calls)
    state = dict(compiled.observation.calls[1].program_state.items)
    assert state["graphs"] == "<written by the program's backend>" and dict(state["seen"].items) == {"n": 1}


def test_where_dynamo_traces_through_an_lru_cache_is_noted_and_an_eager_run_can_do_as_it_does(pool):
    source = program("""
        import functools
        import torch
        log = []
        @functools.lru_cache(maxsize=None)
        def unit(n):
            log.append(n)
            return n + 1
        f = torch.compile(lambda x: x * unit(2), backend="eager")
        for _ in range(3):
            f(torch.ones(1))
        print(len(log), unit.cache_info())
        unit(2)  # outside any compiled call: the cache
        print(len(log), unit.cache_info())
    """)
    compiled = pool.run(source, Mode.COMPILED)
    through = pool.run(source, Mode.EAGER, RunConfig(timeout=30, lru_cache_calls_through=True))
    plain = pool.run(source, Mode.EAGER)
    assert [c.lru_cache_traced for c in compiled.observation.calls] == [("prog.py:8",)] * 3  # the lambda's line
    assert all(c.lru_cache_traced == () for c in through.observation.calls + plain.observation.calls)
    assert through.observation.stdout.head == compiled.observation.stdout.head == (
        "3 CacheInfo(hits=0, misses=0, maxsize=None, currsize=0)\n"
        "4 CacheInfo(hits=0, misses=1, maxsize=None, currsize=1)\n")
    assert plain.observation.stdout.head.startswith("1 CacheInfo(hits=2, misses=1")
