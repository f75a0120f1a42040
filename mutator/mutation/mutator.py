"""The Mutator: pick operators by family and measured usefulness, apply one or stack a few.

A family (a leaf class of the taxonomy) is chosen by its recent yield, then an operator
within the family in proportion to its usefulness: how often its mutants were valid,
added coverage and found bugs. Both are fed back by the fuzz loop through `record`.

Recent yield is a moving average of "this family's mutant was kept or found a bug",
starting optimistic (1.0) so that every family is tried before any is judged, and
floored (FAMILY_FLOOR) so that none is ever abandoned: what a family reaches is soon
exhausted, and the average forgets past success where cumulative counts would not
(MOpt's operator scheduling, per family). Without feedback (unguided) every family keeps
its starting yield: uniform choice.
"""

from __future__ import annotations

import random
from collections import OrderedDict, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from mutator.mutation.context import MutationContext
from mutator.mutation.operator import Declined, Mutant, Operator, apply, family_of
from mutator.program import Program

MAX_TRIES = 12  # operators tried per step before the step gives up (most decline on some programs)
CONTEXT_CACHE = 256
FAMILY_MEMORY = 0.9  # weight of the past in a family's recent yield, per mutant recorded
FAMILY_FLOOR = 0.05  # added to every family's yield: the exploration share


@dataclass
class Usefulness:
    """What one operator's mutants did, as the fuzz loop saw it."""

    tries: int = 0  # times chosen
    applied: int = 0  # times it produced a mutant
    valid: int = 0  # mutants whose eager run completed
    new_features: int = 0  # mutants kept for new coverage
    findings: int = 0  # mutants with a bug verdict

    def weight(self) -> float:
        """Laplace-smoothed: untried operators get a fair chance; useful ones get more."""
        applied_rate = (self.applied + 1) / (self.tries + 2)
        valid_rate = (self.valid + 1) / (self.applied + 2)
        payoff = 1.0 + 4.0 * (self.new_features + 3 * self.findings) / (self.applied + 4)
        return applied_rate * valid_rate * payoff

    def as_dict(self) -> dict[str, int]:
        return dict(tries=self.tries, applied=self.applied, valid=self.valid, new_features=self.new_features,
                    findings=self.findings)


class Mutator:
    def __init__(self, operators: Sequence[type[Operator]], *, max_stack: int = 3,
                 extra_families: Sequence[str] = ()) -> None:
        """`extra_families`: families without operators here, whose mutants come from
        elsewhere (the LLM's family L) but are scheduled by recent yield like the rest."""
        if not operators:
            raise ValueError("a Mutator needs at least one operator")
        self.operators = tuple(operators)
        self.max_stack = max_stack
        self.stats: dict[str, Usefulness] = defaultdict(Usefulness)
        self._families: dict[str, list[type[Operator]]] = defaultdict(list)
        for op in self.operators:
            self._families[op.family].append(op)
        self.family_yield: dict[str, float] = {family: 1.0 for family in (*self._families, *extra_families)}
        self._contexts: OrderedDict[str, MutationContext] = OrderedDict()

    def mutate(self, program: Program, rng: random.Random) -> Mutant | None:
        """One mutant with 1..max_stack stacked operators (fewer is likelier), or None."""
        depth = 1
        while depth < self.max_stack and rng.random() < 0.4:
            depth += 1
        current, steps = program, []
        for _ in range(depth):
            mutant = self.step(current, rng)
            if mutant is None:
                break
            current, steps = mutant.program, steps + list(mutant.steps)
        return Mutant(current, tuple(steps)) if steps else None

    def step(self, program: Program, rng: random.Random) -> Mutant | None:
        """Apply one operator, trying others when the chosen one declines."""
        ctx = self.context(program)
        for _ in range(MAX_TRIES):
            op = self.choose(rng)
            self.stats[op.id].tries += 1
            result = apply(op, ctx, rng)
            if isinstance(result, Mutant):
                self.stats[op.id].applied += 1
                return result
        return None

    def apply(self, op: type[Operator], program: Program, rng: random.Random) -> Mutant | Declined:
        """Apply a given operator (for `mutate mutate --op` and measurements)."""
        return apply(op, self.context(program), rng)

    def choose(self, rng: random.Random) -> type[Operator]:
        family = self._pick(sorted(self._families), rng)
        ops = self._families[family]
        return rng.choices(ops, weights=[self.stats[op.id].weight() for op in ops])[0]

    def add_family(self, family: str) -> None:
        """An extra family from now on (see `extra_families`), at the optimistic start."""
        self.family_yield.setdefault(family, 1.0)

    def choose_family(self, rng: random.Random) -> str:
        """A family by recent yield, extra families included: whether the next mutant is
        one of theirs."""
        return self._pick(sorted(self.family_yield), rng)

    def _pick(self, families: list[str], rng: random.Random) -> str:
        return rng.choices(families, weights=[FAMILY_FLOOR + self.family_yield[f] for f in families])[0]

    def record(self, mutant: Mutant, *, valid: bool, new_features: bool, finding: bool) -> None:
        """Feedback from running `mutant`, credited to every operator that made it."""
        for op in {step.op for step in mutant.steps}:
            stats = self.stats[op]
            stats.valid += valid
            stats.new_features += new_features
            stats.findings += finding
        paid = float(new_features or finding)
        for family in {family_of(step.op) for step in mutant.steps} & self.family_yield.keys():
            self.family_yield[family] = FAMILY_MEMORY * self.family_yield[family] + (1 - FAMILY_MEMORY) * paid

    def context(self, program: Program) -> MutationContext:
        key = program.digest
        if key in self._contexts:
            self._contexts.move_to_end(key)
            return self._contexts[key]
        ctx = MutationContext.of(program)
        self._contexts[key] = ctx
        if len(self._contexts) > CONTEXT_CACHE:
            self._contexts.popitem(last=False)
        return ctx
