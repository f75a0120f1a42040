"""The confirmation protocol, check tasks (the first pass a worker does whole, and what the driver
does with its reply) and the perturbed confirmation run, against scripted runners and
executors: no processes, no torch."""

from __future__ import annotations

import dataclasses
import random
from concurrent.futures import Future
from dataclasses import replace

import pytest

from mutator.core.features import semantic_features
from mutator.core.observation import CompileStats, Mode, Outcome, RunConfig
from mutator.core.program import Program
from mutator.core.values import MapValue, SeqValue
from mutator.core.verdict import Verdict
from mutator.judge.check import Checker, CheckReply, CheckResult, CheckTask, derived_paths, first_pass
from mutator.judge.oracle import Judgement, Oracle
from mutator.mutation.mutator import MutantBuilder, Mutator
from mutator.mutation.registry import all_operators

from tests.helpers import call, compiled_run, exc, run, tensor


PROGRAM = Program.from_source("def fn(x):\n    return x\ndef inputs():\n    return (1,)\n", "p.py")


class ScriptedRunner:
    """Answers each mode from a queue of prepared results and records what was asked."""

    def __init__(self, **results):
        self.queues = {Mode[name.upper()]: list(values) for name, values in results.items()}
        self.asked: list[Mode] = []

    def submit(self, program, mode, config=None, *, avoid=None):
        self.asked.append(mode)
        future = Future()
        future.set_result(self.queues[mode].pop(0))
        return future


def ok(value):
    return run(calls=[call(result=tensor([value]))])


def compiled(value):
    return compiled_run(calls=[call(result=tensor([value]))])


def test_a_passing_program_costs_two_runs():
    runner = ScriptedRunner(eager=[ok(1.0)], compiled=[compiled(1.0)])
    result = Checker(runner).check(PROGRAM)
    assert result.verdict is Verdict.PASS and runner.asked == [Mode.EAGER, Mode.COMPILED]


def test_a_confirmed_mismatch_reruns_both_and_checks_float64():
    runner = ScriptedRunner(eager=[ok(1.0), ok(1.0)], compiled=[compiled(2.0), compiled(2.0)],
                            reference=[run(Mode.REFERENCE, calls=[call(result=tensor([1.0], "torch.float64"))])])
    result = Checker(runner).check(PROGRAM)
    assert result.verdict is Verdict.MISMATCH
    assert sorted(m.value for m in runner.asked) == ["compiled", "compiled", "eager", "eager", "reference"]
    assert len(result.runs) == 5


def test_only_the_first_pass_records_arcs_the_confirmation_runs_only_judge():
    class Configs(ScriptedRunner):
        def submit(self, program, mode, config=None, *, avoid=None):
            self.configs.append((mode, config.arcs))
            return super().submit(program, mode, config, avoid=avoid)

    runner = Configs(eager=[ok(1.0), ok(1.0)], compiled=[compiled(2.0), compiled(2.0)],
                     reference=[run(Mode.REFERENCE, calls=[call(result=tensor([1.0], "torch.float64"))])])
    runner.configs = []
    assert Checker(runner, config=RunConfig(arcs=True)).check(PROGRAM).verdict is Verdict.MISMATCH
    assert runner.configs[:2] == [(Mode.EAGER, True), (Mode.COMPILED, True)]
    assert sorted((m.value, arcs) for m, arcs in runner.configs[2:]) == \
        [("compiled", False), ("eager", False), ("reference", False)]


def test_float64_reference_can_clear_a_numeric_mismatch():
    runner = ScriptedRunner(eager=[ok(10000.0), ok(10000.0)], compiled=[compiled(10000.04), compiled(10000.04)],
                            reference=[run(Mode.REFERENCE, calls=[call(result=tensor([10000.02], "torch.float64"))])])
    assert Checker(runner).check(PROGRAM).verdict is Verdict.PASS


def test_disagreeing_eager_runs_are_unstable():
    # the second eager run perturbs compiler state; when it disagrees, an unperturbed one decides
    runner = ScriptedRunner(eager=[ok(1.0), ok(7.0), ok(7.0)], compiled=[compiled(2.0), compiled(2.0)],
                            reference=[run(Mode.REFERENCE)])
    result = Checker(runner).check(PROGRAM)
    assert result.verdict is Verdict.UNSTABLE and "two eager runs disagree" in result.reason


def test_divergence_that_does_not_reproduce_is_unstable():
    runner = ScriptedRunner(eager=[ok(1.0), ok(1.0)], compiled=[compiled(2.0), compiled(1.0)],
                            reference=[run(Mode.REFERENCE)])
    result = Checker(runner).check(PROGRAM)
    assert result.verdict is Verdict.UNSTABLE and "did not reproduce" in result.reason


def test_non_numeric_findings_skip_the_reference_run():
    hang = compiled_run(outcome=Outcome.TIMEOUT, detail="t")
    runner = ScriptedRunner(eager=[ok(1.0), ok(1.0)], compiled=[hang, hang])
    assert Checker(runner).check(PROGRAM).verdict is Verdict.HANG
    assert Mode.REFERENCE not in runner.asked


def printed(text, mode=Mode.EAGER):
    return run(mode, calls=[call(result=tensor([1.0]))], text=text)


def test_two_eager_runs_agreeing_by_chance_on_a_printed_value_get_a_third_that_masks_it():
    """A set of objects prints in address order: eager and the second eager run happen to
    agree, the compiled run does not; the third eager run differs too, so the line is masked."""
    runner = ScriptedRunner(eager=[printed("order a,b\n"), printed("order a,b\n"), printed("order b,a\n")],
                            compiled=[printed("order b,a\n", Mode.COMPILED), printed("order b,a\n", Mode.COMPILED)])
    result = Checker(runner).check(PROGRAM)
    assert result.verdict is Verdict.PASS, result.reason
    assert runner.asked.count(Mode.EAGER) == 3 and result.judgement.masked


def test_a_printed_divergence_that_every_eager_run_repeats_stays_a_mismatch_after_the_third_run():
    runner = ScriptedRunner(eager=[printed("total 3\n")] * 3,
                            compiled=[printed("total 4\n", Mode.COMPILED), printed("total 4\n", Mode.COMPILED)])
    result = Checker(runner).check(PROGRAM)
    assert result.verdict is Verdict.MISMATCH and result.judgement.divergence.observation == "stdout"
    assert runner.asked.count(Mode.EAGER) == 3


# -- check tasks: the first pass a worker does whole, and what the driver does with its reply ----

SEED = Program.from_source(
    "import torch\n\n\ndef fn(x):\n    y = x + 1\n    return y.sin()\n\n\ndef inputs():\n    return (torch.ones(2),)\n",
    "queue/id:000000.py")


def ok_on(value: float, worker: int = 11):
    return replace(run(calls=[call(result=tensor([value]))]), worker=worker, seconds=0.05)


def compiled_on(value: float, worker: int = 11):
    return replace(compiled_run(calls=[call(result=tensor([value]))],
                                compile_stats=CompileStats(graphs=1, graph_breaks=("Call to user function",))),
                   worker=worker, features=frozenset({1, 2}), seconds=0.5)


LOOP = "coverage-map-key"  # a task of the fuzz loop: it names the map its coverage goes to
REFERENCE = run(Mode.REFERENCE, calls=[call(result=tensor([1.0], "torch.float64"))])


class TaskExecutor:
    """Does first passes here from scripted runs, and answers confirmation runs from queues;
    records what it was asked."""

    def __init__(self, first: list, **confirm: list) -> None:
        self.first = list(first)
        self.queues = {Mode[name.upper()]: list(values) for name, values in confirm.items()}
        self.tasks: list[CheckTask] = []
        self.runs: list[tuple[Mode, int | None]] = []
        self.builder = MutantBuilder(all_operators())
        self.lose = False

    def submit_check(self, task, config=None, *, priority=0):
        self.tasks.append(task)
        future: Future[CheckReply] = Future()
        if self.lose:
            future.set_result(CheckReply(None, lost="the worker died (exit status -9) during the run"))
        else:
            eager, compiled_ = self.first.pop(0)
            future.set_result(first_pass(task, lambda _: [eager, compiled_], oracle=Oracle(), builder=self.builder))
        return future

    def submit(self, program, mode, config=None, *, avoid=None, priority=0):
        self.runs.append((mode, avoid))
        future = Future()
        future.set_result(self.queues[mode].pop(0))
        return future


def test_a_passing_check_is_one_task_and_its_slim_result_keeps_what_the_loop_needs():
    executor = TaskExecutor([(ok_on(1.0), compiled_on(1.0))])
    reply = Checker(executor).submit(CheckTask(SEED, slim=True, coverage_key=LOOP)).result()
    assert reply.result.verdict is Verdict.PASS and executor.runs == []  # nothing to confirm
    full = compiled_on(1.0)
    assert reply.result.features == full.features | semantic_features(full) and len(reply.result.features) > 2
    assert reply.result.compiled.observation.calls == () and reply.result.compiled.features == frozenset()
    assert reply.result.compiled.observation.compile.graph_breaks == ("Call to user function",)
    assert reply.result.seconds == full.seconds + ok_on(1.0).seconds


def test_a_finding_is_confirmed_by_the_driver_on_another_worker_and_keeps_its_full_runs():
    executor = TaskExecutor([(ok_on(1.0, worker=11), compiled_on(2.0, worker=11))],
                            eager=[ok_on(1.0, worker=12)], compiled=[compiled_on(2.0, worker=12)], reference=[REFERENCE])
    reply = Checker(executor).submit(CheckTask(SEED, slim=True, coverage_key=LOOP)).result()
    assert reply.result.verdict is Verdict.MISMATCH
    # the second eager run avoids the first's worker; a float difference gets a float64 run
    assert executor.runs == [(Mode.EAGER, 11), (Mode.COMPILED, None), (Mode.REFERENCE, None)]
    assert len(reply.result.runs) == 5 and reply.result.compiled.observation.calls  # a finding is never slimmed


def test_a_divergence_that_does_not_reproduce_is_unstable():
    executor = TaskExecutor([(ok_on(1.0), compiled_on(2.0))], eager=[ok_on(1.0, worker=12)], compiled=[compiled_on(1.0)],
                            reference=[REFERENCE])
    assert Checker(executor).submit(CheckTask(SEED, coverage_key=LOOP)).result().result.verdict is Verdict.UNSTABLE


def test_a_recipe_is_built_by_the_worker_and_its_mutant_comes_back_with_what_was_tried():
    mutator = Mutator(all_operators())
    recipe = mutator.plan(random.Random(5))
    executor = TaskExecutor([(ok_on(1.0), compiled_on(1.0))])
    reply = Checker(executor).submit(CheckTask(SEED, recipe=recipe, name="mutant_of_000000.py")).result()
    expected = MutantBuilder(all_operators()).build(SEED, recipe)
    assert reply.mutant is not None and reply.mutant.program.source == expected.mutant.program.source
    assert reply.result.program.name == "mutant_of_000000.py" and reply.tried == expected.tried
    assert reply.mutant.steps == expected.mutant.steps


def test_an_invalid_mutant_comes_back_with_its_repair_request_and_what_the_rules_made_of_it():
    from mutator.mutation.operator import Step

    broken = Program.from_source(SEED.source.replace("x + 1", "x + math.pi"), "mutant_of_000000.py")
    error = exc("NameError", "name 'math' is not defined", line=5)
    eager = run(outcome=Outcome.RAISED, calls=[call(exception=error)], uncaught=error, uncaught_call=0)
    both = compiled_run(outcome=Outcome.RAISED, calls=[call(exception=error)], uncaught=error, uncaught_call=0)
    executor = TaskExecutor([(eager, both)] * 2)
    steps = (Step("E2.fake", "fn:5"),)
    asked = Checker(executor).submit(CheckTask(broken, steps=steps, parent=SEED, repair=True,
                                               coverage_key=LOOP)).result()
    assert asked.result.verdict is Verdict.INVALID and asked.request is not None
    assert asked.request.parent == SEED and asked.request.mutant.steps == steps
    assert asked.repaired is not None and "import math" in asked.repaired.program.source  # rule.define_name
    unasked = Checker(executor).submit(CheckTask(broken, steps=steps, parent=SEED, coverage_key=LOOP)).result()
    assert unasked.request is not None and unasked.repaired is None  # the request feeds invalid/ all the same


def test_a_lost_task_is_rebuilt_from_its_recipe_so_its_program_can_be_kept():
    mutator = Mutator(all_operators())
    recipe = mutator.plan(random.Random(8))
    executor = TaskExecutor([])
    executor.lose = True
    reply = Checker(executor).submit(CheckTask(SEED, recipe=recipe, name="mutant_of_000000.py")).result()
    expected = MutantBuilder(all_operators()).build(SEED, recipe).mutant
    assert reply.result.program.source == expected.program.source
    assert [r.outcome for r in reply.result.runs] == [Outcome.LOST, Outcome.LOST]
    assert reply.result.verdict is Verdict.INVALID and "died" in reply.result.eager.detail


def test_without_tasks_the_first_pass_is_done_here_with_both_runs_side_by_side():
    class Runs:
        def __init__(self) -> None:
            self.asked: list[Mode] = []

        def submit(self, program, mode, config=None, *, avoid=None):
            self.asked.append(mode)
            future = Future()
            future.set_result(ok_on(1.0) if mode is Mode.EAGER else compiled_on(1.0))
            return future

    runner = Runs()
    recipe = Mutator(all_operators()).plan(random.Random(2))
    reply = Checker(runner).submit(CheckTask(SEED, recipe=recipe, name="m.py")).result()
    assert runner.asked == [Mode.EAGER, Mode.COMPILED] and reply.result.verdict is Verdict.PASS
    assert reply.mutant is not None and reply.tried


def test_an_executor_that_fails_fails_the_check_not_silently():
    class Broken:
        def submit_check(self, task, config=None, *, priority=0):
            future = Future()
            future.set_exception(RuntimeError("no worker could start"))
            return future

    with pytest.raises(RuntimeError, match="no worker could start"):
        Checker(Broken()).submit(CheckTask(SEED, coverage_key=LOOP)).result()


def test_a_program_checked_on_its_own_runs_side_by_side_on_two_workers():
    """`mutate run`, harvest and reductions wait for each verdict: eager and compiled at once."""
    executor = TaskExecutor([], eager=[ok_on(1.0, worker=11)], compiled=[compiled_on(1.0, worker=12)])
    result = Checker(executor).check(SEED)
    assert result.verdict is Verdict.PASS and executor.tasks == []
    assert executor.runs == [(Mode.EAGER, None), (Mode.COMPILED, None)]


# -- a confirmation's second eager run perturbs compiler state (and no other run does), so that
# what a program derived from Dynamo's counters is masked wherever it went ---------------------

PERTURBED = "perturbed"  # what the scripted runner answers an eager run that perturbs
THROUGH = "through"  # ... and an eager run that calls the program's lru_caches through


class ConfigRecordingRunner:
    """Answers each run from a queue per kind (eager, perturbed, compiled, reference) and
    records every run asked for with the configuration it came with."""

    def __init__(self, *, config: RunConfig | None = None, **results):
        self.config = config or RunConfig()
        self.queues = {kind: list(values) for kind, values in results.items()}
        self.asked: list[tuple[Mode, RunConfig | None, int | None]] = []

    def submit(self, program, mode, config=None, *, avoid=None):
        self.asked.append((mode, config, avoid))
        perturbing = (config or self.config).perturb_compiler_state
        kind = PERTURBED if perturbing and mode is Mode.EAGER else mode.value
        if mode is Mode.EAGER and (config or self.config).lru_cache_calls_through:
            kind = THROUGH
        future = Future()
        future.set_result(self.queues[kind].pop(0))
        return future

    def perturbed_runs(self) -> list[Mode]:
        return [mode for mode, config, _ in self.asked if config is not None and config.perturb_compiler_state]


def profiles(*rows) -> MapValue:
    """The program's globals: `profiles`, a list of what it copied out of counters["frames"]
    after each call (tuples of (key, count) pairs)."""
    return MapValue("dict", (("profiles", SeqValue("list", tuple(
        SeqValue("tuple", tuple(SeqValue("tuple", pair) for pair in row)) for row in rows))),))


def copying(mode: Mode, row: tuple, *, result: int = 1, **kwargs):
    """A run whose one call returned `result` and after which `profiles` held `row`."""
    one = dataclasses.replace(call(result=tensor([result], "torch.int64")), program_state=profiles(row))
    return compiled_run(calls=[one], **kwargs) if mode is Mode.COMPILED else run(mode, calls=[one], **kwargs)


EAGER_ROW = ()  # nothing compiled: counters["frames"] is empty
COMPILED_ROW = (("ok", 1), ("total", 1))
PERTURBED_ROW = (("mutator: perturbed compiler state", 1009),)


def test_only_the_second_eager_run_perturbs_and_counters_copied_into_globals_pass():
    eager = copying(Mode.EAGER, EAGER_ROW)
    runner = ConfigRecordingRunner(eager=[eager, eager], compiled=[copying(Mode.COMPILED, COMPILED_ROW)] * 2,
                                   perturbed=[copying(Mode.EAGER, PERTURBED_ROW)])
    result = Checker(runner).check(PROGRAM)
    assert result.verdict is Verdict.PASS, result.reason
    assert result.judgement.masked == ("call 1 (fn) program globals after the call['profiles'][0]",)
    modes = [mode for mode, _, _ in runner.asked]
    assert modes == [Mode.EAGER, Mode.COMPILED, Mode.EAGER, Mode.COMPILED, Mode.EAGER]
    assert runner.perturbed_runs() == [Mode.EAGER]
    assert runner.asked[2][1].perturb_compiler_state  # the second eager run: the confirmation's first
    assert not any(config is not None and config.perturb_compiler_state for _, config, _ in runner.asked[3:])


def test_the_perturbed_run_keeps_the_checkers_configuration_and_goes_to_another_worker():
    eager = dataclasses.replace(copying(Mode.EAGER, EAGER_ROW), worker=41)
    configured = RunConfig(timeout=7, memory_mb=512, backend="aot_eager", sandbox="off")
    runner = ConfigRecordingRunner(eager=[eager, eager], compiled=[copying(Mode.COMPILED, COMPILED_ROW)] * 2,
                                   perturbed=[copying(Mode.EAGER, PERTURBED_ROW)])
    Checker(runner, config=configured).check(PROGRAM)
    (perturbed,) = [(config, avoid) for _, config, avoid in runner.asked if config.perturb_compiler_state]
    # the confirmation's runs record no arcs (they only judge)
    assert perturbed == (dataclasses.replace(configured, perturb_compiler_state=True, arcs=False), 41)
    asked = [config for _, config, _ in runner.asked]
    assert asked.count(configured) == 2 and asked.count(dataclasses.replace(configured, arcs=False)) == 2


def test_a_checker_without_configuration_perturbs_its_runners():
    eager = copying(Mode.EAGER, EAGER_ROW)
    runner = ConfigRecordingRunner(config=RunConfig(timeout=9), eager=[eager, eager],
                                   compiled=[copying(Mode.COMPILED, COMPILED_ROW)] * 2,
                                   perturbed=[copying(Mode.EAGER, PERTURBED_ROW)])
    Checker(runner).check(PROGRAM)
    (perturbed,) = [config for _, config, _ in runner.asked if config is not None and config.perturb_compiler_state]
    assert perturbed == RunConfig(timeout=9, perturb_compiler_state=True, arcs=False)
    assert all(config in (None, RunConfig(timeout=9), RunConfig(timeout=9, arcs=False)) for _, config, _ in runner.asked
               if config is None or not config.perturb_compiler_state)


def test_a_task_configuration_goes_to_every_run_and_into_the_result():
    eager = copying(Mode.EAGER, EAGER_ROW, result=1)
    compiled = copying(Mode.COMPILED, COMPILED_ROW, result=2)
    runner = ConfigRecordingRunner(config=RunConfig(timeout=9), eager=[eager, eager], compiled=[compiled, compiled],
                                   perturbed=[copying(Mode.EAGER, PERTURBED_ROW, result=1)])
    reply = Checker(runner).submit(CheckTask(PROGRAM, configuration="nested-graph-breaks")).result()
    assert reply.result.verdict is Verdict.MISMATCH
    assert reply.result.configuration == "nested-graph-breaks"
    assert {config.configuration for _, config, _ in runner.asked} == {"nested-graph-breaks"}
    assert all(config.timeout == 9 for _, config, _ in runner.asked)


def test_a_real_divergence_beside_a_counters_copy_is_still_the_mismatch():
    eager = copying(Mode.EAGER, EAGER_ROW, result=1)
    compiled = copying(Mode.COMPILED, COMPILED_ROW, result=2)
    runner = ConfigRecordingRunner(eager=[eager, eager], compiled=[compiled, compiled],
                                   perturbed=[copying(Mode.EAGER, PERTURBED_ROW, result=1)])
    result = Checker(runner).check(PROGRAM)
    assert result.verdict is Verdict.MISMATCH
    assert result.judgement.divergence.where == "call 1 (fn) result" and "more" not in result.reason


def test_without_counters_the_confirmation_costs_what_it_did():
    eager = copying(Mode.EAGER, EAGER_ROW, result=1)
    runner = ConfigRecordingRunner(eager=[eager], compiled=[copying(Mode.COMPILED, EAGER_ROW, result=2)] * 2,
                                   perturbed=[eager])
    assert Checker(runner).check(PROGRAM).verdict is Verdict.MISMATCH
    assert [mode for mode, _, _ in runner.asked] == [Mode.EAGER, Mode.COMPILED, Mode.EAGER, Mode.COMPILED]


COMPILER_CHECK = exc("AssertionError", "", bases=("Exception", "BaseException", "object"), line=9, check="compiler")


def test_a_perturbed_run_that_fails_the_programs_check_of_counters_keeps_a_real_mismatch():
    # `assert not counters["graph_break"]` at the end holds eagerly and under compilation; only
    # the perturbed run (whose every category has an entry) fails it
    eager = copying(Mode.EAGER, EAGER_ROW, result=1)
    compiled = copying(Mode.COMPILED, COMPILED_ROW, result=2)
    stopped = copying(Mode.EAGER, PERTURBED_ROW, result=1, outcome=Outcome.RAISED, uncaught=COMPILER_CHECK)
    runner = ConfigRecordingRunner(eager=[eager, eager, eager], compiled=[compiled, compiled], perturbed=[stopped])
    result = Checker(runner).check(PROGRAM)
    assert result.verdict is Verdict.MISMATCH, result.reason
    assert result.judgement.divergence.where == "call 1 (fn) result"
    assert runner.perturbed_runs() == [Mode.EAGER]  # the run standing in for it is unperturbed
    assert [mode for mode, _, _ in runner.asked] == [Mode.EAGER, Mode.COMPILED, Mode.EAGER, Mode.COMPILED, Mode.EAGER]


def test_a_check_of_counters_that_only_the_perturbed_run_passes_is_no_false_alarm():
    # `assert counters["frames"]["total"] >= 1` after copying them: the eager run stops there
    # (nothing compiled), the compiled run passes, and so does the perturbed run
    eager = copying(Mode.EAGER, EAGER_ROW, outcome=Outcome.RAISED, uncaught=COMPILER_CHECK)
    runner = ConfigRecordingRunner(eager=[eager, eager], compiled=[copying(Mode.COMPILED, COMPILED_ROW)] * 2,
                                   perturbed=[copying(Mode.EAGER, PERTURBED_ROW)])
    result = Checker(runner).check(PROGRAM)
    assert result.verdict is Verdict.PASS, result.reason
    assert "call 1 (fn) program globals after the call['profiles'][0]" in result.judgement.masked


def test_an_unstable_program_stays_unstable_with_a_perturbed_run():
    eager = copying(Mode.EAGER, EAGER_ROW, result=1)
    runner = ConfigRecordingRunner(eager=[eager, copying(Mode.EAGER, EAGER_ROW, result=7)],
                                   compiled=[copying(Mode.COMPILED, EAGER_ROW, result=2)] * 2,
                                   perturbed=[copying(Mode.EAGER, EAGER_ROW, result=5)])
    result = Checker(runner).check(PROGRAM)
    assert result.verdict is Verdict.UNSTABLE and "two eager runs disagree" in result.reason


def test_derived_paths_are_values_only():
    first = copying(Mode.EAGER, EAGER_ROW, result=1)
    stopped = copying(Mode.EAGER, PERTURBED_ROW, result=1, outcome=Outcome.RAISED, uncaught=COMPILER_CHECK)
    assert derived_paths(first, stopped) == {"call 1 (fn) program globals after the call['profiles'][0]"}
    other_result = copying(Mode.EAGER, PERTURBED_ROW, result=3, outcome=Outcome.RAISED, uncaught=COMPILER_CHECK)
    assert derived_paths(first, other_result) == frozenset()  # a call's result is never masked
    timed_out = copying(Mode.EAGER, PERTURBED_ROW, outcome=Outcome.TIMEOUT)
    assert derived_paths(first, timed_out) == frozenset()
    both_stopped = copying(Mode.EAGER, EAGER_ROW, outcome=Outcome.RAISED, uncaught=COMPILER_CHECK)
    assert derived_paths(both_stopped, stopped) == frozenset()


# -- where Dynamo traced through a functools.lru_cache wrapper (documented), one more eager run
# calls the program's cached functions through inside compiled calls, as Dynamo does ---------

def logging_calls(mode: Mode, calls: int, *, result: int = 1, traced: tuple[str, ...] = ()):
    """A run whose one call returned `result`, after which the cached function had logged `calls` calls."""
    state = MapValue("dict", (("calls", SeqValue("list", (4,) * calls)),))
    one = dataclasses.replace(call(result=tensor([result], "torch.int64")), program_state=state,
                              lru_cache_traced=traced)
    return compiled_run(calls=[one]) if mode is Mode.COMPILED else run(mode, calls=[one])


def test_a_divergence_that_an_eager_run_calling_lru_caches_through_explains_is_documented():
    # eager runs: the first, and the third that a divergence in globals gets
    runner = ConfigRecordingRunner(eager=[logging_calls(Mode.EAGER, 1)] * 2, perturbed=[logging_calls(Mode.EAGER, 1)],
                                   compiled=[logging_calls(Mode.COMPILED, 2, traced=("p.py:3",))] * 2,
                                   through=[logging_calls(Mode.EAGER, 2)])
    result = Checker(runner).check(PROGRAM)
    assert result.verdict is Verdict.PASS and result.reason.startswith("documented: Dynamo traced through "
                                                                        "functools.lru_cache at p.py:3"), result.reason
    (through,) = [(mode, config) for mode, config, _ in runner.asked if config and config.lru_cache_calls_through]
    assert through == (Mode.EAGER, RunConfig(lru_cache_calls_through=True, arcs=False)) and len(result.runs) == 6


def test_a_divergence_the_cache_does_not_explain_stays_a_mismatch():
    compiled = logging_calls(Mode.COMPILED, 2, result=2, traced=("p.py:3",))
    runner = ConfigRecordingRunner(eager=[logging_calls(Mode.EAGER, 1)], perturbed=[logging_calls(Mode.EAGER, 1)],
                                   compiled=[compiled] * 2, through=[logging_calls(Mode.EAGER, 2)])
    result = Checker(runner).check(PROGRAM)
    assert result.verdict is Verdict.MISMATCH and result.judgement.divergence.where == "call 1 (fn) result"


def test_without_dynamo_tracing_through_a_cache_no_run_calls_one_through():
    runner = ConfigRecordingRunner(eager=[logging_calls(Mode.EAGER, 1)] * 2, perturbed=[logging_calls(Mode.EAGER, 1)],
                                   compiled=[logging_calls(Mode.COMPILED, 2)] * 2, through=[])
    result = Checker(runner).check(PROGRAM)
    assert result.verdict is Verdict.MISMATCH and len(result.runs) == 5  # no run calling caches through


def test_a_bug_verdict_the_caller_only_counts_is_not_confirmed():
    eager = copying(Mode.EAGER, EAGER_ROW, result=1)
    compiled = copying(Mode.COMPILED, COMPILED_ROW, result=2)
    asked = []

    def known(result):
        asked.append(result.verdict)
        return True

    runner = ConfigRecordingRunner(eager=[eager], compiled=[compiled])
    reply = Checker(runner, count_only=known).submit(CheckTask(PROGRAM)).result()
    assert reply.result.verdict is Verdict.MISMATCH and not reply.confirmed
    assert [mode for mode, _, _ in runner.asked] == [Mode.EAGER, Mode.COMPILED]  # no confirmation runs
    assert asked == [Verdict.MISMATCH]
    runner = ConfigRecordingRunner(eager=[eager, eager], compiled=[compiled, compiled],
                                   perturbed=[copying(Mode.EAGER, PERTURBED_ROW, result=1)])
    reply = Checker(runner, count_only=lambda result: False).submit(CheckTask(PROGRAM)).result()
    assert reply.confirmed and len(runner.asked) > 2


def test_a_checks_cpu_is_told_by_stage_with_compilation_apart_and_confirmation_as_one():
    from mutator.core import cpu
    from mutator.core.observation import CompileStats

    eager = replace(run(), cpu=((cpu.SETUP, 0.01), (cpu.PROGRAM, 0.1), (cpu.EXIT, 0.006), (cpu.ISOLATION, 0.02)))
    compiled = compiled_run(compile_stats=CompileStats(compile_seconds=0.3))
    compiled = replace(compiled, cpu=((cpu.PROGRAM, 0.5), (cpu.COVERAGE, 0.05)))
    again = replace(run(), cpu=((cpu.PROGRAM, 0.2), (cpu.SETUP, 0.01)))
    result = CheckResult(PROGRAM, Judgement(Verdict.PASS, ""), (eager, compiled, again))
    reply = CheckReply(result, cpu=((cpu.BUILD, 0.04), (cpu.JUDGE, 0.03), (cpu.IPC, 0.001)))
    lines: dict[str, float] = {}
    for line, seconds in reply.cpu_lines():
        lines[line] = lines.get(line, 0.0) + seconds
    assert lines == pytest.approx({cpu.LINES[cpu.BUILD]: 0.04, cpu.LINES[cpu.JUDGE]: 0.03, cpu.LINES[cpu.IPC]: 0.001,
                                   cpu.EAGER_RUN: 0.1, cpu.LINES[cpu.SETUP]: 0.03, cpu.LINES[cpu.EXIT]: 0.006,
                                   cpu.COMPILE: 0.3,
                                   cpu.COMPILED_RUN: 0.2, cpu.LINES[cpu.COVERAGE]: 0.05, cpu.CONFIRMATION: 0.21})
    ledger = cpu.Ledger()
    ledger.add_all(reply.cpu_lines())
    assert ledger.total == pytest.approx(sum(lines.values()))


def test_a_task_without_arcs_runs_under_the_checker_s_config_without_them():
    checker = Checker(ConfigRecordingRunner(config=RunConfig(timeout=7.0)))
    assert checker.config_of(CheckTask(PROGRAM)).arcs
    plain = checker.config_of(CheckTask(PROGRAM, configuration="dynamic", arcs=False))
    assert (plain.arcs, plain.configuration, plain.timeout) == (False, "dynamic", 7.0)


# -- a hit under a configuration whose signature is another configuration's bug ----------------

def test_a_taken_signature_under_a_configuration_is_checked_under_the_defaults_and_needs_it_when_they_pass():
    from mutator.findings.signature import Signature

    runner = ScriptedRunner(eager=[ok(1.0)], compiled=[compiled(2.0), compiled(1.0)])
    asked, counted = [], []

    def taken(result):
        asked.append(result.configuration)
        return True

    checker = Checker(runner, count_only=lambda result: counted.append(result) or True, taken=taken,
                      same_bug=lambda one, other: Signature.of(one) == Signature.of(other))
    reply = checker.submit(CheckTask(PROGRAM, configuration="graph-dedup")).result()
    assert asked == ["graph-dedup"] and runner.asked == [Mode.EAGER, Mode.COMPILED, Mode.COMPILED]
    [result] = counted  # what the caller is asked about (and files) is the result that needs it
    assert reply.result is result and result.verdict is Verdict.MISMATCH and result.needs_configuration
    signature = Signature.of(result)
    assert signature.needs == "graph-dedup" and "[needs graph-dedup]" in signature.describe()
    assert signature.plain() == Signature.of(replace(result, needs_configuration=False)) != signature
    assert "needs-graph-dedup" in signature.slug() and Signature(**signature.as_json()) == signature
    assert "needs" not in signature.plain().as_json() and signature.base() == signature


def same_signature(one, other):
    from mutator.findings.signature import Signature

    return Signature.of(one) == Signature.of(other)


def test_a_taken_signature_that_fails_alike_under_the_defaults_is_the_other_bug():
    from mutator.core import cpu

    again = replace(compiled(3.0), cpu=((cpu.SETUP, 0.01), (cpu.PROGRAM, 0.25)))
    runner = ScriptedRunner(eager=[ok(1.0)], compiled=[compiled(2.0), again])
    reply = Checker(runner, count_only=lambda result: True, taken=lambda result: True, same_bug=same_signature) \
        .submit(CheckTask(PROGRAM, configuration="graph-dedup")).result()
    assert not reply.result.needs_configuration and not reply.confirmed  # counted as the known bug's hit
    assert runner.asked == [Mode.EAGER, Mode.COMPILED, Mode.COMPILED]
    assert dict(reply.cpu_lines())[cpu.LINES[cpu.DEFAULTS]] == pytest.approx(0.26)  # the run it took, in the ledger


def test_under_the_defaults_or_with_a_signature_not_taken_no_run_is_added():
    for configuration, taken in (("default", True), ("graph-dedup", False)):
        runner = ScriptedRunner(eager=[ok(1.0)], compiled=[compiled(2.0)])
        asked = []
        reply = Checker(runner, count_only=lambda result: True,
                        taken=lambda result: asked.append(1) or taken, same_bug=same_signature) \
            .submit(CheckTask(PROGRAM, configuration=configuration)).result()
        assert runner.asked == [Mode.EAGER, Mode.COMPILED] and not reply.result.needs_configuration
        assert asked == ([] if configuration == "default" else [1])
