"""Check one program: run it eagerly and compiled, judge, and confirm any bug verdict.

A passing or invalid program costs two runs (eager and compiled, side by side). A bug
verdict is confirmed before it is believed: eager runs again (two eager runs that
disagree make the program UNSTABLE), compiled runs again (a divergence that does not
reproduce is UNSTABLE), and, when only float values differ, a float64 eager run decides
whether the difference is numeric noise.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import dataclass
from typing import Protocol

from mutator.observation import ExecResult, Mode, RunConfig
from mutator.oracle import Judgement, Oracle
from mutator.program import Program
from mutator.verdict import Verdict


class Runner(Protocol):
    def submit(self, program: Program, mode: Mode, config: RunConfig | None = None) -> Future[ExecResult]: ...


@dataclass(frozen=True, slots=True)
class CheckResult:
    program: Program
    judgement: Judgement
    runs: tuple[ExecResult, ...]  # eager, compiled, then any confirmation runs

    @property
    def seconds(self) -> float:
        """Time spent running the program (all runs), not time spent waiting for a worker."""
        return sum(run.seconds for run in self.runs)

    @property
    def verdict(self) -> Verdict:
        return self.judgement.verdict

    @property
    def reason(self) -> str:
        return self.judgement.reason

    @property
    def eager(self) -> ExecResult:
        return self.runs[0]

    @property
    def compiled(self) -> ExecResult:
        return self.runs[1]


class Checker:
    def __init__(self, runner: Runner, oracle: Oracle | None = None, *, config: RunConfig | None = None) -> None:
        self._runner = runner
        self._oracle = oracle or Oracle()
        self._config = config  # None: the runner's own

    def check(self, program: Program) -> CheckResult:
        eager, compiled = self._run(program, Mode.EAGER, Mode.COMPILED)
        first = self._oracle.judge(eager, compiled)
        if not first.verdict.is_finding:
            return CheckResult(program, first, (eager, compiled))
        modes = [Mode.EAGER, Mode.COMPILED] + ([Mode.REFERENCE] if first.numeric else [])
        again = self._run(program, *modes)
        runs = (eager, compiled, *again)
        return CheckResult(program, self._confirm(first, eager, compiled, *again), runs)

    def _confirm(self, first: Judgement, eager: ExecResult, compiled: ExecResult, eager2: ExecResult,
                 compiled2: ExecResult, reference: ExecResult | None = None) -> Judgement:
        disagreement = self._oracle.same_eager(eager, eager2)
        if disagreement is not None:
            return Judgement(Verdict.UNSTABLE, f"two eager runs disagree: {disagreement}")
        if reference is not None:
            first = self._oracle.judge(eager, compiled, reference)
            if first.verdict is Verdict.PASS:
                return Judgement(Verdict.PASS, "compiled differs from eager only within float64-reference error")
        second = self._oracle.judge(eager, compiled2, reference)
        if second.verdict is not first.verdict:
            return Judgement(Verdict.UNSTABLE, f"divergence did not reproduce: first {first.verdict.name} "
                                               f"({first.reason}), then {second.verdict.name}")
        return first

    def _run(self, program: Program, *modes: Mode) -> list[ExecResult]:
        futures = [self._runner.submit(program, mode, self._config) for mode in modes]
        return [f.result() for f in futures]
