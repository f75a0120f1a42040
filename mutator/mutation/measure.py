"""How often each operator applies to a corpus, and how often its mutants are valid.

A mutant is *valid* when its eager run completes: the program is still a program. Runs
go through the pool, all in flight at once. A splice takes its part from the next program
of the corpus (the first, for the last).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field

from mutator.mutation.mutator import Mutator
from mutator.mutation.operator import Mutant, Operator
from mutator.core.observation import ExecResult, Mode, Outcome
from mutator.core.program import Program


@dataclass
class OperatorMeasure:
    op: str
    family: str
    description: str
    programs: int = 0  # programs tried
    applicable: int = 0  # programs it produced at least one mutant for
    mutants: int = 0
    valid: int = 0  # mutants whose eager run completed
    declines: Counter[str] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)  # why mutants were invalid

    @property
    def valid_rate(self) -> float:
        return self.valid / self.mutants if self.mutants else 0.0

    def as_json(self) -> dict[str, object]:
        return dict(op=self.op, family=self.family, programs=self.programs, applicable=self.applicable,
                    mutants=self.mutants, valid=self.valid, valid_rate=round(self.valid_rate, 3),
                    top_declines=self.declines.most_common(3), top_failures=self.failures.most_common(3))


def measure(operators: Sequence[type[Operator]], programs: Sequence[Program],
            submit: Callable[[Program, Mode], Future[ExecResult]], *, rng_seeds: Sequence[int] = (0, 1, 2),
            progress: Callable[[], None] | None = None) -> list[OperatorMeasure]:
    """Apply every operator to every program with each RNG seed; run distinct mutants eagerly."""
    mutator = Mutator(operators)
    results = {op.id: OperatorMeasure(op.id, op.family, op.DESCRIPTION) for op in operators}
    pending: list[tuple[OperatorMeasure, Future[ExecResult]]] = []
    for op in operators:
        stats = results[op.id]
        for i, program in enumerate(programs):
            stats.programs += 1
            sources: set[str] = set()
            donor = programs[(i + 1) % len(programs)] if op.NEEDS_DONOR else None
            for seed in rng_seeds:
                result = mutator.apply(op, program, random.Random(seed), donor=donor)
                if not isinstance(result, Mutant):
                    stats.declines[result.reason] += 1
                elif result.program.source not in sources:
                    sources.add(result.program.source)
                    pending.append((stats, submit(result.program, Mode.EAGER)))
            stats.applicable += bool(sources)
            stats.mutants += len(sources)
    for stats, future in pending:
        run = future.result()
        if run.outcome is Outcome.COMPLETED:
            stats.valid += 1
        else:
            stats.failures[_why(run)] += 1
        if progress:
            progress()
    return list(results.values())


def _why(run: ExecResult) -> str:
    if run.uncaught is not None:
        return run.uncaught.one_line()[:120]
    return f"{run.outcome.value}: {run.detail}"[:120]
