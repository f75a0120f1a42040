"""Repair of invalid mutants beside the loop (`mutator.repair`): the rules first, else the LLM.

The rules are tried by the worker that found the mutant invalid (`worker_repair`), which
sends the repair back with the verdict; here only when it did not. When the rules cannot
repair it and an LLM is configured, the LLM is asked on its own threads. A repaired
program is checked next, before new mutants; a repair's own failure gets no second
repair. What came of repairs is counted by how they were made ("rule.define_name", "llm").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mutator.campaign.lane import Checked, Job, Lane, Loop
from mutator.campaign.lanes.llm import LLMAnswers
from mutator.core.program import Program
from mutator.mutation.operator import REPAIR_PREFIX
from mutator.repair import NotRepaired, Repaired, RepairResult, repair_by_rules

if TYPE_CHECKING:  # the LLM's client imports openai: the driver pays for it only with an endpoint
    from mutator.repair.llm import LLMRepairer


class RepairLane(Lane):
    worker_repair = True

    def __init__(self, *, llm: LLMAnswers | None = None, repairer: LLMRepairer | None = None) -> None:
        self.llm = llm if repairer is not None else None
        self.repairer = repairer
        self._ready: list[Job] = []  # repaired programs, for the loop's next turn

    def checked(self, loop: Loop, checked: Checked) -> None:
        steps = checked.steps
        if steps and steps[-1].op.startswith(REPAIR_PREFIX):
            loop.stats.count(steps[-1].op.removeprefix(REPAIR_PREFIX), valid=checked.valid, kept=checked.kept,
                             findings=checked.finding)
        request = checked.request
        if request is None or request.is_repair:
            return
        loop.stats.repair_tried += 1
        by_worker = checked.reply.repaired if checked.reply is not None else None
        outcome: RepairResult = by_worker if by_worker is not None else repair_by_rules(request)
        if isinstance(outcome, Repaired):
            loop.stats.count(outcome.how, made=True)
            self._ready.append(_repaired_job(loop, checked.job, outcome))
            return
        repairer = self.repairer
        if self.llm is not None and repairer is not None and \
                self.llm.submit("repair", lambda: repairer.repair(request), checked.job):
            loop.stats.count("llm", asked=True)

    def poll(self, loop: Loop) -> list[Job]:
        ready, self._ready = self._ready, []
        for done in self.llm.completed("repair") if self.llm is not None else ():
            if done.error:
                loop.stats.last_llm_error = f"{done.kind}: {done.error}"
            elif isinstance(done.result, Repaired):
                loop.stats.count("llm", made=True)
                ready.append(_repaired_job(loop, done.context, done.result))
            elif isinstance(done.result, NotRepaired):
                loop.stats.last_llm_error = f"repair: {done.result.reason}"[:300]
        return ready

    def stop(self, loop: Loop) -> None:
        if self.llm is not None:
            self.llm.close()

    def snapshot(self) -> dict[str, Any]:
        return self.llm.snapshot() if self.llm is not None else {}


def _repaired_job(loop: Loop, job: Job, repair: Repaired) -> Job:
    assert job.mutant is not None and job.program is not None
    program = Program(repair.program.source, repair.program.form, job.program.name)
    return loop.job(program, (*job.mutant.steps, repair.step), job.parent)
