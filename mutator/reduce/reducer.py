"""Reduce a finding's program to a small one with the same signature, through the warm pool.

The precondition comes first: the program is checked as the fuzzer checks it (confirmed
by repeated runs) and must get a bug or low-severity verdict; its signature is the
target. A candidate is interesting when one eager and one compiled run, judged with the
same masks of run-specific values, give that signature again; the result is confirmed
the full way at the end, in fresh runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass

from mutator.check import Checker, CheckResult, Runner
from mutator.findings import Signature
from mutator.observation import ExecResult, Mode, RunConfig
from mutator.oracle import Oracle
from mutator.program import Program, ProgramError
from mutator.reduce.problem import ReductionProblem, ReductionStats, parse_quietly


class NotReproduced(Exception):
    """The program does not get a finding's verdict, or not the signature it should."""


class ReductionStopped(Exception):
    """`stop` asked for the reduction to end before it was done."""


@dataclass(frozen=True, slots=True)
class Reduction:
    original: Program
    reduced: Program
    signature: Signature
    check: CheckResult  # the full check of the reduced program, in fresh runs
    confirmed: bool  # it gave the signature again (else `reduced` is the original)
    stats: ReductionStats
    seconds: float

    @property
    def lines(self) -> tuple[int, int]:
        return (_lines(self.original.source), _lines(self.reduced.source))


def _lines(source: str) -> int:
    return sum(1 for line in source.splitlines() if line.strip())


class Reducer:
    def __init__(self, runner: Runner, *, workers: int, config: RunConfig | None = None,
                 oracle: Oracle | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self._runner = runner
        self._workers = max(1, workers)
        self._config = config
        self._oracle = oracle or Oracle()
        self._checker = Checker(runner, self._oracle, config=config)
        self._clock = clock

    def reduce(self, program: Program, *, expect: Signature | None = None, time_limit: float | None = None,
               on_progress: Callable[[str, str], None] = lambda source, pass_name: None,
               stop: Callable[[], bool] = lambda: False) -> Reduction:
        """The reduced program; raises NotReproduced when the precondition fails."""
        started = self._clock()
        first = self._checker.check(program)
        signature = Signature.of(first)
        if not first.verdict.is_finding:
            raise NotReproduced(f"{program.name}: {first.verdict.name}, not a finding ({first.reason[:200]})")
        if expect is not None and signature != expect:
            raise NotReproduced(f"{program.name}: now {signature.describe()}, not {expect.describe()}")
        mask = frozenset(first.judgement.masked)
        eager = eager_shape(first.eager)
        problem = ReductionProblem(
            program.source, lambda sources: self._interesting(sources, program, signature, mask, eager),
            admissible=lambda source: _same_form(source, program), batch=self._workers,
            deadline=started + time_limit if time_limit else None, clock=self._clock, on_progress=on_progress,
            stop=stop)
        problem.run()
        if stop():
            raise ReductionStopped(program.name)
        reduced = Program.from_source(problem.current, program.name)
        check = self._checker.check(reduced)
        confirmed = Signature.of(check) == signature and eager_shape(check.eager) == eager
        if not confirmed:  # it did not hold in fresh, repeated runs: keep the original
            reduced, check = program, first
        return Reduction(program, reduced, signature, check, confirmed, problem.stats, self._clock() - started)

    def _interesting(self, sources: list[str], original: Program, signature: Signature,
                     mask: frozenset[str], eager_ends: tuple[str, str]) -> list[bool]:
        programs = [Program.from_source(source, original.name) for source in sources]
        runs: list[tuple[Future[ExecResult], Future[ExecResult]]] = [
            (self._runner.submit(p, Mode.EAGER, self._config), self._runner.submit(p, Mode.COMPILED, self._config))
            for p in programs]
        verdicts = []
        for program, (eager_future, compiled_future) in zip(programs, runs):
            eager, compiled = eager_future.result(), compiled_future.result()
            judgement = self._oracle.judge(eager, compiled, mask=mask, program=program)
            result = CheckResult(program, judgement, (eager, compiled))
            verdicts.append(judgement.verdict.is_finding and Signature.of(result) == signature
                            and eager_shape(eager) == eager_ends)
        return verdicts


def eager_shape(eager: ExecResult) -> tuple[str, str]:
    """How the eager run ended: its outcome and the type of what escaped, if anything.

    A candidate must end eagerly as the original did: a program whose eager run completed
    must not become one that raises eagerly (a `backward` returning the wrong number of
    gradients fails eagerly; that compiled code then goes on is another report than the
    one the finding is about)."""
    uncaught = eager.uncaught
    return (eager.outcome.value, uncaught.type_name if uncaught is not None else "")


def _same_form(source: str, original: Program) -> bool:
    """A candidate must stay a program of the original's form (harness: fn and inputs())."""
    try:
        parse_quietly(source)
        candidate = Program.from_source(source, original.name)
    except (ProgramError, SyntaxError):
        return False
    return candidate.form is original.form
