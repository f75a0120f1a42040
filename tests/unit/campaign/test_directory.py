"""The campaign directory: one fuzzer at a time, queue entries, coverage, the plot and invalid
mutants round-trip; a file its readers cannot read is set aside and said."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from mutator.campaign.corpus import CoverageMap
from mutator.campaign.directory import Campaign, CampaignConfig, CampaignError, chosen_seed
from mutator.core.observation import Outcome
from mutator.core.program import Program
from mutator.core.verdict import Verdict
from mutator.judge.check import CheckResult, repair_request
from mutator.judge.oracle import Judgement

from tests.helpers import exc, run
from tests.unit.campaign.helpers import entry
from tests.unit.findings.helpers import PROGRAM


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


def test_invalid_mutants_are_logged_with_their_eager_failure_and_a_torn_line_is_skipped(tmp_path: Path, monkeypatch):
    from mutator.campaign import directory as campaign_module
    from mutator.campaign.fuzzer import invalid_record
    from mutator.mutation.operator import Mutant, Step

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


# -- a file its readers cannot read goes aside ------------------------------------------------

def campaign_in(tmp_path: Path) -> Campaign:
    campaign = Campaign.create(tmp_path / "c", CampaignConfig(corpus=("seeds",)))
    campaign.close()
    return Campaign.resume(tmp_path / "c")


def test_a_spoilt_stats_json_goes_aside_and_counters_go_on_from_the_plot(tmp_path: Path):
    campaign = campaign_in(tmp_path)
    campaign.append_plot({"elapsed": 12.5, "execs": 40})
    campaign.append_plot({"elapsed": 30.0, "execs": 95})
    (campaign.root / "stats.json").write_text('{"counters": {"execs": 9')
    assert campaign.load_stats() == {"counters": {"execs": 95, "elapsed": 30.0}}
    assert (campaign.root / "corrupt" / "stats.json").read_text() == '{"counters": {"execs": 9'
    assert not (campaign.root / "stats.json").exists()
    [problem] = campaign.problems
    assert problem.startswith("stats.json: unreadable") and "corrupt" in problem


def test_a_spoilt_queue_entry_goes_aside_with_its_program(tmp_path: Path):
    campaign = campaign_in(tmp_path)
    campaign.queue.mkdir(exist_ok=True)
    (campaign.queue / "id:000003,orig:x.py").write_text("import torch\n")
    (campaign.queue / "id:000003,orig:x.json").write_text('{"id": 3, "feat')
    (campaign.root / "coverage.bin").write_bytes(b"\x01" * 17)
    assert campaign.load_entries() == [] and len(campaign.load_coverage().hits) == 0
    assert sorted(p.name for p in (campaign.root / "corrupt").iterdir()) == \
        ["coverage.bin", "id:000003,orig:x.json", "id:000003,orig:x.py"]
    assert [p.split(":")[0] for p in campaign.problems] == ["id", "coverage.bin"]


def test_a_campaign_without_a_seed_takes_one_from_its_instance_name_or_else_the_clock():
    assert chosen_seed("a") == chosen_seed("a") != chosen_seed("b")  # a fleet replays itself; its instances differ
    assert 0 <= chosen_seed("worker-07") < 2**32
    assert chosen_seed(None, clock=lambda: 1_765_000_000_123_456_789) == 1_765_000_000_123_456_789 % 2**32
    assert chosen_seed(None, clock=lambda: 1) != chosen_seed(None, clock=lambda: 2)
