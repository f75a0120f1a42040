"""What matters: after reduction, which constructs left in the program the bug needs.

A minimal program is minimal in size, not in explanation: a maintainer's first questions
are "does it need X? does it happen without Y?". For each construct of the reduced
program (a class's base, a decorator, a context manager, a function transform such as
`vmap`, a generator expression, a graph break, a compile option, a format spec, a
method of a class, a `getattr`/`setattr` spelled as a builtin call), its removal and
its neighbours (a `set` subclass becomes a `frozenset` subclass or a plain `set`, a
generator a list comprehension, `no_grad` `enable_grad`) are each run, eager and
compiled, and judged with the finding's predicate:

- *still fails*: the same signature and failure shape (`mutator.reduce.shape`): the
  change does not matter;
- *passes*: eager and compiled agree: what was changed is what the bug needs;
- *fails otherwise*: another finding, or another error of the same signature (kept as a
  note: it is not this bug);
- *changes the program*: the eager run now ends otherwise (a NameError: the change
  broke the program, and says nothing about the bug).

A construct *matters* when some change of it passes, and does not when every change
that kept the program working still fails. Constructs the reduction removed from the
original program did not matter either (the reduced program fails without them); they
are listed for free. Probes are budgeted (`budget` variants per finding; a variant that
passes is run a second time, so a flaky pass is not taken for an explanation) and
cached by source within a run. The constructs and their variants come from
`mutator.reduce.constructs`; report.md's words for the result from `mutator.report.matters`.
Afterwards the variants that still fail and simplify the program are taken into it
(`mutator.reduce.unneeded`, which adjusts the record: `taken`), and the constructs the
bug needs are changed in the original program too (`mutator.reduce.crosscheck`:
`original`, `drifted`).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from mutator.core.observation import ExecResult, Mode
from mutator.core.program import Program, ProgramError
from mutator.findings.signature import Signature
from mutator.judge.check import CheckResult, Runner
from mutator.judge.oracle import Oracle
from mutator.reduce.constructs import constructs, probes
from mutator.reduce.reducer import Target, admissible, ends, raised_in_calls

DEFAULT_BUDGET = 24

STILL_FAILS = "still fails"
PASSES = "passes"
FAILS_OTHERWISE = "fails otherwise"
BREAKS_PROGRAM = "changes the program"


@dataclass(frozen=True, slots=True)
class Row:
    construct: str
    change: str
    outcome: str  # STILL_FAILS, PASSES, FAILS_OTHERWISE, BREAKS_PROGRAM
    detail: str = ""  # the other signature, or how the eager run ended
    removal: bool = False  # the change took the construct away (else: swapped it for a neighbour)
    simplifies: bool = False  # the variant is a reduction (a removal, or a simpler neighbour)
    source: str = field(default="", repr=False, compare=False)  # the variant, while the analysis runs

    def as_json(self) -> dict[str, Any]:
        return dict(construct=self.construct, change=self.change, outcome=self.outcome, detail=self.detail[:200],
                    removal=self.removal)


@dataclass
class Matters:
    rows: list[Row] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)  # constructs of the original the reduction took away
    checks: int = 0  # runs spent (each eager or compiled run counts one)
    seconds: float = 0.0
    skipped: int = 0  # probes over the budget, not run
    taken: list[str] = field(default_factory=list)  # variants taken into the reduced program ("construct: change")
    original: list[Agreement] = field(default_factory=list)  # the needed constructs, checked in the original

    @property
    def needed(self) -> list[str]:
        """Constructs some change of which makes the bug go away, in the order found."""
        return list(dict.fromkeys(row.construct for row in self.rows if row.outcome == PASSES))

    @property
    def not_needed(self) -> list[str]:
        """Constructs the bug stays without: a removal still fails, and no change passes."""
        return [c for c in self._unexplaining() if any(row.removal and row.outcome == STILL_FAILS
                                                       for row in self.rows if row.construct == c)]

    @property
    def any_neighbour(self) -> list[str]:
        """Constructs whose kind does not matter: every neighbour tried still fails, no change
        passes, and no removal told whether the construct itself is needed (it broke the
        program: a `try` whose body raises eagerly, say)."""
        return [c for c in self._unexplaining() if c not in self.not_needed
                and any(not row.removal and row.outcome == STILL_FAILS for row in self.rows if row.construct == c)]

    def _unexplaining(self) -> list[str]:
        passing = {row.construct for row in self.rows if row.outcome == PASSES}
        return list(dict.fromkeys(row.construct for row in self.rows if row.construct not in passing))

    @property
    def drifted(self) -> list[str]:
        """Needed constructs the original program does not need: the reduction slid to another bug."""
        return [agreement.construct for agreement in self.original if agreement.outcome == STILL_FAILS]

    def as_json(self) -> dict[str, Any]:
        data = dict(rows=[row.as_json() for row in self.rows], removed=self.removed, needed=self.needed,
                    not_needed=self.not_needed, any_neighbour=self.any_neighbour, checks=self.checks,
                    seconds=round(self.seconds, 1), skipped=self.skipped)
        if self.taken:
            data.update(taken=self.taken)
        if self.original:
            data.update(original=[agreement.as_json() for agreement in self.original], drifted=self.drifted)
        return data


@dataclass(frozen=True, slots=True)
class Agreement:
    """A construct the reduced program needs, changed the same way in the original program:
    `outcome` PASSES (the original needs it too), STILL_FAILS (it does not: another bug),
    or another outcome (no evidence either way); `change` what was changed."""

    construct: str
    change: str
    outcome: str
    detail: str = ""

    def as_json(self) -> dict[str, Any]:
        return dict(construct=self.construct, change=self.change, outcome=self.outcome, detail=self.detail[:200])


class Prober:
    """Runs probes through a runner (the warm pool, or the background reduction's
    throttled share of it) and judges them with the finding's predicate."""

    def __init__(self, runner: Runner, *, oracle: Oracle | None = None, budget: int = DEFAULT_BUDGET,
                 clock: Callable[[], float] | None = None) -> None:
        self._runner = runner
        self._oracle = oracle or Oracle()
        self._budget = budget
        self._clock = clock or time.monotonic
        self._cache: dict[tuple[Signature, str], tuple[str, str]] = {}

    def explain(self, target: Target, *, original: str = "", stop: Callable[[], bool] = lambda: False) -> Matters:
        started = self._clock()
        source = target.program.source
        result = Matters(removed=[c for c in constructs(original) if c not in set(constructs(source))]
                         if original else [])
        candidates = [p for p in probes(source) if admissible(p.source, target.program)]
        result.skipped = max(0, len(candidates) - self._budget)
        candidates = candidates[:self._budget]
        outcomes = self.outcomes([p.source for p in candidates], target, result, stop)
        result.rows = [Row(p.construct, p.change, outcome, detail, p.removal, p.simplifies, p.source)
                       for p, (outcome, detail) in zip(candidates, outcomes)]
        result.seconds = self._clock() - started
        return result

    def outcomes(self, sources: list[str], target: Target, result: Matters, stop: Callable[[], bool] = lambda: False
                 ) -> list[tuple[str, str]]:
        """What each variant gives, (outcome, detail), its runs counted in `result`; a
        pass, which explains the bug, must hold twice."""
        outcomes = self._judge(sources, target, result, stop)
        passing = [i for i, (outcome, _) in enumerate(outcomes) if outcome == PASSES]
        if passing and not stop():
            again = self._judge([sources[i] for i in passing], target, result, stop, fresh=True)
            for i, (outcome, detail) in zip(passing, again):
                if outcome != PASSES:  # flaky: what the second run gave stands
                    outcomes[i] = (outcome, "passed once, not twice: " + (detail or outcome))
        return outcomes

    def _judge(self, sources: list[str], target: Target, result: Matters, stop: Callable[[], bool], *,
               fresh: bool = False) -> list[tuple[str, str]]:
        keys = [(target.signature, hashlib.sha1(s.encode()).hexdigest()) for s in sources]
        out: list[tuple[str, str] | None] = [None if fresh else self._cache.get(k) for k in keys]
        todo = [i for i, o in enumerate(out) if o is None]
        if stop():
            return [o or (BREAKS_PROGRAM, "not run: stopped") for o in out]
        programs: dict[int, Program] = {}
        for i in todo:
            try:
                programs[i] = Program.from_source(sources[i], target.program.name)
            except ProgramError as exc:
                out[i] = (BREAKS_PROGRAM, str(exc)[:200])
        config = target.candidate_config
        # eager runs first: a variant that breaks the program eagerly says nothing, and needs
        # no compiled run (the reducer's candidates are filtered the same way)
        eager: dict[int, Future[ExecResult]] = {i: self._runner.submit(p, Mode.EAGER, config)
                                               for i, p in programs.items()}
        eager_runs = {i: future.result() for i, future in eager.items()}
        result.checks += len(eager_runs)
        compiled: dict[int, Future[ExecResult]] = {}
        for i, run in eager_runs.items():
            if target.eager_as_original(run):
                compiled[i] = self._runner.submit(programs[i], Mode.COMPILED, config)
            else:
                outcome, kind = ends(run)
                raised = sorted(raised_in_calls(run) - target.eager_raised)
                why = f"a call raised {raised[0][0]}" if raised and ends(run) == target.eager_ends else \
                    f"{outcome}{': ' + kind if kind else ''}"
                out[i] = (BREAKS_PROGRAM, f"eager run {why}")
        for i, future in compiled.items():
            result.checks += 1
            out[i] = self._classify(programs[i], eager_runs[i], future.result(), target)
        if not fresh:
            self._cache.update((keys[i], out[i]) for i in programs if out[i] is not None)  # type: ignore[misc]
        return [o if o is not None else (BREAKS_PROGRAM, "") for o in out]

    def _classify(self, program: Program, eager: ExecResult, compiled: ExecResult, target: Target) -> tuple[str, str]:
        judgement = self._oracle.judge(eager, compiled, mask=target.mask, program=program)
        result = CheckResult(program, judgement, (eager, compiled))
        if judgement.verdict.is_finding:
            if target.kept_by(result):
                return STILL_FAILS, ""
            signature = Signature.of(result)
            if signature != target.signature:
                return FAILS_OTHERWISE, signature.describe()
            return FAILS_OTHERWISE, f"{signature.describe()}, another error: {target.shape_of(result).describe()}"
        if judgement.verdict.name == "PASS":
            return PASSES, ""
        return BREAKS_PROGRAM, f"{judgement.verdict.name}: {judgement.reason[:150]}"
