"""After reduction: canonical forms, merging findings (and finishing a merge a kill cut
short), the background reducer's share of the workers, the issue report."""

from __future__ import annotations

import json
import shutil
import threading
from concurrent.futures import Future
from pathlib import Path

from mutator.judge.check import CheckResult
from mutator.findings.store import FindingStore
from mutator.report.issue import report_markdown, summary_row, title
from mutator.core.observation import ExecResult, Mode, Outcome as RunOutcome
from mutator.judge.oracle import Judgement
from mutator.core.program import Program
from mutator.exec.pool import URGENT
from mutator.reduce.background import ThrottledRunner
from mutator.findings.canonical import canonical_digest, canonical_form
from mutator.core.verdict import Verdict

from tests.helpers import compiled_run, exc, run

ONE = '''\
import torch


class Box(dict):
    """A docstring."""
    def keys(self):
        return ["a"]


def fn(x):
    return x + len(Box(a=1, b=2))


def inputs():
    return (torch.ones(3),)
'''

TWO = ONE.replace("Box", "Bag").replace("a=1, b=2", "a=5, b=7").replace('    """A docstring."""\n', "")


def test_renamed_identifiers_and_other_literals_have_the_same_canonical_form():
    assert canonical_digest(ONE) == canonical_digest(TWO)
    assert "v0" in canonical_form(ONE) and "keys" in canonical_form(ONE) and "torch.ones" in canonical_form(ONE)


def test_another_method_or_structure_is_another_form():
    assert canonical_digest(ONE) != canonical_digest(ONE.replace("def keys", "def items"))
    assert canonical_digest(ONE) != canonical_digest(ONE.replace("x + len", "x * len"))


def _crash(location_type: str, source: str, name: str) -> CheckResult:
    judgement = Judgement(Verdict.CRASH, f"the compiled run raised {location_type}",
                          exception=exc(location_type, dynamo=True))
    return CheckResult(Program.from_source(source, name), judgement, (run(), compiled_run()))


def _two_findings(root: Path):
    store = FindingStore(root)
    first, _ = store.record(_crash("TypeError", ONE, "a.py"), provenance="A1.x@fn:1", parent=1, elapsed=1.0)
    second, _ = store.record(_crash("ValueError", TWO, "b.py"), provenance="B1.y@fn:1", parent=2, elapsed=2.0)
    return store, first, second


def test_a_merge_moves_the_directory_and_later_hits_follow_it(tmp_path: Path):
    store, first, second = _two_findings(tmp_path)
    store.merge(second, into=first)
    moved = tmp_path / first.directory / "merged" / Path(second.directory).name
    assert moved.is_dir() and not (tmp_path / second.directory).exists()
    assert first.hits == 2 and "Merged after reduction" in (tmp_path / first.directory / "README.md").read_text()
    store.record(_crash("ValueError", TWO, "c.py"), provenance="B1.z@fn:1", parent=3, elapsed=3.0)
    assert first.hits == 3 and not (tmp_path / second.directory).exists()
    reloaded = FindingStore(tmp_path)
    assert list(reloaded.findings) == [first.signature]
    assert reloaded.aliases == {second.signature: first.signature}


def test_a_merge_cut_short_before_the_move_is_finished_on_the_next_load(tmp_path: Path):
    store, first, second = _two_findings(tmp_path)
    store.merge(second, into=first)
    moved = tmp_path / first.directory / "merged" / Path(second.directory).name
    shutil.move(str(moved), str(tmp_path / second.directory))  # as if killed between the record and the move
    reloaded = FindingStore(tmp_path)
    assert list(reloaded.findings) == [first.signature] and moved.is_dir()
    assert not (tmp_path / second.directory).exists()


def test_the_record_of_a_merge_is_written_before_the_move(tmp_path: Path, monkeypatch):
    store, first, second = _two_findings(tmp_path)
    seen = {}
    real_rename = Path.rename

    def rename(self, target):
        seen["record"] = json.loads((tmp_path / first.directory / "finding.json").read_text())["merged"]
        return real_rename(self, target)
    monkeypatch.setattr(Path, "rename", rename)
    store.merge(second, into=first)
    assert seen["record"] and seen["record"][0]["moved_from"] == second.directory


class _Instant:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.submitted = 0
        self.priorities: list[int] = []

    def submit(self, program, mode, config=None, *, avoid=None, priority=0):
        self.submitted += 1
        self.priorities.append(priority)
        future: Future[ExecResult] = Future()
        future.set_result(ExecResult(program="p.py", mode=mode, outcome=RunOutcome.COMPLETED,
                                     observation=run().observation, seconds=self.seconds))
        return future


def test_the_throttled_runner_keeps_its_share_of_the_workers():
    now = [0.0]
    pool = _Instant(seconds=1.0)
    throttled = ThrottledRunner(pool, workers=2, max_share=0.25, stop=threading.Event(), clock=lambda: now[0])
    program = Program.from_source(ONE, "p.py")
    throttled.submit(program, Mode.EAGER)  # 1 s used at t=0
    assert throttled.over_budget()
    now[0] = 1.9  # 2 workers x 25% x 1.9 s = 0.95 s of budget
    assert throttled.over_budget()
    now[0] = 2.1
    assert not throttled.over_budget()
    throttled.charge(5.0)  # a repro.py run outside the pool counts too
    assert throttled.over_budget()
    stop = threading.Event()
    stop.set()
    stopped = ThrottledRunner(pool, workers=2, max_share=0.0, stop=stop, clock=lambda: 0.0)
    stopped.submit(program, Mode.EAGER)  # never waits once stopping
    assert pool.submitted == 2
    assert pool.priorities == [URGENT, URGENT]  # its share is bounded, so it jumps the loop's queue


def test_the_report_has_the_template_parts_and_says_when_it_is_not_reduced(tmp_path: Path):
    store, first, _ = _two_findings(tmp_path)
    text = report_markdown(first, repro_source=None, versions={"torch": "2.13.0+cpu", "python": "3.11"})
    assert text.startswith("# [dynamo] TypeError")
    for part in ("### 🐛 Describe the bug", "### Versions", "torch: 2.13.0+cpu", "### How it was found",
                 "`A1.x@fn:1`", "Not reduced yet: run `mutate reduce`", "`oncall: pt2`", "`module: dynamo`"):
        assert part in text, part
    first.reduction = dict(confirmed=True, lines_after=7, source=ONE, repro_reproduces=True, label="frontend",
                           repro_output="eager: 1\ncompiled: 2\nAssertionError: result differs",
                           ablation=[dict(setting='backend="eager"', verdict="CRASH", same_signature=True)])
    text = report_markdown(first, repro_source="print('repro')\n", versions={"torch": "2.13.0+cpu"})
    assert "print('repro')" in text and "AssertionError: result differs" in text and "| CRASH | yes |" in text
    row = summary_row(first)
    assert row["reduced_lines"] == 7 and row["repro"] and row["ablation"] == "frontend" and row["taxonomy"] == "A1"
    assert title(first).startswith("[dynamo]")


def _reduced(finding, source: str, result: CheckResult):
    from mutator.reduce.problem import ReductionStats
    from mutator.reduce.reducer import Reduction
    from mutator.reduce.driver import Outcome

    program = Program.from_source(source, "reduced.py")
    return Outcome(finding.directory, reduction=Reduction(program, program, finding.signature, result, True,
                                                          ReductionStats(), 1.0))


def test_record_reduction_merges_same_kind_twins_into_the_earlier_finding(tmp_path: Path):
    from mutator.reduce.driver import record_reduction

    store, first, second = _two_findings(tmp_path)
    result = _crash("TypeError", ONE, "a.py")
    assert record_reduction(store, first, _reduced(first, ONE, result)) is first
    assert record_reduction(store, second, _reduced(second, TWO, result)) is first
    assert list(store.findings) == [first.signature] and first.merged[0]["moved_from"] == second.directory


def test_a_crash_and_a_mismatch_with_one_canonical_program_stay_apart(tmp_path: Path):
    from mutator.reduce.driver import record_reduction

    store, first, _ = _two_findings(tmp_path)
    judgement = Judgement(Verdict.MISMATCH, "call 1 (fn) result: values differ")
    mismatch_result = CheckResult(Program.from_source(TWO, "m.py"), judgement, (run(), compiled_run()))
    mismatch, _ = store.record(mismatch_result, provenance="B1.y@fn:1", parent=2, elapsed=3.0)
    record_reduction(store, first, _reduced(first, ONE, mismatch_result))
    record_reduction(store, mismatch, _reduced(mismatch, TWO, mismatch_result))
    assert first.signature in store.findings and mismatch.signature in store.findings and not first.merged


def test_a_mismatch_report_says_what_differs_in_the_reproducer_s_words(tmp_path: Path):
    store = FindingStore(tmp_path)
    judgement = Judgement(Verdict.MISMATCH, "call 1 (fn) result[1][2]: eager 'long', compiled 'other'")
    finding, _ = store.record(CheckResult(Program.from_source(ONE, "m.py"), judgement, (run(), compiled_run())),
                              provenance="O.x@fn:1", parent=1, elapsed=1.0)
    finding.reduction = dict(confirmed=True, lines_after=5, source=ONE, repro_reproduces=True,
                             repro_output="eager: ('001',)\nAssertionError: result[0]: eager '001', compiled '1'\n")
    assert title(finding).endswith("differs from eager: result[0]: eager '001', compiled '1'")
    assert "result[1][2]" not in report_markdown(finding, repro_source="x = 1\n", versions={})
