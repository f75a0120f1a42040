"""The fuzz loop against a scripted checker: the driver plans, the "worker" builds and judges.
No processes, no torch."""

from __future__ import annotations

import json
import random
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path

from mutator.campaign.directory import Campaign, CampaignConfig
from mutator.judge.check import CheckReply, CheckResult, CheckTask, first_pass, report_coverage
from mutator.core.features import WorkerCoverage
from mutator.campaign.corpus import Corpus, CoverageMap
from mutator.findings.store import FindingStore
from mutator.campaign.filing import Filing
from mutator.campaign.fuzzer import Budget, Fuzzer
from mutator.campaign.lane import Job, Lane
from mutator.campaign.lanes.repair import RepairLane
from mutator.mutation.mutator import MutantBuilder, Mutator, Recipe
from mutator.mutation.operator import Step
from mutator.mutation.registry import all_operators
from mutator.core.observation import Outcome
from mutator.judge.oracle import Oracle
from mutator.core.program import Program
from mutator.campaign.schedule import UniformSchedule

from tests.helpers import call, compiled_run, exc, run, tensor

SEED = Program.from_source(
    "import torch\n\n\ndef fn(x):\n    y = x + 1\n    return y.sin()\n\n\ndef inputs():\n    return (torch.ones(2),)\n",
    "seed.py")


class ScriptedChecker:
    """Builds recipes like a worker; each check passes with features of its own (so mutants
    are kept), except the programs `invalid` says fail eagerly; `lose` loses the nth task."""

    def __init__(self, *, invalid=lambda program: False, lose: int | None = None,
                 workers: list[WorkerCoverage] | None = None) -> None:
        self.builder = MutantBuilder(all_operators())
        self.invalid = invalid
        self.lose = lose
        self.tasks: list[CheckTask] = []
        self.workers = workers  # report coverage as these workers would, in turn

    def submit(self, task: CheckTask) -> Future[CheckReply]:
        self.tasks.append(task)
        n = len(self.tasks)
        future: Future[CheckReply] = Future()
        if n == self.lose:
            built = self.builder.build(task.program, task.recipe).mutant
            program = replace(built.program, name=task.name)
            lost = (replace(run(outcome=Outcome.LOST), detail="the worker died"),) * 2
            result = CheckResult(program, Oracle().judge(*lost, program=program), lost)
            future.set_result(CheckReply(result, built, ()))
            return future

        def runs(program: Program):
            if self.invalid(program):
                error = exc("NameError", "name 'math' is not defined", line=5)
                return [run(outcome=Outcome.RAISED, calls=[call(exception=error)], uncaught=error, uncaught_call=0),
                        compiled_run(outcome=Outcome.RAISED, calls=[call(exception=error)], uncaught=error,
                                     uncaught_call=0)]
            return [run(calls=[call(result=tensor([1.0]))]),
                    replace(compiled_run(calls=[call(result=tensor([1.0]))]), features=self.features(task, n))]

        reply = first_pass(task, runs, oracle=Oracle(), builder=self.builder)
        if self.workers is not None and task.coverage_key:
            reply = report_coverage(task, reply, self.workers[n % len(self.workers)])
        future.set_result(reply)
        return future

    def features(self, task: CheckTask, n: int) -> frozenset[int]:
        """Arcs shared by many checks, some by few, one check in four a new one."""
        rng = random.Random(n)
        return frozenset({1, 2, 3, rng.randint(10, 14), rng.randint(20, 60)} | ({1000 + n} if n % 4 == 0 else set()))


def loop(tmp_path: Path, checker: ScriptedChecker, mutator: Mutator | None = None) -> Fuzzer:
    campaign = Campaign.create(tmp_path / "c", CampaignConfig(corpus=("seeds",)))
    return Fuzzer(corpus=Corpus(), coverage=CoverageMap(), mutator=mutator or Mutator(all_operators()),
                  schedule=UniformSchedule(), checker=checker, filing=Filing(FindingStore(campaign.root)),  # type: ignore[arg-type]
                  campaign=campaign, lanes=[RepairLane()], rng=random.Random(0), inflight=3)


def test_the_driver_sends_recipes_and_counts_what_the_worker_tried(tmp_path: Path):
    checker = ScriptedChecker()
    fuzzer = loop(tmp_path, checker)
    fuzzer.seed([SEED])
    fuzzer.run(Budget(max_execs=12))
    recipes = [t for t in checker.tasks if t.recipe is not None]
    assert len(recipes) >= 12 and all(t.program.source for t in recipes)
    stats = fuzzer.mutator.stats
    assert sum(u.tries for u in stats.values()) >= sum(u.applied for u in stats.values()) >= 12
    kept = sorted((fuzzer.campaign.root / "queue").glob("id:*,src:*.json"))
    assert kept, "mutants with new features are kept"
    sidecar = json.loads(kept[0].read_text())
    parent = next(e for e in fuzzer.corpus.entries if e.id == sidecar["parent"])
    rebuilt = MutantBuilder(all_operators()).build(parent.program, Recipe.from_json(sidecar["recipe"])).mutant
    assert rebuilt.program.source == kept[0].with_suffix(".py").read_text()  # reproducible from the sidecar
    fuzzer.campaign.close()


def test_an_invalid_mutant_is_logged_and_its_rule_repair_from_the_worker_is_checked_next(tmp_path: Path):
    class Breaking(Mutator):
        remote = False  # a fixed mutant, made here

        def mutate(self, program, rng, *, donor=None):
            from mutator.mutation.operator import Mutant, Step

            broken = Program.from_source(program.source.replace("x + 1", "x + math.pi"), program.name)
            return Mutant(broken, (Step("E2.fake", "fn:5"),))

    checker = ScriptedChecker(invalid=lambda program: "math.pi" in program.source and "import math" not in
                              program.source)
    fuzzer = loop(tmp_path, checker, Breaking(all_operators()))
    fuzzer.seed([SEED])
    fuzzer.run(Budget(max_execs=4))
    repaired = [t for t in checker.tasks if any(s.op.startswith("repair:") for s in t.steps)]
    assert repaired and "import math" in repaired[0].program.source
    assert fuzzer.stats.origins["rule.define_name"]["made"] >= 1
    assert fuzzer.campaign.load_invalid()[0]["type"] == "NameError"
    fuzzer.campaign.close()


def test_a_lost_task_keeps_its_program_in_lost(tmp_path: Path):
    fuzzer = loop(tmp_path, ScriptedChecker(lose=3))
    fuzzer.seed([SEED])
    fuzzer.run(Budget(max_execs=4))
    assert fuzzer.stats.lost == 1
    [lost] = (fuzzer.campaign.root / "lost").glob("*.py")
    assert lost.read_text() != SEED.source and "def fn" in lost.read_text()
    fuzzer.campaign.close()


class Killed(BaseException):
    """The driver killed (-9) at a submission: nothing after it runs, not even a finally."""


def test_a_dry_run_cut_short_is_finished_by_the_resumed_session_without_checking_a_seed_twice(tmp_path: Path):
    seeds = [Program.from_source(SEED.source.replace("x + 1", f"x + {i}"), f"seed{i}.py") for i in range(5)]
    broken = lambda program: "x + 4" in program.source  # noqa: E731  (the last seed fails eagerly: set aside)

    class Dying(ScriptedChecker):
        def submit(self, task: CheckTask) -> Future[CheckReply]:
            if len(self.tasks) == 3:
                raise Killed
            return super().submit(task)

    first = loop(tmp_path, Dying(invalid=broken))
    try:
        first.seed(seeds)
    except Killed:
        pass
    root = first.campaign.root
    first.campaign.close()
    assert [p.name for p in Campaign.resume(root).load_dry_run()] == ["seed3.py", "seed4.py"]  # saved with the queue

    campaign = Campaign.resume(root)
    checker = ScriptedChecker(invalid=broken)
    corpus = Corpus()
    for entry in campaign.load_entries():
        corpus.add(entry)
    second = Fuzzer(corpus=corpus, coverage=CoverageMap(), mutator=Mutator(all_operators()),
                    schedule=UniformSchedule(), checker=checker, filing=Filing(FindingStore(root)),  # type: ignore[arg-type]
                    campaign=campaign, rng=random.Random(0))
    queued = {entry.program.digest for entry in second.corpus.entries}
    second.seed([p for p in campaign.load_dry_run() if p.digest not in queued])
    assert [t.program.name for t in checker.tasks] == ["seed3.py", "seed4.py"]
    assert sorted(e.program.digest for e in second.corpus.entries) == sorted(p.digest for p in seeds[:4])
    assert [row["path"] for row in json.loads((root / "set_aside.json").read_text())] == ["seed4.py"]
    assert not (root / "dry_run.json").exists() and campaign.load_dry_run() == []
    campaign.close()


def test_recipes_that_make_nothing_end_the_loop_instead_of_spinning(tmp_path: Path):
    class Nothing(Mutator):
        def plan(self, rng, *, donor=None):
            return Recipe((("X.no_such_operator",),), 0)

    fuzzer = loop(tmp_path, ScriptedChecker(), Nothing(all_operators()))
    fuzzer.seed([SEED])
    fuzzer.run(Budget(max_execs=5))
    assert fuzzer.session_execs == 1 and fuzzer.mutator.stats["X.no_such_operator"].tries >= 200
    fuzzer.campaign.close()


def test_workers_reporting_only_what_they_had_not_reported_keep_the_same_corpus_and_counts(tmp_path: Path):
    """A driver fed coverage reports (new features, packed ones where keepable, batched hit
    counts) ends with the corpus and the hit counts of a driver fed every feature."""
    whole = loop(tmp_path / "whole", ScriptedChecker())
    workers = [WorkerCoverage(flush_every=1), WorkerCoverage(flush_every=1), WorkerCoverage(flush_every=1)]
    reported = loop(tmp_path / "reported", ScriptedChecker(workers=workers))
    for fuzzer in (whole, reported):
        fuzzer.seed([SEED])
        fuzzer.run(Budget(max_execs=40))
        fuzzer.campaign.close()
    assert [(e.id, e.parent, e.features) for e in reported.corpus.entries] == \
        [(e.id, e.parent, e.features) for e in whole.corpus.entries]
    assert len(whole.corpus) > 5
    assert reported.coverage.hits == whole.coverage.hits and reported.coverage.arcs() == whole.coverage.arcs()


class RecordingLane(Lane):
    """Writes down what the loop tells it; on its first poll it hands the loop a program of
    its own, which must be checked like a mutant."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.handed: Job | None = None

    def start(self, loop):  # type: ignore[no-untyped-def]
        self.events.append("start")

    def poll(self, loop):  # type: ignore[no-untyped-def]
        self.events.append("poll")
        if self.handed is not None:
            return ()
        parent = loop.choose()
        program = Program.from_source(parent.program.source.replace("x + 1", "x + 2"), "lane_made.py")
        self.handed = loop.job(program, (Step("E2.by_the_lane", "fn:5"),), parent)
        return [self.handed]

    def checked(self, loop, checked):  # type: ignore[no-untyped-def]
        self.events.append("seed" if checked.job.mutant is None else "checked")

    def stop(self, loop):  # type: ignore[no-untyped-def]
        self.events.append("stop")

    def snapshot(self):  # type: ignore[no-untyped-def]
        return dict(recording=len(self.events))


def test_the_loop_tells_its_lanes_of_the_session_and_checks_what_they_hand_it(tmp_path: Path):
    checker = ScriptedChecker()
    lane = RecordingLane()
    campaign = Campaign.create(tmp_path / "c", CampaignConfig(corpus=("seeds",)))
    fuzzer = Fuzzer(corpus=Corpus(), coverage=CoverageMap(), mutator=Mutator(all_operators()),
                    schedule=UniformSchedule(), checker=checker, filing=Filing(FindingStore(campaign.root)),  # type: ignore[arg-type]
                    campaign=campaign, lanes=[lane], rng=random.Random(0), inflight=3)
    fuzzer.seed([SEED])
    fuzzer.run(Budget(max_execs=6))
    fuzzer.stop()
    events = lane.events
    # the dry run is not polled: the first poll comes after it, before the first mutant
    assert events[:3] == ["start", "seed", "poll"] and events[-1] == "stop" and events.count("start") == 1
    assert events.count("checked") == 6 and events.count("poll") >= 2
    assert lane.handed is not None and lane.handed.task is checker.tasks[1]  # checked first, before new mutants
    assert checker.tasks[1].steps == (Step("E2.by_the_lane", "fn:5"),) and checker.tasks[1].parent.source == SEED.source
    stats = json.loads((campaign.root / "stats.json").read_text())
    assert stats["snapshot"]["recording"] == len(events) and stats["snapshot"]["sync"] is None
    campaign.close()


def test_every_plan_is_offered_another_queue_entry_as_donor_while_the_mutator_splices(tmp_path: Path):
    offered: list[tuple[str, str | None]] = []

    class Recording(Mutator):
        def plan(self, rng, *, donor=None):
            offered.append((self.parent_source, donor.source if donor is not None else None))
            return super().plan(rng, donor=donor)

    other = Program.from_source(SEED.source.replace("x + 1", "x * 3"), "other.py")
    for splice in (True, False):
        offered.clear()
        mutator = Recording(all_operators(), splice=splice)
        fuzzer = loop(tmp_path / str(splice), ScriptedChecker(), mutator)
        fuzzer.seed([SEED, other])
        original = fuzzer.choose

        def choose():  # the parent each plan is for
            parent = original()
            mutator.parent_source = parent.program.source
            return parent

        fuzzer.choose = choose  # type: ignore[method-assign]
        fuzzer.run(Budget(max_execs=10))
        fuzzer.campaign.close()
        assert offered
        if splice:
            assert all(donor is not None and donor != parent for parent, donor in offered)
        else:
            assert all(donor is None for _, donor in offered)


class SameCrash(ScriptedChecker):
    """Every mutant's compiled call raises the same Dynamo error: one bug, hit again and again."""

    def submit(self, task: CheckTask) -> Future[CheckReply]:
        self.tasks.append(task)
        future: Future[CheckReply] = Future()
        error = exc("torch._dynamo.exc.InternalTorchDynamoError", dynamo=True)

        def runs(program: Program):
            if task.recipe is None:  # the seed passes
                return [run(calls=[call(result=tensor([1.0]))]),
                        compiled_run(calls=[call(result=tensor([1.0]))])]
            return [run(calls=[call(result=tensor([1.0]))]),
                    compiled_run(calls=[call(exception=error)], outcome=Outcome.RAISED, uncaught=error,
                                 uncaught_call=0)]

        future.set_result(first_pass(task, runs, oracle=Oracle(), builder=self.builder))
        return future


def test_operators_are_credited_with_a_new_bug_not_with_hits_of_a_bug_filed_before(tmp_path: Path):
    fuzzer = loop(tmp_path, SameCrash(), Mutator(all_operators(), max_stack=1))  # one operator a mutant
    fuzzer.seed([SEED])
    fuzzer.run(Budget(max_execs=10))
    assert fuzzer.stats.hits == 10 and len(fuzzer.store.findings) == 1
    stats = fuzzer.mutator.stats.values()
    assert sum(u.findings for u in stats) == 1  # the first hit filed the bug; nine more found nothing new
    assert sum(u.valid for u in stats) == 10
    fuzzer.campaign.close()


def test_arc_share_samples_the_arcs_of_mutants_never_of_the_dry_run(tmp_path: Path):
    checker = ScriptedChecker()
    fuzzer = loop(tmp_path, checker)
    fuzzer.arc_share = 0.25
    fuzzer.seed([SEED])
    fuzzer.run(Budget(max_execs=80))
    assert checker.tasks[0].arcs  # the seed's dry run: the queue starts with all it covers
    mutants = checker.tasks[1:]
    assert 0.1 < sum(task.arcs for task in mutants) / len(mutants) < 0.45
    assert 0 < fuzzer.stats.traced < fuzzer.stats.execs
    assert fuzzer.snapshot()["traced_share"] == round(fuzzer.stats.traced / fuzzer.stats.execs, 3)


def test_by_default_every_check_records_arcs(tmp_path: Path):
    checker = ScriptedChecker()
    fuzzer = loop(tmp_path, checker)
    fuzzer.seed([SEED])
    fuzzer.run(Budget(max_execs=12))
    assert all(task.arcs for task in checker.tasks) and fuzzer.stats.traced == fuzzer.stats.execs
