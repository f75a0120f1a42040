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
