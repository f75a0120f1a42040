"""report.md: the template's parts, the title, what each kind's report expects."""

from __future__ import annotations

from pathlib import Path

from mutator.core.program import Program
from mutator.core.verdict import Verdict
from mutator.findings.store import FindingStore
from mutator.judge.check import CheckResult
from mutator.judge.oracle import Judgement
from mutator.report.issue import report_markdown, summary_row, title

from tests.helpers import compiled_run, run
from tests.unit.findings.helpers import ONE, two_findings


def test_the_report_has_the_template_parts_and_says_when_it_is_not_reduced(tmp_path: Path):
    store, first, _ = two_findings(tmp_path)
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


def test_a_mismatch_report_says_what_differs_in_the_reproducer_s_words(tmp_path: Path):
    store = FindingStore(tmp_path)
    judgement = Judgement(Verdict.MISMATCH, "call 1 (fn) result[1][2]: eager 'long', compiled 'other'")
    finding, _ = store.record(CheckResult(Program.from_source(ONE, "m.py"), judgement, (run(), compiled_run())),
                              provenance="O.x@fn:1", parent=1, elapsed=1.0)
    finding.reduction = dict(confirmed=True, lines_after=5, source=ONE, repro_reproduces=True,
                             repro_output="eager: ('001',)\nAssertionError: result[0]: eager '001', compiled '1'\n")
    assert title(finding).endswith("differs from eager: result[0]: eager '001', compiled '1'")
    assert "result[1][2]" not in report_markdown(finding, repro_source="x = 1\n", versions={})


def test_the_title_names_what_matters():
    from mutator.findings.finding import Finding
    from mutator.findings.signature import Signature
    from mutator.report.issue import title

    finding = Finding(Signature("MISMATCH", observation="result:value:Tensor"), reason="values differ",
                      directory="findings/x")
    assert title(finding) == '[dynamo] torch.compile(backend="eager") differs from eager: values differ'
    finding.reduction = {"matters": {"needed": ["a graph break", "a `set` subclass"]}}
    assert title(finding) == ('[dynamo] torch.compile(backend="eager") differs from eager with a graph break '
                              'and a `set` subclass: values differ')


def test_each_kind_s_report_says_what_is_expected_of_it():
    from mutator.findings.finding import Finding
    from mutator.findings.signature import Signature
    from mutator.report.issue import report_markdown

    def report(kind: str) -> str:
        finding = Finding(Signature(kind, location="limit:value"), reason="fn hit the limit", directory="findings/x")
        return report_markdown(finding, repro_source=None, versions={})

    assert "Expected: Dynamo compiles these calls without reaching `recompile_limit`" in report("SPECIALIZATION")
    assert "documented behaviour" in report("SPECIALIZATION")
    assert "Expected: a call whose inputs and state repeat an earlier call's compiles nothing" in \
        report("RECOMPILE_STORM")
    assert "Expected: the compiled run finishes within" in report("HANG")
    assert "`compiled:` equal to `eager:`" in report("MISMATCH")


def test_a_report_says_which_configuration_the_bug_needs_and_how_it_was_found(tmp_path: Path):
    from mutator.reduce.ablation import AblationRow, configurations_label

    store = FindingStore(tmp_path)
    judgement = Judgement(Verdict.MISMATCH, "call 1 (fn) result: eager 1, compiled 2")
    result = CheckResult(Program.from_source(ONE, "m.py"), judgement, (run(), compiled_run()),
                         configuration="nested-graph-breaks")
    finding, _ = store.record(result, provenance="sweep:nested-graph-breaks:000004", parent=4, elapsed=1.0)
    assert finding.configuration == "nested-graph-breaks" and finding.configurations == {"nested-graph-breaks": 1}
    finding.reduction = dict(confirmed=True, lines_after=5, source=ONE, configuration="nested-graph-breaks",
                             found_under="nested-graph-breaks", needs_configuration=True,
                             configurations_label="only with nested graph breaks", label="frontend",
                             ablation=[dict(setting="configuration default", verdict="PASS", same_signature=False)])
    text = report_markdown(finding, repro_source=None, versions={})
    assert "It fails only with `torch._dynamo.config.nested_graph_breaks = True`" in text
    assert "under Dynamo's defaults the program passes" in text
    assert "under the configuration `nested-graph-breaks`" in text  # how it was found: a sweep
    assert "Ablation (**frontend; only with nested graph breaks**)" in text
    assert summary_row(finding)["configuration"] == "nested-graph-breaks"
    finding.reduction.update(configuration="default", needs_configuration=False)
    assert "fails under Dynamo's defaults too" in report_markdown(finding, repro_source=None, versions={})
    rows = [AblationRow("configuration default", "PASS", False, ""), AblationRow("configuration dynamic", "CRASH",
                                                                               True, "")]
    assert configurations_label(rows, "nested-graph-breaks") == \
        "under the configurations nested-graph-breaks, dynamic only"
    assert configurations_label(rows[:1], "nested-graph-breaks").startswith("only with nested graph breaks")
    assert configurations_label([AblationRow("configuration dynamic", "CRASH", True, "")], "default") == ""
