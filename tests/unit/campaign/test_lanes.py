"""The lanes beside the fuzz loop (mutator/campaign/lanes/), each told of a session's events
by hand, without workers or torch; and their counters across sessions."""

from __future__ import annotations

import json
import random
from pathlib import Path

from mutator.campaign.corpus import Corpus, CoverageMap
from mutator.campaign.directory import Campaign, CampaignConfig
from mutator.core.cpu import Ledger
from mutator.campaign.filing import Filing
from mutator.campaign.fuzzer import Fuzzer
from mutator.campaign.lanes.llm import LLMAnswers
from mutator.campaign.lanes.reducing import ReductionLane
from mutator.campaign.schedule import UniformSchedule
from mutator.core.program import Program
from mutator.core.verdict import Verdict
from mutator.findings.finding import Finding
from mutator.findings.signature import Signature
from mutator.findings.store import FindingStore
from mutator.judge.check import CheckResult
from mutator.judge.oracle import Judgement
from mutator.llm.lane import Done
from mutator.mutation.mutator import Mutator
from mutator.mutation.registry import all_operators

from tests.helpers import compiled_run, exc, run


def crash(name: str) -> CheckResult:
    program = Program.from_source(f"def fn(x):\n    return x\n\n\ndef inputs():\n    return ({name!r},)\n", "p.py")
    judgement = Judgement(Verdict.CRASH, "boom", exception=exc(name, dynamo=True))
    return CheckResult(program, judgement, (run(), compiled_run()))


def fuzzer(campaign: Campaign, lanes=()) -> Fuzzer:  # type: ignore[no-untyped-def]
    return Fuzzer(corpus=Corpus(), coverage=CoverageMap(), mutator=Mutator(all_operators()),
                  schedule=UniformSchedule(), checker=None, filing=Filing(FindingStore(campaign.root)),  # type: ignore[arg-type]
                  campaign=campaign, lanes=lanes, rng=random.Random(0))


class Reductions:
    """A background reduction that only writes down what it was given."""

    def __init__(self) -> None:
        self.submitted: list[str] = []
        self.closed = False
        self.pending = 0

    def submit(self, finding: Finding) -> None:
        self.submitted.append(finding.signature.exception)

    def completed(self):  # type: ignore[no-untyped-def]
        return []

    def take_cpu(self) -> Ledger:
        return Ledger({"background reduction: runs": 1.5})

    def close(self) -> None:
        self.closed = True


def test_the_reduction_lane_takes_what_earlier_sessions_left_then_each_new_finding(tmp_path: Path):
    campaign = Campaign.create(tmp_path / "c", CampaignConfig(corpus=("seeds",)))
    store = FindingStore(campaign.root)
    store.record(crash("Later"), provenance="seed:a.py", parent=None, elapsed=9.0)
    store.record(crash("Earlier"), provenance="seed:b.py", parent=None, elapsed=2.0)
    store.known[Signature.of(crash("Peers"))] = "peer"
    store.record(crash("Peers"), provenance="seed:c.py", parent=None, elapsed=1.0)  # a peer's to reduce
    reductions = Reductions()
    lane = ReductionLane(reductions)  # type: ignore[arg-type]
    loop = fuzzer(campaign, [lane])
    lane.start(loop)
    assert reductions.submitted == ["Earlier", "Later"]
    finding, new = loop.filing.store.record(crash("Fresh"), provenance="E2.x", parent=None, elapsed=10.0)
    lane.filed(loop, finding, new=new)
    again, new = loop.filing.store.record(crash("Fresh"), provenance="E2.y", parent=None, elapsed=11.0)
    lane.filed(loop, again, new=new)  # a second hit: reduced once
    assert reductions.submitted == ["Earlier", "Later", "Fresh"]
    lane.stop(loop)
    assert reductions.closed and lane.snapshot() == {"reducing": 0}
    assert loop.cpu.seconds["background reduction: runs"] == 1.5  # what the reductions cost, in the ledger
    campaign.close()


class Threads:
    """The LLM's threads, with answers already done."""

    def __init__(self, done: list[Done]) -> None:
        self.done = done

    def completed(self) -> list[Done]:
        done, self.done = self.done, []
        return done


def test_the_llm_answers_go_back_to_the_lane_that_asked():
    answers = LLMAnswers(Threads([Done("repair", 1, "r1"), Done("mutation", 2, "m1"), Done("repair", 3, "r2")]))  # type: ignore[arg-type]
    assert [d.result for d in answers.completed("mutation")] == ["m1"]
    assert [d.result for d in answers.completed("repair")] == ["r1", "r2"]
    assert answers.completed("repair") == [] and answers.completed("mutation") == []


def test_a_session_without_a_lane_carries_its_counters_over(tmp_path: Path):
    campaign = Campaign.create(tmp_path / "c", CampaignConfig(corpus=("seeds",)))
    first = fuzzer(campaign, [ReductionLane(Reductions())])  # type: ignore[arg-type]
    first.stats.reduced, first.stats.merged, first.stats.synced = 3, 1, 7
    first.stop()
    campaign.close()
    resumed = Campaign.resume(tmp_path / "c")
    second = fuzzer(resumed)  # --no-reduce, no sync
    second.restore(resumed.load_stats())
    second.stop()
    counters = json.loads((tmp_path / "c" / "stats.json").read_text())["counters"]
    assert (counters["reduced"], counters["merged"], counters["synced"]) == (3, 1, 7)
    assert second.snapshot()["reducing"] == 0 and second.snapshot()["reduced"] == 3
    resumed.close()


class Judge:
    """A version judge that answers at once: every finding fails on the older torch and passes
    on the newer one."""

    def __init__(self) -> None:
        self.judged: list[tuple[str, bool]] = []  # the finding's exception, and whether it was reduced

    def judge(self, directory: Path, finding: Finding):  # type: ignore[no-untyped-def]
        from mutator.core.build import Build
        from mutator.report.versions import OnTorch, ProgramVerdict, Versions

        self.judged.append((finding.signature.exception, bool(finding.reduction)))
        fails = ProgramVerdict("smallest", "CRASH", finding.signature, True)
        return Versions.of([OnTorch(Build(torch="2.13.0"), (fails,)),
                            OnTorch(Build(torch="2.14.1"), (ProgramVerdict("smallest", "PASS"),), repro_exit=0)])


def test_the_confirm_lane_judges_a_finding_once_reduced_and_the_rest_at_the_stop(tmp_path: Path):
    from mutator.campaign.lanes.confirming import ConfirmLane, status_counts
    from mutator.core.build import Build

    campaign = Campaign.create(tmp_path / "c", CampaignConfig(corpus=("seeds",)))
    judge = Judge()
    lane = ConfirmLane(judge, [Build(torch="2.13.0"), Build(torch="2.14.1")], reducing=True)  # type: ignore[arg-type]
    loop = fuzzer(campaign, [lane])
    lane.start(loop)
    store = loop.filing.store
    for name in ("Reduced", "Waiting"):
        finding, new = store.record(crash(name), provenance="E2.x", parent=None, elapsed=1.0)
        lane.filed(loop, finding, new=new)
    lane.poll(loop)
    assert judge.judged == []  # both wait for their reductions
    reduced = next(f for f in store.findings.values() if f.signature.exception == "Reduced")
    reduced.reduction = dict(confirmed=True, source="x = 1\n", lines_before=9, lines_after=1, chars_before=90,
                             chars_after=6, seconds=3.0, checks=12)
    lane.poll(loop)
    lane._record(loop, wait=True)  # the judgement on the lane's thread is in
    assert judge.judged == [("Reduced", True)]
    lane.stop(loop)  # the one still waiting is judged as it is
    assert judge.judged == [("Reduced", True), ("Waiting", False)]
    on_disk = FindingStore(campaign.root)
    assert status_counts(list(on_disk.findings.values())) == {"fixed_since": 2}
    assert lane.snapshot() == {"confirming": 0, "confirmed": 2} and lane.newest.torch == "2.14.1"
    campaign.close()
