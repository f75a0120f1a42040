"""The Mutator: pick operators by family and measured usefulness, apply one or stack a few.

A family (a leaf class of the taxonomy) is chosen by its recent yield, then an operator
within the family in proportion to its usefulness: how often its mutants were valid,
added coverage and found new bugs. Both are fed back by the fuzz loop through `record`.

Recent yield is a moving average of "this family's mutant was kept or found a new bug",
starting optimistic (1.0) so that every family is tried before any is judged, and
floored (FAMILY_FLOOR) so that none is ever abandoned: what a family reaches is soon
exhausted, and the average forgets past success where cumulative counts would not
(MOpt's operator scheduling, per family). Without feedback (unguided) every family keeps
its starting yield: uniform choice.

The choice and the work are apart, so that the fuzz loop's driver only decides: `plan`
draws a `Recipe` (per stacked step the operators to try in order, and the seed of the
RNG that picks their sites), and a `MutantBuilder`, in the worker that will run the
mutant, builds it with the programs it parsed before cached by content hash. A mutant is
reproducible from its parent's source and its recipe; `mutate` does both here.

Splices (family S) take a part of a second program, the donor: `plan(rng, donor=...)`
may draw them, and a recipe that did carries the donor's source (only such a recipe:
the task stays small otherwise), so a worker that never saw the donor builds the same
mutant. Without a donor, or with `splice=False`, the plan draws from the other families.
"""

from __future__ import annotations

import random
from collections import OrderedDict, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mutator.mutation.context import MutationContext
from mutator.mutation.operator import Declined, Mutant, Operator, apply, family_of
from mutator.core.program import Program, ProgramForm

MAX_TRIES = 12  # operators tried per step before the step gives up (most decline on some programs)
CONTEXT_CACHE = 256  # parsed programs kept by a builder
FAMILY_MEMORY = 0.9  # weight of the past in a family's recent yield, per mutant recorded
FAMILY_FLOOR = 0.05  # added to every family's yield: the exploration share
PLAN_REFRESH = 64  # plans drawn from one table of operator weights before it is made again


@dataclass
class Usefulness:
    """What one operator's mutants did, as the fuzz loop saw it."""

    tries: int = 0  # times chosen
    applied: int = 0  # times it produced a mutant
    valid: int = 0  # mutants whose eager run completed
    new_features: int = 0  # mutants kept for new coverage
    findings: int = 0  # mutants that filed a new frontend bug (a hit of a bug filed before is not one)

    def weight(self) -> float:
        """Laplace-smoothed: untried operators get a fair chance; useful ones get more."""
        applied_rate = (self.applied + 1) / (self.tries + 2)
        valid_rate = (self.valid + 1) / (self.applied + 2)
        payoff = 1.0 + 4.0 * (self.new_features + 3 * self.findings) / (self.applied + 4)
        return applied_rate * valid_rate * payoff

    def as_dict(self) -> dict[str, int]:
        return dict(tries=self.tries, applied=self.applied, valid=self.valid, new_features=self.new_features,
                    findings=self.findings)


@dataclass(frozen=True, slots=True)
class Recipe:
    """How to build one mutant: per stacked step, the operator ids to try in order (the first
    that applies makes the step; a step where none applies ends the stack), the seed of the
    RNG that picks the sites, and for a recipe with splices the donor they take parts from.
    With the parent's source it determines the mutant."""

    plan: tuple[tuple[str, ...], ...]
    seed: int
    donor: Program | None = None

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = dict(plan=[list(step) for step in self.plan], seed=self.seed)
        if self.donor is not None:  # whole, so that `mutate mutate --recipe` rebuilds the splice anywhere
            data["donor"] = dict(name=self.donor.name, form=self.donor.form.value, source=self.donor.source)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Recipe:
        donor = data.get("donor")
        return cls(tuple(tuple(str(op) for op in step) for step in data["plan"]), int(data["seed"]),
                   Program(str(donor["source"]), ProgramForm(donor["form"]), str(donor["name"])) if donor else None)


@dataclass(frozen=True, slots=True)
class Built:
    """What a recipe gave: the mutant (None when a first step found no operator that
    applies) and every operator tried, in order, for the driver's usefulness counts."""

    mutant: Mutant | None
    tried: tuple[str, ...]


class MutantBuilder:
    """Builds mutants from recipes; parsed programs (`MutationContext`s, with the sites each
    operator found in them) are cached by content hash, so a parent chosen again costs only
    the rewrite."""

    def __init__(self, operators: Sequence[type[Operator]], *, cache: int = CONTEXT_CACHE) -> None:
        self._operators = {op.id: op for op in operators}
        self._cache = cache
        self._contexts: OrderedDict[str, MutationContext] = OrderedDict()

    def build(self, program: Program, recipe: Recipe) -> Built:
        rng = random.Random(recipe.seed)
        current, steps, tried = program, [], []
        for step in recipe.plan:
            made = None
            for op_id in step:
                tried.append(op_id)
                op = self._operators.get(op_id)
                result = self.apply(op, current, rng, donor=recipe.donor) if op is not None else None
                if isinstance(result, Mutant):
                    made = result
                    break
            if made is None:
                break
            current, steps = made.program, steps + list(made.steps)
        return Built(Mutant(current, tuple(steps)) if steps else None, tuple(tried))

    def apply(self, op: type[Operator], program: Program, rng: random.Random, *,
              donor: Program | None = None) -> Mutant | Declined:
        return apply(op, self.context(program), rng, donor=self.context(donor) if donor is not None else None)

    def context(self, program: Program) -> MutationContext:
        key = program.digest
        if key in self._contexts:
            self._contexts.move_to_end(key)
            return self._contexts[key]
        ctx = MutationContext.of(program)
        self._contexts[key] = ctx
        if len(self._contexts) > self._cache:
            # What operators derived from a context may refer back to it: break the cycle, or
            # in a worker, whose heap is frozen before each fork, it would never be freed.
            self._contexts.popitem(last=False)[1].derived.clear()
        return ctx


class Mutator:
    # Its mutants are built where they run, from recipes (the workers know every registered
    # operator). A mutator that makes mutants its own way (a test's) says False: the fuzz loop
    # then calls `mutate` and sends the mutant itself.
    remote = True

    def __init__(self, operators: Sequence[type[Operator]], *, max_stack: int = 3,
                 extra_families: Sequence[str] = (), splice: bool = True) -> None:
        """`extra_families`: families without operators here, whose mutants come from
        elsewhere (the LLM's family L) but are scheduled by recent yield like the rest.
        `splice=False` leaves the splices out (to measure what they add)."""
        operators = [op for op in operators if splice or not op.NEEDS_DONOR]
        if not operators:
            raise ValueError("a Mutator needs at least one operator")
        self.operators = tuple(operators)
        self.max_stack = max_stack
        self.stats: dict[str, Usefulness] = defaultdict(Usefulness)
        self._families: dict[str, list[type[Operator]]] = defaultdict(list)
        for op in self.operators:
            self._families[op.family].append(op)
        self.family_yield: dict[str, float] = {family: 1.0 for family in (*self._families, *extra_families)}
        self.builder = MutantBuilder(self.operators)  # for mutants built in this process
        self._splices = frozenset(op.id for op in self.operators if op.NEEDS_DONOR)
        self.splicing = bool(self._splices)  # some operators splice: the fuzz loop should offer `plan` a donor
        self._tables: dict[bool, tuple[list[str], list[float]]] = {}  # with splices or not: ids, cumulative weights
        self._plans = 0

    def plan(self, rng: random.Random, *, donor: Program | None = None) -> Recipe:
        """What to try for one mutant: 1..max_stack stacked steps (fewer is likelier), each
        with MAX_TRIES operators by family yield and usefulness (most decline on some programs).
        Drawn as `choose` draws (a family by yield, an operator by usefulness within it) from
        a table of both made every PLAN_REFRESH plans: a driver plans a thousand times a second.
        With a `donor` (another program of the corpus), the splices are drawn too."""
        depth = 1
        while depth < self.max_stack and rng.random() < 0.4:
            depth += 1
        if self._plans % PLAN_REFRESH == 0:
            self._tables.clear()
        self._plans += 1
        splicing = donor is not None and self.splicing
        if splicing not in self._tables:
            self._tables[splicing] = self._operator_table(splicing=splicing)
        ids, cumulative = self._tables[splicing]
        plan = tuple(tuple(rng.choices(ids, cum_weights=cumulative, k=MAX_TRIES)) for _ in range(depth)) if ids else ()
        spliced = splicing and any(op_id in self._splices for step in plan for op_id in step)
        return Recipe(plan, rng.getrandbits(32), donor if spliced else None)

    def _operator_table(self, *, splicing: bool) -> tuple[list[str], list[float]]:
        """Every operator's probability of being chosen: its family's by recent yield, times its
        own within the family by usefulness; cumulated. Without `splicing`, splices are left out
        and the other families share their part."""
        offered = {family: [op for op in ops if splicing or not op.NEEDS_DONOR]
                   for family, ops in self._families.items()}
        families = [f for f in sorted(offered) if offered[f]]
        total = sum(FAMILY_FLOOR + self.family_yield[f] for f in families)
        ids, cumulative, running = [], [], 0.0
        for family in families:
            ops = offered[family]
            weights = [self.stats[op.id].weight() for op in ops]
            share = (FAMILY_FLOOR + self.family_yield[family]) / total / sum(weights)
            for op, weight in zip(ops, weights):
                running += share * weight
                ids.append(op.id)
                cumulative.append(running)
        return ids, cumulative

    def built(self, built: Built) -> None:
        """Count what a recipe's build tried and applied (wherever it was built)."""
        for op_id in built.tried:
            self.stats[op_id].tries += 1
        for step in built.mutant.steps if built.mutant is not None else ():
            self.stats[step.op].applied += 1

    def mutate(self, program: Program, rng: random.Random, *, donor: Program | None = None) -> Mutant | None:
        """One mutant, planned (with splices of `donor`, if given) and built here, or None."""
        built = self.builder.build(program, self.plan(rng, donor=donor))
        self.built(built)
        return built.mutant

    def apply(self, op: type[Operator], program: Program, rng: random.Random, *,
              donor: Program | None = None) -> Mutant | Declined:
        """Apply a given operator (for `mutate mutate --op` and measurements; a splice takes its
        part from `donor`)."""
        return self.builder.apply(op, program, rng, donor=donor)

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
        """Feedback from running `mutant`, credited to every operator that made it; `finding`:
        it filed a new bug (the fuzz loop credits no hit of a bug filed before)."""
        for op in {step.op for step in mutant.steps}:
            stats = self.stats[op]
            stats.valid += valid
            stats.new_features += new_features
            stats.findings += finding
        paid = float(new_features or finding)
        for family in {family_of(step.op) for step in mutant.steps} & self.family_yield.keys():
            self.family_yield[family] = FAMILY_MEMORY * self.family_yield[family] + (1 - FAMILY_MEMORY) * paid
