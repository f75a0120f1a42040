"""What `mutate reduce` records of a reduction: same-kind twins merged into the earlier finding."""

from __future__ import annotations

from pathlib import Path

from mutator.core.program import Program
from mutator.core.verdict import Verdict
from mutator.judge.check import CheckResult
from mutator.judge.oracle import Judgement

from tests.helpers import compiled_run, run
from tests.unit.findings.helpers import ONE, TWO, crashed, two_findings


def _reduced(finding, source: str, result: CheckResult):
    from mutator.reduce.problem import ReductionStats
    from mutator.reduce.reducer import Reduction
    from mutator.reduce.driver import ReductionReport

    program = Program.from_source(source, "reduced.py")
    return ReductionReport(finding.directory, reduction=Reduction(program, program, finding.signature, result, True,
                                                          ReductionStats(), 1.0))


def test_record_reduction_merges_same_kind_twins_into_the_earlier_finding(tmp_path: Path):
    from mutator.reduce.driver import record_reduction

    store, first, second = two_findings(tmp_path)
    result = crashed("TypeError", ONE, "a.py")
    assert record_reduction(store, first, _reduced(first, ONE, result)) is first
    assert record_reduction(store, second, _reduced(second, TWO, result)) is first
    assert list(store.findings) == [first.signature] and first.merged[0]["moved_from"] == second.directory


def test_a_crash_and_a_mismatch_with_one_canonical_program_stay_apart(tmp_path: Path):
    from mutator.reduce.driver import record_reduction

    store, first, _ = two_findings(tmp_path)
    judgement = Judgement(Verdict.MISMATCH, "call 1 (fn) result: values differ")
    mismatch_result = CheckResult(Program.from_source(TWO, "m.py"), judgement, (run(), compiled_run()))
    mismatch, _ = store.record(mismatch_result, provenance="B1.y@fn:1", parent=2, elapsed=3.0)
    record_reduction(store, first, _reduced(first, ONE, mismatch_result))
    record_reduction(store, mismatch, _reduced(mismatch, TWO, mismatch_result))
    assert first.signature in store.findings and mismatch.signature in store.findings and not first.merged


class _ScriptedReducer:
    """A reducer of one configuration whose confirm says whether a program fails there."""

    def __init__(self, configuration: str, fails) -> None:
        self.configuration = configuration
        self.fails = fails
        self.confirmed: list[str] = []

    def target_of(self, check, signature):
        return "target"

    def confirm(self, program: Program, target):
        self.confirmed.append(program.source)
        if not self.fails(program.source):
            return None
        return CheckResult(program, Judgement(Verdict.CRASH, "boom"), (run(), compiled_run()),
                           configuration=self.configuration)


def _driver(fails_under: dict):
    from mutator.reduce.driver import ReduceDriver

    driver = object.__new__(ReduceDriver)
    reducers = {name: _ScriptedReducer(name, fails) for name, fails in fails_under.items()}
    driver.reducer = reducers.__getitem__
    return driver, reducers


FORCED_ONLY = ("import torch\n\n\ndef leaf(x):\n    return x + 1\n\n\ndef fn(x):\n    return leaf(x) * 2\n\n\n"
               "def inputs():\n    return (torch.ones(2),)\n")


def _forced_report():
    from mutator.findings.signature import Signature
    from mutator.reduce.driver import ReductionReport
    from mutator.reduce.problem import ReductionStats
    from mutator.reduce.reducer import Reduction

    program = Program.from_source(FORCED_ONLY, "reduced.py")
    check = CheckResult(program, Judgement(Verdict.CRASH, "boom"), (run(), compiled_run()),
                        configuration="forced-graph-breaks")
    return ReductionReport("f", reduction=Reduction(program, program, Signature("CRASH", "IndexError", "symbolic_convert.py:pop"), check, True,
                                                    ReductionStats(), 1.0), found_under="forced-graph-breaks")


def test_a_forced_graph_break_bug_is_written_with_the_break_in_the_code_when_that_fails_alike_nested():
    from mutator.reduce.explicit_breaks import BREAK

    # fails under nested graph breaks only when leaf() breaks before its return
    driver, reducers = _driver({
        "default": lambda source: False,
        "forced-graph-breaks": lambda source: True,
        "nested-graph-breaks": lambda source: f"{BREAK}\n    return x + 1" in source and source.count(BREAK) == 1})
    # (the variants: every function's returns, then leaf's, then fn's alone; none in inputs())
    report = _forced_report()
    driver._without_configuration(report, lambda: False)
    assert report.needs_configuration is True
    assert driver._explicit_breaks(report, lambda: False)
    assert report.explicit_breaks and report.configuration == "nested-graph-breaks"
    assert report.reduction.reduced.source.count(BREAK) == 1
    assert len(reducers["nested-graph-breaks"].confirmed) == 2  # every function's breaks first, then leaf's alone
    driver._without_configuration(report, lambda: False)  # and the explicit program still needs nesting
    assert report.needs_configuration is True and report.as_json()["explicit_breaks"] is True


def test_a_forced_graph_break_bug_keeps_the_setting_when_no_explicit_break_fails_alike():
    driver, reducers = _driver({"default": lambda source: False, "forced-graph-breaks": lambda source: True,
                                "nested-graph-breaks": lambda source: False})
    report = _forced_report()
    driver._without_configuration(report, lambda: False)
    assert not driver._explicit_breaks(report, lambda: False)
    assert report.configuration == "forced-graph-breaks" and not report.explicit_breaks
    assert report.reduction.reduced.source == FORCED_ONLY
