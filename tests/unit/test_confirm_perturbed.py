"""A confirmation's second eager run perturbs compiler state (and no other run does), so that
what a program derived from Dynamo's counters is masked wherever it went; against a scripted
runner: no processes, no torch."""

from __future__ import annotations

import dataclasses
from concurrent.futures import Future

from mutator.judge.check import Checker, derived_paths
from mutator.core.observation import Mode, Outcome, RunConfig
from mutator.core.program import Program
from mutator.core.values import MapValue, SeqValue
from mutator.core.verdict import Verdict

from tests.helpers import call, compiled_run, exc, run, tensor

PROGRAM = Program.from_source("def fn(x):\n    return x\ndef inputs():\n    return (1,)\n", "prog.py")
PERTURBED = "perturbed"  # what the scripted runner answers an eager run that perturbs


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
    assert perturbed == (dataclasses.replace(configured, perturb_compiler_state=True), 41)
    assert [config for _, config, _ in runner.asked].count(configured) == 4


def test_a_checker_without_configuration_perturbs_its_runners():
    eager = copying(Mode.EAGER, EAGER_ROW)
    runner = ConfigRecordingRunner(config=RunConfig(timeout=9), eager=[eager, eager],
                                   compiled=[copying(Mode.COMPILED, COMPILED_ROW)] * 2,
                                   perturbed=[copying(Mode.EAGER, PERTURBED_ROW)])
    Checker(runner).check(PROGRAM)
    (perturbed,) = [config for _, config, _ in runner.asked if config is not None]
    assert perturbed == RunConfig(timeout=9, perturb_compiler_state=True)


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
