"""Check tasks: the first pass a worker does whole, and what the driver does with its reply.
A scripted executor stands in for the workers: no processes, no torch."""

from __future__ import annotations

import random
from concurrent.futures import Future
from dataclasses import replace

import pytest

from mutator.judge.check import Checker, CheckReply, CheckTask, first_pass
from mutator.core.features import semantic_features
from mutator.mutation.mutator import Mutator, MutantBuilder
from mutator.mutation.registry import all_operators
from mutator.core.observation import CompileStats, Mode, Outcome
from mutator.judge.oracle import Oracle
from mutator.core.program import Program
from mutator.core.verdict import Verdict

from tests.helpers import call, compiled_run, exc, run, tensor

SEED = Program.from_source(
    "import torch\n\n\ndef fn(x):\n    y = x + 1\n    return y.sin()\n\n\ndef inputs():\n    return (torch.ones(2),)\n",
    "queue/id:000000.py")


def ok(value: float, worker: int = 11):
    return replace(run(calls=[call(result=tensor([value]))]), worker=worker, seconds=0.05)


def compiled(value: float, worker: int = 11):
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
    executor = TaskExecutor([(ok(1.0), compiled(1.0))])
    reply = Checker(executor).submit(CheckTask(SEED, slim=True, coverage_key=LOOP)).result()
    assert reply.result.verdict is Verdict.PASS and executor.runs == []  # nothing to confirm
    full = compiled(1.0)
    assert reply.result.features == full.features | semantic_features(full) and len(reply.result.features) > 2
    assert reply.result.compiled.observation.calls == () and reply.result.compiled.features == frozenset()
    assert reply.result.compiled.observation.compile.graph_breaks == ("Call to user function",)
    assert reply.result.seconds == full.seconds + ok(1.0).seconds


def test_a_finding_is_confirmed_by_the_driver_on_another_worker_and_keeps_its_full_runs():
    executor = TaskExecutor([(ok(1.0, worker=11), compiled(2.0, worker=11))],
                            eager=[ok(1.0, worker=12)], compiled=[compiled(2.0, worker=12)], reference=[REFERENCE])
    reply = Checker(executor).submit(CheckTask(SEED, slim=True, coverage_key=LOOP)).result()
    assert reply.result.verdict is Verdict.MISMATCH
    # the second eager run avoids the first's worker; a float difference gets a float64 run
    assert executor.runs == [(Mode.EAGER, 11), (Mode.COMPILED, None), (Mode.REFERENCE, None)]
    assert len(reply.result.runs) == 5 and reply.result.compiled.observation.calls  # a finding is never slimmed


def test_a_divergence_that_does_not_reproduce_is_unstable():
    executor = TaskExecutor([(ok(1.0), compiled(2.0))], eager=[ok(1.0, worker=12)], compiled=[compiled(1.0)],
                            reference=[REFERENCE])
    assert Checker(executor).submit(CheckTask(SEED, coverage_key=LOOP)).result().result.verdict is Verdict.UNSTABLE


def test_a_recipe_is_built_by_the_worker_and_its_mutant_comes_back_with_what_was_tried():
    mutator = Mutator(all_operators())
    recipe = mutator.plan(random.Random(5))
    executor = TaskExecutor([(ok(1.0), compiled(1.0))])
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
            future.set_result(ok(1.0) if mode is Mode.EAGER else compiled(1.0))
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
    executor = TaskExecutor([], eager=[ok(1.0, worker=11)], compiled=[compiled(1.0, worker=12)])
    result = Checker(executor).check(SEED)
    assert result.verdict is Verdict.PASS and executor.tasks == []
    assert executor.runs == [(Mode.EAGER, None), (Mode.COMPILED, None)]
