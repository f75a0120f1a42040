"""bench/agreement.py: pytest's JUnit XML and a harvest report matched test by test."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("agreement", ROOT / "bench" / "agreement.py")
agreement = importlib.util.module_from_spec(_spec)
sys.modules["agreement"] = agreement  # its dataclasses look their module up
_spec.loader.exec_module(agreement)

JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="dynamo.test_a.Checks" name="test_same"/>
<testcase classname="dynamo.test_a.Checks" name="test_broken"><failure message="AssertionError: 1 != 2">x</failure></testcase>
<testcase classname="dynamo.test_a.Checks" name="test_alarm"/>
<testcase classname="dynamo.test_a.Checks" name="test_later"><skipped type="pytest.xfail" message="xfail"/></testcase>
<testcase classname="dynamo.test_a" name="test_free[2-3]"/>
<testcase classname="dynamo.test_a.Checks" name="test_nobody"/>
</testsuite></testsuites>
"""
HARVEST = {
    "checked": [
        {"origin": "/t/dynamo/test_a.py::Checks::test_same", "verdict": "PASS", "reason": "same", "outcome": "written"},
        {"origin": "/t/dynamo/test_a.py::Checks::test_broken", "verdict": "MISMATCH", "reason": "values",
         "outcome": "filed"},
        {"origin": "/t/dynamo/test_a.py::Checks::test_alarm", "verdict": "CRASH", "reason": "KeyError: 'k'",
         "outcome": "filed"},
        {"origin": "/t/dynamo/test_a.py::test_free[2-3]", "verdict": "PASS", "reason": "same", "outcome": "duplicate"},
    ],
    "not_harvested_tests": [{"origin": "/t/dynamo/test_a.py::Checks::test_later", "reason": "expected to fail"}],
    "failures": [],
}


def test_tests_are_matched_by_file_class_and_id_and_judged_only_when_both_sides_are(tmp_path: Path):
    (tmp_path / "r.xml").write_text(JUNIT)
    ours, odd = agreement.harvest_results(json.loads(json.dumps(HARVEST)))
    by_file = agreement.tally(agreement.pytest_results(tmp_path / "r.xml"), ours)
    tally = by_file["test_a.py"]
    assert not odd and tally.judged == 4 and tally.agreed == 3
    assert tally.rows["xfail", "not harvested: expected to fail"] == 1 and tally.rows["pass", "unmatched"] == 1
    assert len(tally.disagreements) == 1 and tally.disagreements[0].startswith(
        "false alarm: Checks::test_alarm: pytest pass, ours CRASH: KeyError: 'k'")


def test_a_divergence_the_test_misses_is_counted_apart_from_false_alarms_with_its_comparison(tmp_path: Path):
    (tmp_path / "r.xml").write_text(JUNIT)
    origin = "/t/dynamo/test_a.py::Checks::test_alarm"
    report = json.loads(json.dumps(HARVEST))
    report["divergences_the_test_misses"] = [{
        "origin": origin, "verdict": "MISMATCH", "comparison": "order of keys of a compiled call's result",
        "where": "call 1 (f) result", "detail": "same keys in a different order: eager ['a', 'b'], compiled ['b', 'a']"}]
    report["checked"][2] = {"origin": origin, "verdict": "MISMATCH", "reason": "keys", "outcome": "filed"}
    ours, _ = agreement.harvest_results(report)
    tally = agreement.tally(agreement.pytest_results(tmp_path / "r.xml"), ours)["test_a.py"]
    assert tally.judged == 4 and tally.agreed == 4 and tally.disagreements == []
    assert tally.rows["pass", "test misses"] == 1
    assert tally.missed == ["Checks::test_alarm: ours MISMATCH, order of keys of a compiled call's result: same keys "
                            "in a different order: eager ['a', 'b'], compiled ['b', 'a']"]
