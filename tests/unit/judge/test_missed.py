"""A bug verdict on a test whose own checks pass in both runs is a divergence the test
misses: listed apart from the tests that already fail, with the comparison that saw it, and
said so in the finding's README and report.md."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from mutator.core.observation import TestOutcome
from mutator.core.program import Program
from mutator.core.verdict import Verdict
from mutator.judge.missed import missed_by_own_checks
from mutator.judge.check import CheckResult
from mutator.judge.compare import Divergence
from mutator.judge.oracle import Judgement
from mutator.findings.store import FindingStore
from mutator.report.issue import report_markdown

from tests.helpers import compiled_run, exc, run
from tests.unit.harvest.helpers import harvester

KEYS = Divergence("result", "call 1 (f) result[0]", "keys", "same keys in a different order: eager ['a', 'b'], "
                  "compiled ['b', 'a']", kind="dict")
TYPE = Divergence("result", "call 1 (grow) result[0]", "type", "eager Tagged, compiled set", kind="Tagged")
TEST = '''\
import unittest

import torch


class Checks(unittest.TestCase):
    def test_keys(self):
        fn = torch.compile(lambda d: dict(d), backend="eager")
        self.assertEqual(fn({"a": 1}), {"a": 1})

    def test_fails(self):
        fn = torch.compile(lambda d: dict(d), backend="eager")
        self.assertEqual(fn({"a": 1}), {"a": 2})
'''


def mismatch(program: Program, divergence: Divergence, *, compiled_uncaught=None, tests=()) -> CheckResult:
    return CheckResult(program, Judgement(Verdict.MISMATCH, str(divergence), divergence=divergence),
                       (run(tests=tests), compiled_run(uncaught=compiled_uncaught, tests=tests)))


PROGRAM = Program.from_source("import torch\ntorch.compile(abs)(torch.ones(1))\n", "p.py")


def test_the_comparison_that_saw_it_is_named():
    keys = missed_by_own_checks(mismatch(PROGRAM, KEYS))
    assert keys is not None and keys.comparison == "order of keys of a compiled call's result"
    assert keys.as_json() == dict(comparison="order of keys of a compiled call's result", where=KEYS.where,
                                  detail=KEYS.detail)
    subtype = missed_by_own_checks(mismatch(PROGRAM, TYPE))
    assert subtype is not None and subtype.comparison == "type of a compiled call's result"


def test_a_check_that_fails_or_a_test_that_does_not_pass_saw_it():
    assert missed_by_own_checks(mismatch(PROGRAM, KEYS, compiled_uncaught=exc("AssertionError", check="check"))) \
        is None
    failing = (TestOutcome("Checks.test_keys", "fail"),)
    assert missed_by_own_checks(mismatch(PROGRAM, KEYS, tests=failing)) is None
    assert missed_by_own_checks(replace(mismatch(PROGRAM, KEYS), judgement=Judgement(Verdict.PASS, "same"))) is None


def test_harvest_lists_them_apart_from_the_tests_that_already_fail(tmp_path: Path):
    (tmp_path / "test_weak.py").write_text(TEST)

    def check(program: Program) -> CheckResult:
        if "test_fails" in program.source.splitlines()[0]:
            return mismatch(program, KEYS, compiled_uncaught=exc("AssertionError", check="check"))
        return mismatch(program, KEYS)

    report = harvester(tmp_path / "out", check=check).harvest([tmp_path / "test_weak.py"])
    assert [entry["origin"].split("::", 1)[1] for entry in report.already_failing] == ["Checks::test_fails"]
    [missed] = report.divergences_the_test_misses
    assert missed["origin"] == f"{tmp_path / 'test_weak.py'}::Checks::test_keys" and missed["verdict"] == "MISMATCH"
    assert missed["comparison"] == "order of keys of a compiled call's result" and missed["finding"]
    assert report.as_json()["divergences_the_test_misses"] == [missed]


def test_a_finding_whose_tests_pass_over_it_says_so_in_its_readme_and_report(tmp_path: Path):
    passing = (TestOutcome("Checks.test_keys", "pass"),)
    store = FindingStore(tmp_path)
    finding, _ = store.record(mismatch(PROGRAM, KEYS, tests=passing), provenance="seed:p.py", parent=None, elapsed=1.0)
    assert finding.missed_by_tests["comparison"] == "order of keys of a compiled call's result"
    assert FindingStore(tmp_path).findings[finding.signature].missed_by_tests == finding.missed_by_tests  # kept
    said = "The program's own tests pass in both runs: their assertions do not see this divergence"
    assert said in (tmp_path / finding.directory / "README.md").read_text()
    report = report_markdown(finding, repro_source=None, versions={})
    assert said in report and "the comparison of the order of keys of a compiled call's result does" in report


def test_a_program_without_tests_of_its_own_is_not_said_to_pass_over_its_divergence(tmp_path: Path):
    finding, _ = FindingStore(tmp_path).record(mismatch(PROGRAM, KEYS), provenance="seed:p.py", parent=None,
                                               elapsed=1.0)
    assert finding.missed_by_tests == {} and "own tests pass" not in report_markdown(finding, repro_source=None,
                                                                                       versions={})
    assert "own tests pass" not in (tmp_path / finding.directory / "README.md").read_text()
