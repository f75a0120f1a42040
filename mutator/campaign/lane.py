"""What passes between the fuzz loop and its lanes (docs/design.md, "campaign").

A lane is work beside the loop: repair of invalid mutants, the LLM's mutants (family L),
sync with peers, background reduction (`mutator/campaign/lanes/`). The loop owns every
piece of campaign state and tells each lane, in its own thread, of the session's events:

    start(loop)            the session begins (before a new campaign's dry run)
    poll(loop) -> jobs     each turn of the fuzz loop (the first right after the dry run):
                           collect what finished beside the loop; programs to check next
    checked(loop, checked) a check's result was processed (counted, filed or kept)
    filed(loop, finding, new=)  a bug verdict was filed as `finding`
    stop(loop)             the session ends: finish or drop the work in flight
    snapshot()             the lane's keys in the live screen's snapshot (stats.json)

A lane implements the hooks it needs (the others do nothing) and is passed to the
`Fuzzer` by `mutate fuzz` (`commands/fuzz.py`); nothing else knows of it. Its counters
that must outlive a session are fields of `FuzzStats` (`loop.stats`), which the loop saves
and restores; what it learns of a finding goes into the finding's record.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from mutator.campaign.corpus import Corpus, CorpusEntry, CoverageMap
from mutator.campaign.directory import Campaign
from mutator.campaign.filing import Filing
from mutator.campaign.stats import FuzzStats
from mutator.core.cpu import Ledger
from mutator.core.program import Program
from mutator.core.verdict import Verdict
from mutator.findings.finding import Finding
from mutator.judge.check import CheckReply, CheckResult, CheckTask
from mutator.mutation.mutator import Mutator
from mutator.mutation.operator import Mutant, Step
from mutator.repair import RepairRequest


@dataclass
class Job:
    """A check the loop sends: the task, the queue entry its program comes from (None for a
    seed) and, once the reply is in, what was checked (a recipe's mutant is built by the
    worker). A `sweep` checks the queue entry `parent` itself, under another configuration."""

    task: CheckTask
    parent: CorpusEntry | None
    seed_path: str | None = None
    program: Program | None = None
    mutant: Mutant | None = None  # None for a seed or a sweep
    sweep: bool = False

    @property
    def configuration(self) -> str:
        return self.task.configuration


@dataclass(frozen=True, slots=True)
class Checked:
    """A processed check, as the lanes are told of it. `request`: an invalid mutant's repair
    request (how its eager run failed), else None."""

    job: Job
    result: CheckResult
    reply: CheckReply | None
    request: RepairRequest | None
    kept: bool
    new_features: bool
    new_bug: bool = False  # filed a frontend-bug signature this campaign had not filed before
    known: bool = False  # hit a bug filed before (--known), or one this campaign has filed many times

    @property
    def valid(self) -> bool:
        return self.result.verdict not in (Verdict.INVALID, Verdict.UNSTABLE)

    @property
    def finding(self) -> bool:
        return self.result.verdict.is_finding

    @property
    def steps(self) -> tuple[Step, ...]:
        return self.job.mutant.steps if self.job.mutant is not None else ()


class Loop(Protocol):
    """What a lane may use of the loop: the campaign's state (its to read; to change only in
    the loop's thread, which is where the hooks run) and three verbs."""

    campaign: Campaign
    corpus: Corpus
    coverage: CoverageMap
    filing: Filing
    stats: FuzzStats
    cpu: Ledger  # where the campaign's CPU went, by stage (`mutator.core.cpu`): lanes add theirs
    mutator: Mutator
    rng: random.Random

    def now(self) -> float:
        """Campaign seconds, earlier sessions included."""

    def choose(self) -> CorpusEntry:
        """A queue entry to mutate, by the schedule (counted as chosen)."""

    def job(self, program: Program, steps: tuple[Step, ...], parent: CorpusEntry | None) -> Job:
        """A program made beside the loop (a repair, an LLM mutant) as a job, checked like a mutant."""


class Lane:
    """Work beside the fuzz loop; every hook does nothing unless the lane says otherwise."""

    # the worker that finds a mutant invalid tries the repair rules on it at once and sends the
    # repair with the verdict (`CheckTask.repair`): the repair lane's rules, without a parse here
    worker_repair = False

    def start(self, loop: Loop) -> None:
        pass

    def poll(self, loop: Loop) -> Iterable[Job]:
        return ()

    def checked(self, loop: Loop, checked: Checked) -> None:
        pass

    def filed(self, loop: Loop, finding: Finding, *, new: bool) -> None:
        pass

    def stop(self, loop: Loop) -> None:
        pass

    def snapshot(self) -> dict[str, Any]:
        return {}
