"""The status line, the live screen and the summary of findings."""

from __future__ import annotations

from pathlib import Path

from mutator.core.verdict import Verdict
from mutator.findings.store import FindingStore
from mutator.judge.compare import Divergence

from tests.helpers import exc
from tests.unit.findings.helpers import judged


def test_the_summary_lists_frontend_bugs_first_and_keeps_the_rest_apart(tmp_path: Path):
    from mutator.campaign.ui import finding_lines

    store = FindingStore(tmp_path)
    gb = exc("torch._dynamo.exc.Unsupported", gb_type="Unsupported context manager")
    for _ in range(5):  # the most hits, but not a frontend bug
        store.record(judged(Verdict.FULLGRAPH_BREAK, exception=gb), provenance="p", parent=None, elapsed=1.0)
    store.record(judged(Verdict.CRASH, exception=exc("AssertionError", dynamo=True)), provenance="p", parent=None,
                 elapsed=2.0)
    store.record(judged(Verdict.MISMATCH, divergence=Divergence("result", "call 1", "value", "d", True, "Tensor")),
                 provenance="p", parent=None, elapsed=3.0)
    lines = finding_lines(store.findings.values(), tmp_path)
    assert lines[0] == "frontend bugs: 2 signatures"
    assert "mismatch-" in lines[1] and "crash-" in lines[2]  # in the verdict's order
    assert lines[3].startswith("not frontend bugs") and "fullgraph_break-" in lines[4] and len(lines) == 5
    assert lines[4].split()[0] == "5"


SNAPSHOT = dict(elapsed=75.2, execs=120, execs_per_sec=2.4, corpus=9, favoured=7, arcs=9874, features=10024,
                findings=6, findings_by_kind={"FULLGRAPH_BREAK": 4, "CRASH": 1, "MISMATCH": 1}, hits=5, latest_finding="CRASH / x: y",
                invalid=3, unstable=1, invalid_rate=0.025, unstable_rate=0.008, lost=0, last_new_path=70.0,
                families={"E2": {"applied": 10, "valid": 8, "new": 2, "findings": 1}}, workers=["busy", "idle"])


def test_status_line_and_live_screen_render_a_snapshot():
    from rich.console import Console

    from mutator.campaign.ui import render, status_line

    line = status_line(SNAPSHOT)
    assert line.startswith("[0h01m15s] execs 120 (2.4/s)") and "\n" not in line
    assert "[mismatch 1, crash 1; not frontend bugs: fullgraph_break 4]" in line
    console = Console(record=True, width=120)
    console.print(render(SNAPSHOT, "mutate fuzz: corpus"))
    text = console.export_text()
    for expected in ("execs/s", "9874", "CRASH", "FULLGRAPH_BREAK (not a frontend bug)", "E2", "80%", "busy idle",
                     "Ctrl-C"):
        assert expected in text, expected


def test_the_workers_line_names_a_few_workers_and_counts_many():
    from mutator.campaign.ui import workers_line

    assert workers_line(["idle", "busy"]) == "idle busy" and workers_line([]) == "-"
    many = ["busy"] * 30 + ["restarting"] * 2 + ["idle"] * 5
    assert workers_line(many) == "37: 30 busy, 5 idle, 2 restarting"


def test_the_status_line_says_when_arcs_are_sampled():
    from mutator.campaign.ui import status_line

    assert "traced in" not in status_line({**SNAPSHOT, "traced_share": 1.0})
    assert "arcs 9874 (traced in 25% of checks)" in status_line({**SNAPSHOT, "traced_share": 0.25})
