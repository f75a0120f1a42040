"""Coverage map, corpus, schedules, signatures, storage and the campaign directory, without torch."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest

from mutator.core import storage
from mutator.campaign.directory import Campaign, CampaignConfig, CampaignError
from mutator.judge.check import CheckResult, repair_request
from mutator.campaign.corpus import Corpus, CorpusEntry, CoverageMap
from mutator.core.features import bucket, encode_arc, is_arc, normalize_reason, semantic_features
from mutator.findings.signature import Signature
from mutator.findings.store import FindingStore
from mutator.core.observation import CompileStats, Outcome
from mutator.judge.oracle import Judgement
from mutator.core.program import Program
from mutator.campaign.schedule import FastSchedule, RareSchedule, UniformSchedule
from mutator.judge.compare import Divergence
from mutator.core.verdict import Verdict

from tests.helpers import call, compiled_run, exc, run

PROGRAM = Program.from_source("def fn(x):\n    return x\ndef inputs():\n    return (1,)\n", "p.py")


def entry(i: int, features, *, source: str = "", seconds: float = 0.1) -> CorpusEntry:
    program = Program.from_source(PROGRAM.source + source, f"e{i}.py")
    return CorpusEntry(id=i, program=program, features=frozenset(features), seconds=seconds, depth=0, parent=None,
                       provenance="seed")


def test_arc_and_semantic_features_do_not_collide():
    arc = encode_arc("torch/_dynamo/symbolic_convert.py", 120, 121)
    assert is_arc(arc) and arc == encode_arc("torch/_dynamo/symbolic_convert.py", 120, 121)
    assert arc != encode_arc("torch/_dynamo/symbolic_convert.py", 121, 120)
    result = compiled_run(compile_stats=CompileStats(graphs=2, graph_breaks=("Failed to trace builtin operator",),
                                                     recompile_reasons=("L['n'] == 3",)),
                          calls=[call(exception=exc("ValueError"))])
    features = semantic_features(result)
    assert features and not any(is_arc(f) for f in features)
    other = compiled_run(compile_stats=CompileStats(graphs=2, recompile_reasons=("L['n'] == 4",)))
    # the graph-break type, the exception type and the graph-break count's bucket; the two
    # recompile reasons differ only in a constant, so they are one feature
    assert len(semantic_features(result) - semantic_features(other)) == 3


def test_reason_normalisation_and_buckets():
    assert normalize_reason("L['n'] == 3") == normalize_reason("L['m'] == 41") == "L[S] == N"
    assert [bucket(n) for n in (0, 1, 2, 3, 5, 9, 20, 100, 1000)] == [0, 1, 2, 3, 4, 5, 6, 7, 8]


def test_coverage_map_reports_only_new_features():
    cmap = CoverageMap()
    assert cmap.new({1, 2}) == {1, 2}
    cmap.add({1, 2})
    cmap.add({2})
    assert cmap.new({1, 2, 3}) == {3} and cmap.hits == {1: 1, 2: 2} and cmap.arcs() == 2


def test_favoured_is_a_cheap_greedy_cover():
    corpus = Corpus()
    big = entry(0, {1, 2, 3}, source="# " + "x" * 500)
    small_a = entry(1, {1, 2})
    small_b = entry(2, {3})
    redundant = entry(3, {2}, source="# " + "y" * 900)
    for e in (big, small_a, small_b, redundant):
        corpus.add(e)
    assert {e.id for e in corpus.favoured()} == {1, 2}
    assert corpus.next_id() == 4


@pytest.mark.parametrize("schedule", [UniformSchedule(), FastSchedule(), RareSchedule()], ids=lambda s: s.name)
def test_schedules_choose_every_entry_eventually_and_prefer_rare_ones(schedule):
    corpus, cmap = Corpus(), CoverageMap()
    common, rare = entry(0, {1}), entry(1, {2})
    corpus.add(common)
    corpus.add(rare)
    cmap.hits = {1: 20, 2: 1}
    rng = random.Random(0)
    chosen = [schedule.choose(corpus, cmap, rng).id for _ in range(400)]
    assert set(chosen) == {0, 1}
    if schedule.name != "uniform":
        assert chosen.count(1) > chosen.count(0)


def test_rare_schedule_prefers_the_faster_of_two_equally_rare_entries():
    corpus, cmap = Corpus(), CoverageMap()
    slow, fast = entry(0, {1, 2}, seconds=4.0), entry(1, {3, 4}, seconds=0.5)
    corpus.add(slow)
    corpus.add(fast)
    cmap.hits = {1: 1, 2: 1, 3: 1, 4: 1}
    rng = random.Random(0)
    chosen = [RareSchedule().choose(corpus, cmap, rng).id for _ in range(400)]
    assert chosen.count(1) > 3 * chosen.count(0) > 0


def _result(verdict: Verdict, *, exception=None, divergence=None, compiled=None) -> CheckResult:
    judgement = Judgement(verdict, "because", exception=exception, divergence=divergence)
    return CheckResult(PROGRAM, judgement, (run(), compiled or compiled_run()))


def test_signatures_separate_kinds_frames_and_observations():
    in_guards = exc("AssertionError", dynamo=True)
    crash = Signature.of(_result(Verdict.CRASH, exception=in_guards))
    assert crash == Signature("CRASH", "AssertionError", "torch/_dynamo/symbolic_convert.py:step")
    gb = exc("torch._dynamo.exc.Unsupported", gb_type="Call to `torch._dynamo.graph_break()`")
    assert Signature.of(_result(Verdict.FULLGRAPH_BREAK, exception=gb)).location.startswith("Call to")
    values = Divergence("result", "call 1", "value", "d", True, "Tensor")
    text = Divergence("result", "call 1", "value", "d", False, "str")
    assert Signature.of(_result(Verdict.MISMATCH, divergence=values)) != \
        Signature.of(_result(Verdict.MISMATCH, divergence=text))
    segv = compiled_run(outcome=Outcome.SIGNALLED)
    segv = replace(segv, signal=11)
    assert Signature.of(_result(Verdict.CRASH, compiled=segv)).exception == "signal 11"
    slug = crash.slug()
    assert slug.startswith("crash-AssertionError-symbolic_convert.py-step-") and "/" not in slug


def test_store_keeps_one_directory_per_signature_and_the_smallest_program(tmp_path: Path):
    store = FindingStore(tmp_path, torch_version="2.13.0")
    crash = exc("AssertionError", dynamo=True)
    big = replace(_result(Verdict.CRASH, exception=crash), program=Program.from_source(PROGRAM.source + "# pad\n" * 20, "b.py"))
    small = _result(Verdict.CRASH, exception=crash)
    finding, new = store.record(big, provenance="X.a@fn:1", parent=3, elapsed=1.0)
    assert new
    _, new_again = store.record(small, provenance="X.b@fn:1", parent=4, elapsed=2.0)
    assert not new_again
    directory = tmp_path / finding.directory
    assert (directory / "first.py").read_text() == big.program.source
    assert (directory / "smallest.py").read_text() == small.program.source
    data = json.loads((directory / "finding.json").read_text())
    assert data["hits"] == 2 and [h["provenance"] for h in data["history"]] == ["X.a@fn:1", "X.b@fn:1"]
    assert "mutate run" in (directory / "README.md").read_text()
    assert FindingStore(tmp_path).findings[finding.signature].hits == 2  # reloads from disk
    assert "a frontend bug" in (directory / "README.md").read_text()
    hang = _result(Verdict.HANG)
    hang_finding, _ = store.record(hang, provenance="p", parent=None, elapsed=3.0)
    assert hang_finding.directory.startswith("hangs/")
    gb = exc("torch._dynamo.exc.Unsupported", gb_type="Unsupported context manager")
    low, _ = store.record(_result(Verdict.FULLGRAPH_BREAK, exception=gb), provenance="p", parent=None, elapsed=4.0)
    assert "**severity**: low" in (tmp_path / low.directory / "README.md").read_text()


def test_one_signature_keeps_the_smallest_program_of_each_trigger(tmp_path: Path):
    from mutator.findings.finding import MAX_VARIANTS, trigger

    assert trigger("seed:seeds/others/format_and_mappingproxy.py") == "seed format_and_mappingproxy"
    assert trigger("E2.wrap_in_try@fn:3+A3.dunder_class@fn:9+E2.reraise@fn:4") == "A3+E2"
    store = FindingStore(tmp_path)
    value = Divergence("result", "call 1", "value", "d", False, "str")

    def hit(provenance: str, pad: int = 0):  # type: ignore[no-untyped-def]
        result = replace(_result(Verdict.MISMATCH, divergence=value),
                         program=Program.from_source(PROGRAM.source + "# pad\n" * pad, "p.py"))
        return store.record(result, provenance=provenance, parent=None, elapsed=1.0)[0]

    hit("seed:seeds/A3/subclass_format.py", pad=3)
    hit("seed:seeds/others/format_and_mappingproxy.py", pad=5)  # larger: not smallest.py, but kept
    hit("B1.view@fn:2", pad=9)
    finding = hit("B1.view@fn:7+B1.other@fn:1", pad=1)  # the same trigger, smaller: replaces it
    directory = tmp_path / finding.directory
    assert finding.hits == 4 and set(finding.variants) == {"seed subclass_format", "seed format_and_mappingproxy", "B1"}
    assert finding.variants["B1"]["hits"] == 2 and finding.variants["B1"]["size"] == len(PROGRAM.source) + 6
    assert sorted(p.name for p in (directory / "variants").iterdir()) == \
        ["00-seed-subclass_format.py", "01-seed-format_and_mappingproxy.py", "02-B1.py"]
    assert (directory / "variants" / "01-seed-format_and_mappingproxy.py").read_text().count("# pad") == 5
    readme = (directory / "README.md").read_text()
    assert "| B1 | 2 | `variants/02-B1.py` |" in readme and "## Smallest program" in readme
    reloaded = FindingStore(tmp_path).findings[finding.signature]
    assert reloaded.variants == finding.variants and reloaded.details == finding.details
    for n in range(MAX_VARIANTS + 3):  # triggers beyond the cap count as hits, without a program
        hit(f"X{n}.op@fn:1")
    assert len(finding.variants) == MAX_VARIANTS and finding.hits == 4 + MAX_VARIANTS + 3
    assert len(list((directory / "variants").iterdir())) == MAX_VARIANTS


def test_the_summary_lists_frontend_bugs_first_and_keeps_the_rest_apart(tmp_path: Path):
    from mutator.campaign.ui import finding_lines

    store = FindingStore(tmp_path)
    gb = exc("torch._dynamo.exc.Unsupported", gb_type="Unsupported context manager")
    for _ in range(5):  # the most hits, but not a frontend bug
        store.record(_result(Verdict.FULLGRAPH_BREAK, exception=gb), provenance="p", parent=None, elapsed=1.0)
    store.record(_result(Verdict.CRASH, exception=exc("AssertionError", dynamo=True)), provenance="p", parent=None,
                 elapsed=2.0)
    store.record(_result(Verdict.MISMATCH, divergence=Divergence("result", "call 1", "value", "d", True, "Tensor")),
                 provenance="p", parent=None, elapsed=3.0)
    lines = finding_lines(store.findings.values(), tmp_path)
    assert lines[0] == "frontend bugs: 2 signatures"
    assert "mismatch-" in lines[1] and "crash-" in lines[2]  # in the verdict's order
    assert lines[3].startswith("not frontend bugs") and "fullgraph_break-" in lines[4] and len(lines) == 5
    assert lines[4].split()[0] == "5"


def test_campaign_refuses_a_non_empty_directory_and_a_second_fuzzer(tmp_path: Path):
    (tmp_path / "README.md").write_text("kept in git\n")
    campaign = Campaign.create(tmp_path, CampaignConfig(corpus=("seeds",)))
    with pytest.raises(CampaignError, match="in use by another mutate fuzz"):
        Campaign.resume(tmp_path)
    campaign.close()
    with pytest.raises(CampaignError, match=r"not empty \(campaign.json, findings, hangs, lost\); continue it with --resume"):
        Campaign.create(tmp_path, CampaignConfig(corpus=("seeds",)))
    resumed = Campaign.resume(tmp_path)
    assert resumed.config.corpus == ("seeds",)
    resumed.close()
    with pytest.raises(CampaignError, match="holds no campaign"):
        Campaign.resume(tmp_path / "elsewhere")


def test_queue_entries_round_trip_and_half_written_entries_are_ignored(tmp_path: Path):
    campaign = Campaign.create(tmp_path / "c", CampaignConfig(corpus=("seeds",)))
    seed = entry(0, {5, 6})
    campaign.save_entry(seed, campaign.entry_name(seed, seed_path="seeds/E2/x.py"), found_at=0.0)
    child = replace(entry(1, {7}), parent=0, depth=1, provenance="E2.wrap_in_try@fn:3+X.insert_graph_break@fn:4")
    name = campaign.entry_name(child)
    assert name == "id:000001,src:000000,op:E2.wrap_in_try+X.insert_graph_break"
    campaign.save_entry(child, name, found_at=1.0)
    (campaign.queue / "id:000002,src:000001,op:X.a.py").write_text("x = 1\n")  # killed before its sidecar
    loaded = campaign.load_entries()
    assert [(e.id, e.parent, e.features) for e in loaded] == [(0, None, {5, 6}), (1, 0, {7})]
    cmap = CoverageMap({1: 3, 2 ** 62 + 5: 1})
    campaign.save_coverage(cmap)
    assert campaign.load_coverage().hits == cmap.hits
    campaign.append_plot({"elapsed": 1, "execs": 2})
    campaign.append_plot({"elapsed": 2, "execs": 4})
    lines = (tmp_path / "c" / "plot_data.csv").read_text().splitlines()
    assert lines[0].startswith("elapsed,execs") and len(lines) == 3


def test_operator_usefulness_and_family_yield_survive_a_resume(tmp_path: Path):
    from mutator.campaign.filing import Filing
    from mutator.campaign.fuzzer import Fuzzer
    from mutator.mutation.mutator import Mutator
    from mutator.mutation.operator import Mutant, Step
    from mutator.mutation.registry import all_operators

    def fuzzer(campaign: Campaign) -> Fuzzer:
        return Fuzzer(corpus=Corpus(), coverage=CoverageMap(), mutator=Mutator(all_operators()),
                      schedule=UniformSchedule(), checker=None, filing=Filing(FindingStore(campaign.root)),  # type: ignore[arg-type]
                      campaign=campaign, rng=random.Random(0))

    campaign = Campaign.create(tmp_path / "c", CampaignConfig(corpus=("seeds",)))
    first = fuzzer(campaign)
    op = next(op for op in all_operators() if op.family == "E2")
    first.mutator.stats[op.id].applied += 1
    first.mutator.record(Mutant(PROGRAM, (Step(op.id, "fn:1"),)), valid=True, new_features=False, finding=False)
    first.save(force=True)
    campaign.close()
    resumed = Campaign.resume(tmp_path / "c")
    second = fuzzer(resumed)
    second.restore(resumed.load_stats())
    resumed.close()
    assert second.mutator.family_yield["E2"] == pytest.approx(0.9) and second.mutator.family_yield["B1"] == 1.0
    assert second.mutator.stats[op.id] == first.mutator.stats[op.id]


def test_atomic_writes_leave_no_temporaries(tmp_path: Path):
    storage.write_json(tmp_path / "a" / "b.json", {"x": 1})
    assert storage.read_json(tmp_path / "a" / "b.json") == {"x": 1}
    assert not list((tmp_path / "a").glob(".*.tmp"))
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(storage.StorageError, match="bad.json: cannot read"):
        storage.read_json(tmp_path / "bad.json")


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


def test_invalid_mutants_are_logged_with_their_eager_failure_and_a_torn_line_is_skipped(tmp_path: Path, monkeypatch):
    from mutator.campaign import directory as campaign_module
    from mutator.campaign.fuzzer import invalid_record
    from mutator.mutation.operator import Mutant, Step
    from mutator.repair import RepairRequest

    from tests.helpers import PROGRAM as NAME

    monkeypatch.setattr(campaign_module, "MAX_INVALID_PROGRAMS", 1)
    campaign = Campaign.create(tmp_path / "c", CampaignConfig(corpus=("seeds",)))
    eager = run(outcome=Outcome.RAISED, uncaught=exc("NameError", "name 'y' is not defined", line=4))
    program = Program.from_source(PROGRAM.source + "y\n", NAME)
    result = CheckResult(program, Judgement(Verdict.INVALID, "eager raised NameError"), (eager, eager))
    mutant = Mutant(program, (Step("S1.rename_local", "fn:2"),))
    for i in range(2):
        campaign.save_invalid(program if i == 0 else PROGRAM,
                              invalid_record(repair_request(result, mutant, None), found_at=1.5))
    (tmp_path / "c" / "invalid" / "index.jsonl").open("a").write('{"torn": ')
    rows = campaign.load_invalid()
    assert [r["type"] for r in rows] == ["NameError", "NameError"]
    assert rows[0]["provenance"] == "S1.rename_local@fn:2" and rows[0]["frame"] == f"{NAME}:4 in <module>"
    assert rows[0]["program"] == f"{program.digest}.py" and "program" not in rows[1]  # only the first is kept
    assert (tmp_path / "c" / "invalid" / program.digest).with_suffix(".py").read_text() == program.source
    campaign.close()


def test_the_workers_line_names_a_few_workers_and_counts_many():
    from mutator.campaign.ui import workers_line

    assert workers_line(["idle", "busy"]) == "idle busy" and workers_line([]) == "-"
    many = ["busy"] * 30 + ["restarting"] * 2 + ["idle"] * 5
    assert workers_line(many) == "37: 30 busy, 5 idle, 2 restarting"
