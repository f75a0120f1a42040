"""The confirmation protocol, against a scripted runner: no processes, no torch."""

from concurrent.futures import Future

from mutator.judge.check import Checker
from mutator.core.observation import Mode, Outcome
from mutator.core.program import Program
from mutator.core.verdict import Verdict

from tests.helpers import call, compiled_run, run, tensor

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
