"""Dynamo's configurations as an axis of the fuzz loop, against a scripted checker: seeds are
swept under each configuration, mutants take one each, findings say which, and a queue
entry whose mutants keep hitting known bugs gets less energy. No processes, no torch."""

from __future__ import annotations

import random
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path

import pytest

from mutator.campaign.configurations import ConfigurationSchedule, SWEEP_SHARE
from mutator.campaign.corpus import Corpus, CorpusEntry, CoverageMap
from mutator.campaign.directory import Campaign, CampaignConfig
from mutator.campaign.filing import Filing
from mutator.campaign.fuzzer import STALE_HITS, Budget, Fuzzer
from mutator.campaign.schedule import MIN_AVOIDANCE, RareSchedule, avoidance
from mutator.core.observation import Outcome
from mutator.core.program import Program
from mutator.findings.finding import trigger
from mutator.findings.known import KnownBugs, KnownHits
from mutator.findings.signature import Signature
from mutator.findings.store import FindingStore
from mutator.judge.check import CheckReply, CheckTask, first_pass
from mutator.judge.oracle import Oracle
from mutator.mutation.mutator import MutantBuilder, Mutator
from mutator.mutation.registry import all_operators

from tests.helpers import call, compiled_run, exc, run, tensor

AXIS = ("default", "nested-graph-breaks", "dynamic")
SEEDS = [Program.from_source(f"import torch\n\n\ndef fn(x):\n    return x + {n}\n\n\ndef inputs():\n"
                             "    return (torch.ones(2),)\n", f"seed{n}.py") for n in range(3)]


class ConfigChecker:
    """Builds recipes like a worker; every check passes with a few features, except that
    programs `crashes` names crash when compiled under `under` (a Dynamo internal error)."""

    def __init__(self, *, under: str = "nested-graph-breaks", crashes=lambda program: False) -> None:
        self.builder = MutantBuilder(all_operators())
        self.under = under
        self.crashes = crashes
        self.tasks: list[CheckTask] = []

    def submit(self, task: CheckTask) -> Future[CheckReply]:
        self.tasks.append(task)
        n = len(self.tasks)
        future: Future[CheckReply] = Future()

        def runs(program: Program):
            eager = run(calls=[call(result=tensor([1.0]))])
            if task.configuration == self.under and self.crashes(program):
                error = exc("InternalTorchDynamoError", "IndexError: pop from empty list", dynamo=True)
                return [eager, compiled_run(outcome=Outcome.RAISED, calls=[call(exception=error)], uncaught=error,
                                            uncaught_call=0)]
            features = frozenset({1, 2, 3, 100 + n % 7} | ({5000 + n} if n % 5 == 0 else set()))
            return [eager, replace(compiled_run(calls=[call(result=tensor([1.0]))]), features=features)]

        future.set_result(first_pass(task, runs, oracle=Oracle(), builder=self.builder,
                                     configuration=task.configuration or "default"))
        return future


def loop(tmp_path: Path, checker: ConfigChecker, *, names=AXIS, known: KnownHits | None = None,
         schedule=None) -> Fuzzer:
    campaign = Campaign.create(tmp_path / "c", CampaignConfig(corpus=("seeds",), configurations=names))
    return Fuzzer(corpus=Corpus(), coverage=CoverageMap(), mutator=Mutator(all_operators()),
                  schedule=schedule or RareSchedule(), checker=checker,  # type: ignore[arg-type]
                  filing=Filing(FindingStore(campaign.root), known), campaign=campaign, rng=random.Random(0),
                  inflight=2, configurations=ConfigurationSchedule(names))


def test_seeds_are_checked_under_the_first_configuration_then_swept_under_each_other(tmp_path: Path):
    checker = ConfigChecker()
    fuzzer = loop(tmp_path, checker)
    fuzzer.seed(SEEDS)
    assert {t.configuration for t in checker.tasks} == {"default"}  # the dry run
    fuzzer.run(Budget(max_execs=30))
    sweeps = [(t.program.source, t.configuration) for t in checker.tasks[len(SEEDS):]
              if t.recipe is None and not t.steps]
    assert len(sweeps) == len(set(sweeps))  # each once
    assert {(s.source, name) for s in SEEDS for name in AXIS[1:]} <= set(sweeps)  # the seeds first
    assert all(name != "default" or source not in {s.source for s in SEEDS} for source, name in sweeps)
    mutants = [t for t in checker.tasks if t.recipe is not None]
    assert mutants and {t.configuration for t in mutants} <= set(AXIS)
    stats = fuzzer.snapshot()["configurations"]
    assert stats["nested-graph-breaks"]["swept"] >= len(SEEDS) and stats["dynamic"]["swept"] >= len(SEEDS)
    fuzzer.campaign.close()


def test_a_program_that_crashes_only_under_a_configuration_is_one_finding_that_says_so(tmp_path: Path):
    checker = ConfigChecker(crashes=lambda program: "x + 1" in program.source)
    fuzzer = loop(tmp_path, checker)
    fuzzer.seed(SEEDS)
    fuzzer.run(Budget(max_execs=20))
    [finding] = fuzzer.store.findings.values()
    assert finding.configuration == "nested-graph-breaks"
    assert set(finding.configurations) == {"nested-graph-breaks"}
    assert trigger(finding.history[0]["provenance"]) == "configuration nested-graph-breaks"
    assert finding.history[0]["configuration"] == "nested-graph-breaks"
    readme = (fuzzer.campaign.root / finding.directory / "README.md").read_text()
    assert "--config nested-graph-breaks" in readme and "nested_graph_breaks = True" in readme
    assert fuzzer.snapshot()["configurations"]["nested-graph-breaks"]["new_bugs"] == 1
    assert not fuzzer.set_aside  # a sweep's failure is a finding, not a seed set aside
    fuzzer.campaign.close()


def test_sweeps_take_their_share_and_leave_the_rest_to_mutants():
    schedule = ConfigurationSchedule(AXIS)
    for entry in range(50):
        schedule.entered(entry, "default")
    sweeps = mutants = 0
    rng = random.Random(1)
    for _ in range(60):
        if schedule.sweep_due() and schedule.next_sweep(set(range(50))) is not None:
            sweeps += 1
        else:
            schedule.choose(rng, "default")
            mutants += 1
    assert abs(sweeps / 60 - SWEEP_SHARE) < 0.05 and mutants > 0


def test_an_entry_kept_from_a_sweep_is_not_swept_again_and_swept_entries_survive_a_resume():
    schedule = ConfigurationSchedule(AXIS)
    schedule.entered(0, "default")
    schedule.entered(1, "dynamic", swept=True)
    assert schedule.next_sweep({0, 1}) == (0, "nested-graph-breaks")
    state = schedule.state()
    resumed = ConfigurationSchedule(AXIS)
    resumed.restore(state, [(0, "default"), (1, "dynamic")])
    assert [resumed.next_sweep({0, 1}), resumed.next_sweep({0, 1})] == [(0, "dynamic"), None]


def test_a_mutant_takes_its_parents_configuration_half_the_time_and_yield_decides_the_rest():
    schedule = ConfigurationSchedule(AXIS)
    for _ in range(200):
        schedule.record("default", kept=False, new_bug=False, known=False)
        schedule.record("dynamic", kept=False, new_bug=False, known=False)
        schedule.record("nested-graph-breaks", kept=True, new_bug=True, known=False)
    rng = random.Random(0)
    drawn = [schedule.choose(rng, "default") for _ in range(2000)]
    assert 0.45 < drawn.count("default") / 2000 < 0.6  # the parent's, and now and then by yield
    assert drawn.count("nested-graph-breaks") > 5 * drawn.count("dynamic")
    unguided = ConfigurationSchedule(AXIS, feedback=False)
    assert {unguided.choose(rng, "default") for _ in range(100)} == set(AXIS)


def test_a_single_configuration_is_no_axis(tmp_path: Path):
    checker = ConfigChecker()
    fuzzer = loop(tmp_path, checker, names=("default",))
    fuzzer.seed(SEEDS)
    fuzzer.run(Budget(max_execs=10))
    assert {t.configuration for t in checker.tasks} == {"default"}
    fuzzer.campaign.close()


def test_hits_of_known_bugs_count_against_the_parent_and_the_schedule_avoids_it(tmp_path: Path):
    checker = ConfigChecker(under="default", crashes=lambda program: program.name.startswith("mutant_of_"))
    signature = Signature("CRASH", "InternalTorchDynamoError", "torch/_dynamo/symbolic_convert.py:step")
    known = KnownBugs(signatures={signature: "/filed/before"})
    fuzzer = loop(tmp_path, checker, names=("default",), known=KnownHits(tmp_path, known))
    fuzzer.seed([SEEDS[0]])
    [entry] = fuzzer.corpus.entries
    fuzzer.run(Budget(max_execs=12))
    assert not fuzzer.store.findings  # counted, not filed
    assert fuzzer.stats.known == entry.known_hits == 12  # every mutant hit it
    assert avoidance(entry) < 0.1
    assert fuzzer.snapshot()["known_share"] == pytest.approx(12 / 13, abs=0.01)
    fuzzer.campaign.close()


def test_avoidance_falls_with_the_share_of_choices_that_hit_known_bugs():
    entry = CorpusEntry(0, SEEDS[0], frozenset({1}), 0.5, 0, None, "seed")
    assert avoidance(entry) == 1.0
    entry.times_chosen, entry.known_hits = 8, 1
    assert 0.8 < avoidance(entry) < 0.9
    entry.known_hits = 8
    assert avoidance(entry) == pytest.approx(max(MIN_AVOIDANCE, (1 - 0.8) ** 2))
    entry.times_chosen, entry.known_hits = 100, 100
    assert avoidance(entry) == MIN_AVOIDANCE


def test_the_rare_schedule_gives_an_entry_whose_mutants_hit_known_bugs_less_energy():
    corpus, coverage = Corpus(), CoverageMap()
    for n in range(2):
        corpus.add(CorpusEntry(n, SEEDS[n], frozenset({n}), 0.5, 0, None, "seed"))  # each favoured
        coverage.add(frozenset({n}))
    corpus.entries[0].times_chosen, corpus.entries[0].known_hits = 20, 20
    corpus.entries[1].times_chosen = 20
    shares = []
    for schedule in (RareSchedule(), RareSchedule(avoid_known=False)):
        rng = random.Random(0)
        shares.append(sum(schedule.choose(corpus, coverage, rng).id == 0 for _ in range(2000)) / 2000)
    assert shares[0] < 0.1 and abs(shares[1] - 0.5) < 0.05


def test_a_hit_of_a_signature_filed_here_many_times_is_stale(tmp_path: Path):
    checker = ConfigChecker(under="default", crashes=lambda program: program.name.startswith("mutant_of_"))
    fuzzer = loop(tmp_path, checker, names=("default",))
    fuzzer.seed([SEEDS[0]])
    [entry] = fuzzer.corpus.entries
    fuzzer.run(Budget(max_execs=10))
    [finding] = fuzzer.store.findings.values()
    assert finding.hits == 10
    assert fuzzer.stats.stale == entry.known_hits == 10 - STALE_HITS  # the 4th hit on
    assert fuzzer.snapshot()["configurations"]["default"]["new_bugs"] == 1
    fuzzer.campaign.close()


class CountingOnly(ConfigChecker):
    """Leaves every bug verdict unconfirmed, as a Checker told to count known hits does."""

    def submit(self, task: CheckTask) -> Future[CheckReply]:
        future = super().submit(task)
        reply = future.result()
        if reply.result is not None and reply.result.verdict.is_finding and not self.confirm_next:
            future = Future()
            future.set_result(replace(reply, confirmed=False))
        self.confirm_next = False
        return future

    confirm_next = False


def test_an_unconfirmed_hit_whose_signature_is_not_known_is_checked_again_not_filed_unconfirmed(tmp_path: Path):
    checker = CountingOnly(under="default", crashes=lambda program: program.name.startswith("mutant_of_"))
    known = KnownBugs(signatures={Signature("CRASH", "TypeError", "elsewhere"): "/filed/before"})
    fuzzer = loop(tmp_path, checker, names=("default",), known=KnownHits(tmp_path, known))
    fuzzer.seed([SEEDS[0]])
    real_submit = checker.submit

    def submit(task):  # a task seen before is confirmed on its second check
        checker.confirm_next = any(t is task for t in checker.tasks)
        return real_submit(task)

    checker.submit = submit
    fuzzer.run(Budget(max_execs=3))
    assert fuzzer.stats.rechecked >= 1
    [finding] = fuzzer.store.findings.values()
    assert finding.hits >= 1 and fuzzer.stats.known == 0
    fuzzer.campaign.close()


def test_a_queue_entry_kept_from_a_sweep_is_named_for_it(tmp_path: Path):
    campaign = Campaign.create(tmp_path / "c", CampaignConfig(corpus=("seeds",)))
    entry = CorpusEntry(7, SEEDS[0], frozenset({1}), 0.5, 1, 3, "sweep:dynamic:000003", configuration="dynamic")
    assert campaign.entry_name(entry) == "id:000007,src:000003,op:sweep,config:dynamic"
    campaign.close()


def test_no_sweep_when_its_share_is_nought_and_a_share_outside_nought_to_one_is_refused():
    schedule = ConfigurationSchedule(AXIS, sweep_share=0.0)
    schedule.entered(0, "default")
    assert not schedule.sweep_due() and schedule.waiting == 2
    with pytest.raises(ValueError, match="between 0 and 1"):
        ConfigurationSchedule(AXIS, sweep_share=1.5)


def test_the_sweep_goes_to_the_configuration_whose_sweeps_filed_new_bugs():
    schedule = ConfigurationSchedule(AXIS)
    for entry in range(40):
        schedule.entered(entry, "default")
    alive = set(range(40))
    for _ in range(10):  # each sweep under nested graph breaks files a new bug, under dynamic none
        entry, name = schedule.next_sweep(alive)
        schedule.record(name, kept=False, new_bug=name == "nested-graph-breaks", known=False, swept=True)
    picked = [schedule.next_sweep(alive)[1] for _ in range(15)]
    assert picked.count("nested-graph-breaks") == 15  # still paying: swept first
    assert schedule.next_sweep(alive) is not None and schedule.waiting > 0


def test_the_sweeps_share_falls_when_its_checks_file_fewer_new_bugs_than_the_mutants():
    schedule = ConfigurationSchedule(AXIS)
    assert schedule.share == SWEEP_SHARE  # both start equally optimistic
    for _ in range(300):
        schedule.record("dynamic", kept=False, new_bug=False, known=False, swept=True)
    for n in range(300):
        schedule.record("default", kept=False, new_bug=n % 30 == 0, known=False)
    assert schedule.share < SWEEP_SHARE / 4
    assert schedule.share >= SWEEP_SHARE * 0.1  # never nothing: kept entries still get swept
    for _ in range(20):
        schedule.record("nested-graph-breaks", kept=False, new_bug=True, known=False, swept=True)
    assert schedule.share == SWEEP_SHARE  # paying again


def test_an_entry_invalid_under_a_configuration_is_barred_from_it_and_so_are_its_descendants():
    schedule = ConfigurationSchedule(AXIS)
    schedule.entered(0, "default")
    sweeps = [schedule.next_sweep({0}), schedule.next_sweep({0})]
    assert sorted(name for _, name in sweeps) == ["dynamic", "nested-graph-breaks"]
    schedule.record("nested-graph-breaks", kept=False, new_bug=False, known=False, swept=True, valid=False,
                    entry_id=0)
    assert schedule.stats["nested-graph-breaks"].invalid == 1
    rng = random.Random(3)
    assert "nested-graph-breaks" not in {schedule.choose(rng, "default", 0) for _ in range(300)}
    assert "nested-graph-breaks" in {schedule.choose(rng, "default", None) for _ in range(300)}
    schedule.entered(1, "default", parent=0)  # a mutant of it, kept
    assert schedule.next_sweep({0, 1}) == (1, "dynamic") and schedule.next_sweep({0, 1}) is None
    assert "nested-graph-breaks" not in {schedule.choose(rng, "default", 1) for _ in range(300)}
    resumed = ConfigurationSchedule(AXIS)
    resumed.restore(schedule.state(), [(0, "default"), (1, "default")])
    assert "nested-graph-breaks" not in {resumed.choose(rng, "dynamic", 1) for _ in range(300)}


def test_an_invalid_check_pays_nothing_to_its_configurations_yield():
    schedule = ConfigurationSchedule(AXIS)
    for _ in range(100):
        schedule.record("dynamic", kept=True, new_bug=False, known=False, valid=False)
        schedule.record("default", kept=True, new_bug=False, known=False)
    assert schedule.recent["dynamic"] < 0.01 < 0.9 < schedule.recent["default"]
