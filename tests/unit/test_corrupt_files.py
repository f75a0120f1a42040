"""What the readers of a campaign directory do with a file they cannot read: set it aside
and say so (queue entries, stats.json, coverage.bin), or leave it and say so (a finding)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from mutator.campaign.directory import Campaign, CampaignConfig
from mutator.commands.report import report
from mutator.findings.store import FindingStore


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


def test_a_finding_that_cannot_be_read_is_left_alone_and_reported(tmp_path: Path):
    spoilt = tmp_path / "findings" / "mismatch-x"
    spoilt.mkdir(parents=True)
    (spoilt / "finding.json").write_text("[1, 2")
    (spoilt / "first.py").write_text("print(1)\n")
    store = FindingStore(tmp_path)
    assert store.findings == {} and len(store.unreadable) == 1 and "finding.json" in store.unreadable[0]
    result = CliRunner().invoke(report, [str(tmp_path)])
    assert "warning: " in result.output and "finding.json: unreadable" in result.output
    assert (spoilt / "finding.json").read_text() == "[1, 2" and (spoilt / "first.py").exists()


def test_a_new_hit_of_an_unreadable_findings_signature_is_filed_beside_it(tmp_path: Path):
    from mutator.judge.check import CheckResult
    from mutator.core.observation import ExecResult, Mode, Outcome
    from mutator.judge.oracle import Oracle
    from mutator.core.program import Program
    from mutator.findings.signature import Signature

    program = Program.from_source("import torch\ndef fn(x):\n    return x\ndef inputs():\n    return (torch.ones(1),)\n",
                                  "p.py")
    eager = ExecResult(program.name, Mode.EAGER, Outcome.COMPLETED)
    compiled = ExecResult(program.name, Mode.COMPILED, Outcome.RAISED, detail="raised RuntimeError: boom")
    result = CheckResult(program, Oracle().judge(eager, compiled, program=program), (eager, compiled))
    spoilt = tmp_path / "findings" / Signature.of(result).slug()
    spoilt.mkdir(parents=True)
    (spoilt / "finding.json").write_text("{")
    (spoilt / "first.py").write_text("theirs\n")
    store = FindingStore(tmp_path)
    store.record(result, provenance="seed", parent=None, elapsed=1.0)
    assert (spoilt / "finding.json").read_text() == "{" and (spoilt / "first.py").read_text() == "theirs\n"
    assert (spoilt.parent / (spoilt.name + "-again") / "first.py").read_text() == program.source
