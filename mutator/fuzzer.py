"""The fuzz loop: seed, then choose, mutate, run, judge, keep (DESIGN.md; STYLE.md, Fuzzing Book).

The main thread owns every piece of state (corpus, coverage map, findings, statistics);
worker threads only wait on the pool. Up to `inflight` checks run at once so that every
worker stays busy.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from mutator.campaign import Campaign, CampaignError
from mutator.check import Checker, CheckResult
from mutator.corpus import Corpus, CorpusEntry, CoverageMap
from mutator.features import semantic_features
from mutator.findings import FindingStore
from mutator.mutation.mutator import Mutator, Usefulness
from mutator.mutation.operator import Mutant, family_of
from mutator.observation import Outcome
from mutator.program import Program
from mutator.reduce.targets import record_reduction
from mutator.schedule import Schedule
from mutator.verdict import Verdict

if TYPE_CHECKING:
    from mutator.reduce.background import BackgroundReduction as Reduction

SAVE_EVERY = 5.0  # seconds between stats/coverage/plot writes (events write at once too)
MAX_BARREN = 200  # consecutive choices that yield no mutant before the loop gives up


@dataclass
class Budget:
    max_execs: int | None = None  # checks in this session
    seconds: float | None = None


@dataclass
class FuzzStats:
    execs: int = 0  # programs checked, all sessions (seeds included)
    kept: int = 0
    invalid: int = 0
    unstable: int = 0
    hits: int = 0  # bug verdicts, all signatures
    lost: int = 0
    elapsed: float = 0.0  # campaign seconds before this session
    sessions: int = 0
    last_new_path: float = 0.0
    last_finding: float = 0.0
    verdicts: dict[str, int] = field(default_factory=dict)
    reduced: int = 0  # findings reduced in the background
    merged: int = 0  # findings merged into another after reduction
    reduce_failed: int = 0  # reductions that ended without a result (the reason: last_reduce_error)
    last_reduce_error: str = ""


@dataclass
class _Job:
    program: Program
    mutant: Mutant | None  # None for a seed
    parent: CorpusEntry | None
    seed_path: str | None = None


class Fuzzer:
    def __init__(self, *, corpus: Corpus, coverage: CoverageMap, mutator: Mutator, schedule: Schedule,
                 checker: Checker, store: FindingStore, campaign: Campaign, rng: random.Random,
                 stats: FuzzStats | None = None, feedback: bool = True, inflight: int = 4,
                 health: Callable[[], list[str]] | None = None, reduction: Reduction | None = None) -> None:
        self.corpus = corpus
        self.coverage = coverage
        self.mutator = mutator
        self.schedule = schedule
        self.checker = checker
        self.store = store
        self.campaign = campaign
        self.rng = rng
        self.stats = stats or FuzzStats()
        self.feedback = feedback
        self.inflight = inflight
        self.health = health or (lambda: [])
        self.reduction = reduction  # reduces new findings beside the loop, if given
        self.latest_finding = ""
        self.set_aside: list[dict[str, Any]] = []
        self.stopping = False
        self._session_start = time.monotonic()
        self._session_execs = 0
        self._last_save = 0.0

    # -- the phases ----------------------------------------------------------------------
    def seed(self, programs: Iterable[Program], *, on_progress: Callable[[dict[str, Any]], None] | None = None) -> None:
        """Dry-run every seed: valid ones enter the queue; invalid, unstable or buggy ones are set aside."""
        jobs = [_Job(p, None, None, seed_path=p.name) for p in programs]
        self._drain(iter(jobs), Budget(), on_progress)
        self.campaign.save_set_aside(self.set_aside)
        if not self.corpus.entries:
            raise CampaignError(f"no usable seed: all {len(jobs)} were set aside (see set_aside.json)")
        self.save(force=True)

    def run(self, budget: Budget, *, on_progress: Callable[[dict[str, Any]], None] | None = None) -> None:
        """Fuzz until the budget is spent or `stopping` is set."""
        self.stats.sessions += 1
        if self.reduction is not None:  # what an earlier session left unreduced
            for finding in sorted(self.store.findings.values(), key=lambda f: f.first_seen):
                self.reduction.submit(finding)
        self._drain(self._mutants(), budget, on_progress)
        self.save(force=True)

    def _mutants(self):  # type: ignore[no-untyped-def]
        barren = 0
        while barren < MAX_BARREN:
            parent = self.schedule.choose(self.corpus, self.coverage, self.rng)
            parent.times_chosen += 1
            mutant = self.mutator.mutate(parent.program, self.rng)
            if mutant is None:
                barren += 1
                continue
            barren = 0
            program = Program(mutant.program.source, mutant.program.form, f"mutant_of_{parent.id:06d}.py")
            yield _Job(program, mutant, parent)

    def _drain(self, jobs, budget: Budget, on_progress) -> None:  # type: ignore[no-untyped-def]
        started, executed = time.monotonic(), 0
        pending: dict[Future[CheckResult], _Job] = {}
        with ThreadPoolExecutor(max_workers=self.inflight, thread_name_prefix="mutator-check") as executor:
            try:
                while True:
                    while not self.stopping and len(pending) < self.inflight and _within(budget, executed + len(pending), started):
                        job = next(jobs, None)
                        if job is None:
                            break
                        pending[executor.submit(self.checker.check, job.program)] = job
                    if not pending:
                        return
                    done, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                    for future in done:
                        self._process(pending.pop(future), future.result())
                        executed += 1
                    self.collect_reductions()
                    if on_progress is not None:
                        on_progress(self.snapshot())
                    self.save()
            finally:
                for future in pending:
                    future.cancel()

    def _process(self, job: _Job, result: CheckResult) -> None:
        """Judge one result: count it, file a finding, keep it if it adds features."""
        now = self.now()
        stats = self.stats
        stats.execs += 1
        self._session_execs += 1
        verdict = result.verdict
        stats.verdicts[verdict.name] = stats.verdicts.get(verdict.name, 0) + 1
        stats.invalid += verdict is Verdict.INVALID
        stats.unstable += verdict is Verdict.UNSTABLE
        for run in result.runs:
            if run.outcome is Outcome.LOST:
                stats.lost += 1
                self.campaign.save_lost(job.program, run.detail, found_at=now)
                break
        valid = verdict not in (Verdict.INVALID, Verdict.UNSTABLE)
        features = result.compiled.features | semantic_features(result.compiled) if valid else frozenset()
        new = self.coverage.new(features)
        self.coverage.add(features)
        provenance = job.mutant.provenance if job.mutant else f"seed:{job.seed_path}"
        parent_id = job.parent.id if job.parent else None
        if verdict.is_finding:
            finding, is_new = self.store.record(result, provenance=provenance, parent=parent_id, elapsed=now)
            stats.hits += 1
            stats.last_finding = now
            self.latest_finding = f"{finding.signature.describe()}: {finding.reason}"[:160]
            if job.parent:
                job.parent.finds += 1
            if is_new and self.reduction is not None:
                self.reduction.submit(finding)
        elif job.mutant is None:  # a seed
            if verdict is Verdict.PASS:
                self._keep(job, result, features, now)
        elif new and self.feedback and verdict is Verdict.PASS:
            self._keep(job, result, features, now)
            assert job.parent is not None
            job.parent.finds += 1
        if job.mutant is None and verdict is not Verdict.PASS:
            self.set_aside.append(dict(path=job.seed_path, verdict=verdict.name, reason=result.reason))
        if verdict is Verdict.INVALID and job.mutant is not None:
            self.campaign.save_invalid(job.program, invalid_record(job.mutant, result, found_at=now))
        if job.mutant is not None and self.feedback:
            self.mutator.record(job.mutant, valid=valid, new_features=bool(new), finding=verdict.is_finding)
        if verdict.is_finding:
            self.save(force=True)

    def _keep(self, job: _Job, result: CheckResult, features: frozenset[int], now: float) -> None:
        entry = CorpusEntry(
            id=self.corpus.next_id(), program=job.program, features=features, seconds=result.seconds,
            depth=job.parent.depth + 1 if job.parent else 0, parent=job.parent.id if job.parent else None,
            provenance=job.mutant.provenance if job.mutant else job.seed_path or "",
        )
        name = self.campaign.entry_name(entry, seed_path=job.seed_path)
        entry.program = Program(job.program.source, job.program.form, str(self.campaign.program_path(name)))
        self.campaign.save_entry(entry, name, found_at=now)
        self.corpus.add(entry)
        self.stats.kept += 1
        self.stats.last_new_path = now
        self.save(force=True)

    def collect_reductions(self) -> None:
        """Record the reductions finished in the background, merging findings that turn out
        to be one; this thread owns the findings, so only it writes their records."""
        if self.reduction is None:
            return
        for directory, outcome in self.reduction.completed():
            finding = self.store.at(self.campaign.root / directory)
            if outcome.error or outcome.reduction is None:
                self.stats.reduce_failed += 1
                self.stats.last_reduce_error = f"{directory}: {outcome.error}"[:500]
                continue
            if finding is None:
                continue
            before = len(self.store.findings)
            record_reduction(self.store, finding, outcome)
            self.stats.reduced += 1
            self.stats.merged += before - len(self.store.findings)
            self.save(force=True)

    # -- state -----------------------------------------------------------------------------
    @property
    def session_execs(self) -> int:
        return self._session_execs

    def now(self) -> float:
        return self.stats.elapsed + (time.monotonic() - self._session_start)

    def save(self, *, force: bool = False) -> None:
        if not force and time.monotonic() - self._last_save < SAVE_EVERY:
            return
        self._last_save = time.monotonic()
        snapshot = self.snapshot()
        self.campaign.save_coverage(self.coverage)
        self.campaign.save_stats(dict(
            counters={**asdict(self.stats), "elapsed": round(self.now(), 2)},
            snapshot=snapshot,
            queue_state={str(e.id): [e.times_chosen, e.finds] for e in self.corpus.entries},
            operators={op: u.as_dict() for op, u in sorted(self.mutator.stats.items())},
            family_yield={f: round(y, 6) for f, y in sorted(self.mutator.family_yield.items())},
        ))
        self.campaign.append_plot({k: snapshot.get(k, "") for k in
                                   ("elapsed", "execs", "execs_per_sec", "corpus", "favoured", "arcs", "features",
                                    "findings", "hits", "invalid", "unstable")})

    def restore(self, saved: dict[str, Any]) -> None:
        """Counters, choice counts and operator usefulness from a previous session's stats.json."""
        counters = saved.get("counters", {})
        self.stats = FuzzStats(**{k: v for k, v in counters.items() if k in FuzzStats.__dataclass_fields__})
        # The queue and the findings are written before stats.json: a kill in between leaves
        # stats.json behind them, so they win.
        self.stats.kept = len(self.corpus)
        self.stats.hits = max(self.stats.hits, sum(f.hits for f in self.store.findings.values()))
        self.stats.execs = max(self.stats.execs, self.stats.kept + self.stats.hits)
        state = saved.get("queue_state", {})
        for entry in self.corpus.entries:
            entry.times_chosen, entry.finds = state.get(str(entry.id), (0, 0))
        for op, values in saved.get("operators", {}).items():
            self.mutator.stats[op] = Usefulness(**values)
        for family, value in saved.get("family_yield", {}).items():
            if family in self.mutator.family_yield:
                self.mutator.family_yield[family] = float(value)

    def snapshot(self) -> dict[str, Any]:
        session = max(time.monotonic() - self._session_start, 1e-6)
        execs = max(self.stats.execs, 1)
        families: dict[str, Counter[str]] = {}
        for op, u in self.mutator.stats.items():
            family = families.setdefault(family_of(op), Counter())
            family.update(applied=u.applied, valid=u.valid, new=u.new_features, findings=u.findings)
        return dict(
            elapsed=round(self.now(), 1),
            execs=self.stats.execs,
            execs_per_sec=round(self._session_execs / session, 2),
            corpus=len(self.corpus),
            favoured=len(self.corpus.favoured()),
            arcs=self.coverage.arcs(),
            features=len(self.coverage),
            findings=len(self.store.findings),
            findings_by_kind=self.store.count_by_kind(),
            hits=self.stats.hits,
            latest_finding=self.latest_finding,
            invalid=self.stats.invalid,
            unstable=self.stats.unstable,
            invalid_rate=round(self.stats.invalid / execs, 3),
            unstable_rate=round(self.stats.unstable / execs, 3),
            lost=self.stats.lost,
            last_new_path=round(self.stats.last_new_path, 1),
            families={f: dict(c) for f, c in sorted(families.items())},
            reduced=self.stats.reduced,
            merged=self.stats.merged,
            reducing=self.reduction.pending if self.reduction is not None else 0,
            workers=self.health(),
        )


def invalid_record(mutant: Mutant, result: CheckResult, *, found_at: float) -> dict[str, Any]:
    """Why a mutant is invalid, as a line of invalid/index.jsonl: its eager failure (exception
    type, message, the innermost frame of the program's own code) and where it came from."""
    eager = result.eager
    exc = eager.observation.uncaught
    record: dict[str, Any] = dict(provenance=mutant.provenance, outcome=eager.outcome.value,
                                  reason=result.reason[:300], found_at=round(found_at, 2))
    if exc is not None:
        own = [f for f in exc.frames if f.filename == result.program.name]
        record.update(type=exc.type_name, message=exc.message[:300],
                      frame=str(own[-1]) if own else (str(exc.frames[-1]) if exc.frames else ""))
    return record


def _within(budget: Budget, executed: int, started: float) -> bool:
    if budget.max_execs is not None and executed >= budget.max_execs:
        return False
    return budget.seconds is None or time.monotonic() - started < budget.seconds
