"""Check one program: run it eagerly and compiled, judge, and confirm any bug verdict.

A passing or invalid program costs two runs (eager and compiled, side by side). A bug
verdict is confirmed before it is believed: eager runs again, compiled runs again (a
divergence that does not reproduce is UNSTABLE), and, when only float values differ, a
float64 eager run decides whether the difference is numeric noise.

Where the two eager runs differ only in values that differ between any two runs by
nature (thread ids, `id()`s, addresses, clocks, in globals or in what is printed), those
paths are masked for this program: a third eager run must differ from the first nowhere
else, and then the judgement is made again without them. A program is UNSTABLE only when
its eager runs differ in outcome, exceptions or calls, or in what a compiled call
returns or mutates.
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
    def submit(self, program: Program, mode: Mode, config: RunConfig | None = None, *,
               avoid: int | None = None) -> Future[ExecResult]: ...


class PriorityRunner(Protocol):
    """A runner with a queue to jump (`WorkerPool`)."""

    def submit(self, program: Program, mode: Mode, config: RunConfig | None = None, *,
               avoid: int | None = None, priority: int = 0) -> Future[ExecResult]: ...


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
        first = self._oracle.judge(eager, compiled, program=program)
        if not first.verdict.is_finding:
            return CheckResult(program, first, (eager, compiled))
        # the second eager run on another worker than the first: values that differ by
        # worker (the main thread's id, addresses) must show, as they would against compiled
        modes = [Mode.EAGER, Mode.COMPILED] + ([Mode.REFERENCE] if first.numeric else [])
        again = self._run(program, *modes, avoid=eager.worker)
        eager2, compiled2 = again[0], again[1]
        reference = again[2] if len(again) > 2 else None
        runs = [eager, compiled, *again]
        mask, unstable = self._oracle.run_specific(eager, eager2)
        if not unstable and mask:  # a third eager run shows the mask holds
            [eager3] = self._run(program, Mode.EAGER)
            runs.append(eager3)
            beyond, unstable = self._oracle.run_specific(eager, eager3)
            if not unstable and not beyond <= mask:
                unstable = f"run-specific values beyond the first two eager runs' ({sorted(beyond - mask)[0]})"
        if unstable:
            return CheckResult(program, Judgement(Verdict.UNSTABLE, unstable), tuple(runs))
        judgement = self._confirm(program, first, eager, compiled, compiled2, reference, mask)
        return CheckResult(program, judgement, tuple(runs))

    def _confirm(self, program: Program, first: Judgement, eager: ExecResult, compiled: ExecResult,
                 compiled2: ExecResult, reference: ExecResult | None, mask: frozenset[str]) -> Judgement:
        if reference is not None or mask:
            first = self._oracle.judge(eager, compiled, reference, mask=mask, program=program)
            if first.verdict is Verdict.PASS:
                if reference is not None and not mask:
                    return Judgement(Verdict.PASS, "compiled differs from eager only within float64-reference error")
                return first
        second = self._oracle.judge(eager, compiled2, reference, mask=mask, program=program)
        if second.verdict is not first.verdict:
            return Judgement(Verdict.UNSTABLE, f"divergence did not reproduce: first {first.verdict.name} "
                                               f"({first.reason}), then {second.verdict.name}",
                             masked=first.masked)
        return first

    def _run(self, program: Program, *modes: Mode, avoid: int | None = None) -> list[ExecResult]:
        """Run `modes` side by side; the first (eager) one not on worker `avoid`, if given."""
        futures = [self._runner.submit(program, mode, self._config, avoid=avoid if i == 0 else None)
                   for i, mode in enumerate(modes)]
        return [f.result() for f in futures]
