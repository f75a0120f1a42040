"""Family L: a mutation operator that is an LLM (off unless an endpoint is configured).

The rule-based families rewrite what a program already contains; this one asks a model
to rewrite the compiled region of a program of the queue so that it exercises a named taxonomy
class. It is scheduled by recent yield like every family, and its mutants go through the
same checks, coverage and findings, so its value is measured like any family's
(`stats.json`: operators `L.rewrite`, origins `L`).
"""

from __future__ import annotations

import random

from mutator.llm.client import LLM, Failure, extract_code
from mutator.llm.prompts import rewrite_messages
from mutator.llm.taxonomy import classes
from mutator.mutation.operator import Mutant, Step
from mutator.core.program import Program, ProgramError

OPERATOR = "L.rewrite"


class LLMMutation:
    """`mutation(program, rng) -> Mutant | None`, blocking (seconds): called beside the loop."""

    def __init__(self, llm: LLM) -> None:
        self.llm = llm
        self.classes = classes()
        self.last_failure = ""

    def __call__(self, program: Program, rng: random.Random) -> Mutant | None:
        cls = self.classes[rng.choice(sorted(self.classes))]
        answer = self.llm.complete(rewrite_messages(cls, program.source, form=program.form.value),
                                   purpose="mutation")
        if isinstance(answer, Failure):
            self.last_failure = f"{answer.reason}: {answer.detail[:200]}"
            return None
        code = extract_code(answer.text)
        if code is None or code == program.source:
            self.last_failure = "no new code in the answer"
            return None
        try:
            mutant = Program.from_source(code, program.name)
        except ProgramError as exc:
            self.last_failure = f"not a program: {str(exc)[:200]}"
            return None
        if mutant.form is not program.form:
            self.last_failure = f"a {mutant.form.value} program for a {program.form.value} one"
            return None
        return Mutant(mutant, (Step(OPERATOR, cls.code),))
