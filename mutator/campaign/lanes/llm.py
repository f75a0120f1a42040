"""Family L: mutants the LLM writes beside the loop (`mutator.llm.rewrite`), and the LLM's
threads shared with the repair lane.

Family L is chosen by recent yield like every family: on a turn of the loop when the
LLM's lane has room, the lane draws a family, and when it draws L it asks for a mutant
of an entry the schedule chooses. The first time it asks at once, so the endpoint is
tried in the campaign's first seconds. Its mutants are checked like any; what came of
them is counted under origin "L", and the operator `L.rewrite` learns like any operator.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mutator.campaign.corpus import CorpusEntry
from mutator.campaign.lane import Checked, Job, Lane, Loop
from mutator.core.program import Program
from mutator.mutation.operator import Mutant, family_of

if TYPE_CHECKING:  # the client imports openai: the driver pays for it only with an endpoint
    from mutator.llm.lane import Done, LLMLane

LLM_FAMILY = "L"


class LLMAnswers:
    """The LLM's lane (its threads, its room) shared by the repair lane and family L: each
    takes back only the answers to its own requests."""

    def __init__(self, lane: LLMLane) -> None:
        self.lane = lane
        self._waiting: dict[str, list[Done]] = {}

    def has_room(self) -> bool:
        return self.lane.has_room()

    def submit(self, kind: str, work: Callable[[], Any], context: Any) -> bool:
        return self.lane.submit(kind, work, context)

    def completed(self, kind: str) -> list[Done]:
        for done in self.lane.completed():
            self._waiting.setdefault(done.kind, []).append(done)
        return self._waiting.pop(kind, [])

    def close(self) -> None:
        self.lane.close()

    def snapshot(self) -> dict[str, Any]:
        return dict(llm=self.lane.llm.stats.as_dict())


class LLMMutationLane(Lane):
    def __init__(self, answers: LLMAnswers, mutation: Callable[[Program, random.Random], Mutant | None]) -> None:
        self.answers = answers
        self.mutation = mutation  # `LLMMutation`: blocking, run on the LLM's threads

    def start(self, loop: Loop) -> None:
        loop.mutator.add_family(LLM_FAMILY)

    def poll(self, loop: Loop) -> list[Job]:
        jobs = []
        for done in self.answers.completed("mutation"):
            if done.error:
                loop.stats.last_llm_error = f"{done.kind}: {done.error}"
            elif isinstance(done.result, Mutant):
                parent: CorpusEntry = done.context
                loop.stats.count(LLM_FAMILY, made=True)
                made = done.result.program
                jobs.append(loop.job(Program(made.source, made.form, f"mutant_of_{parent.id:06d}.py"),
                                     done.result.steps, parent))
        self._ask(loop)
        return jobs

    def _ask(self, loop: Loop) -> None:
        if not self.answers.has_room():
            return
        asked = loop.stats.origins.get(LLM_FAMILY, {}).get("asked", 0)
        if asked and loop.mutator.choose_family(loop.rng) != LLM_FAMILY:
            return
        parent = loop.choose()
        rng = random.Random(loop.rng.random())
        if self.answers.submit("mutation", lambda: self.mutation(parent.program, rng), parent):
            loop.stats.count(LLM_FAMILY, asked=True)

    def checked(self, loop: Loop, checked: Checked) -> None:
        if any(family_of(step.op) == LLM_FAMILY for step in checked.steps):
            loop.stats.count(LLM_FAMILY, valid=checked.valid, kept=checked.kept, findings=checked.finding)

    def stop(self, loop: Loop) -> None:
        self.answers.close()  # what is in flight is dropped; its answer is in the LLM's cache

    def snapshot(self) -> dict[str, Any]:
        return self.answers.snapshot()
