"""Reduce a finding's program to a small one with the same signature, through the warm pool.

The precondition comes first: the program is checked as the fuzzer checks it (confirmed
by repeated runs) and must get a bug or low-severity verdict; its signature is the
target. A candidate is interesting when one eager and one compiled run, judged with the
same masks of run-specific values, give that signature again, and the same failure
`Shape` (a crash's message, a mismatch's path and kinds of value, masked): a reduction
must not slide to another bug at the same site. The result is confirmed the full way at
the end, in fresh runs.
"""

from __future__ import annotations

import ast
import builtins
import re
import symtable
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait
import dataclasses
from dataclasses import dataclass

from mutator.judge.check import Checker, CheckResult, Runner, untraced
from mutator.findings.needs import message_key
from mutator.findings.signature import Signature
from mutator.core.observation import ExecResult, Mode, RunConfig
from mutator.core import parsing
from mutator.judge.oracle import Oracle
from mutator.core.program import Program, ProgramError, ProgramForm
from mutator.reduce.problem import ReductionProblem, ReductionStats, parse_quietly
from mutator.reduce.shape import Shape, program_names
from mutator.core.verdict import Verdict


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
    target: Target | None = None  # the original's: what the reduction kept

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
        # a reduction's runs only judge: no arcs (traced, a compile takes up to twice as long)
        config = untraced(config or getattr(runner, "config", None) or RunConfig())
        self._config = config
        self._oracle = oracle or Oracle()
        self._checker = Checker(runner, self._oracle, config=config)
        self._clock = clock
        self.runs = CandidateRuns()

    def target(self, program: Program, *, expect: Signature | None = None) -> Target:
        """The precondition: the program's confirmed finding, which reductions must keep;
        raises NotReproduced when there is none (or not the one expected)."""
        first = self._checker.check(program)
        signature = Signature.of(first)
        if not first.verdict.is_finding:
            raise NotReproduced(f"{program.name}: {first.verdict.name}, not a finding ({first.reason[:200]})")
        if expect is not None and signature != expect:
            raise NotReproduced(f"{program.name}: now {signature.describe()}, not {expect.describe()}")
        return self.target_of(first, signature)

    def target_of(self, first: CheckResult, signature: Signature) -> Target:
        """The target of a program already checked the full way (`first`): no runs."""
        names = program_names(first.program.source)
        return Target(first.program, first, signature, frozenset(first.judgement.masked), ends(first.eager),
                      ends(first.compiled), self._candidate_config(first, signature),
                      Shape.of(first.judgement, names), names, raised_in_calls(first.eager))

    def _candidate_config(self, first: CheckResult, signature: Signature) -> RunConfig:
        """Candidates get a timeout of ten times the original's slower run (at least 5 s):
        a candidate that loops forever (a lifted `while` body) must not cost a full
        timeout. Not for hangs, whose signature is the timeout."""
        if signature.verdict is Verdict.HANG:
            return self._config
        base = self._config
        slowest = max(first.eager.seconds, first.compiled.seconds)
        return dataclasses.replace(base, timeout=min(base.timeout, max(5.0, 10 * slowest)))

    def reduce(self, program: Program, *, expect: Signature | None = None, time_limit: float | None = None,
               on_progress: Callable[[str, str], None] = lambda source, pass_name: None,
               stop: Callable[[], bool] = lambda: False, target: Target | None = None) -> Reduction:
        """The reduced program; raises NotReproduced when the precondition fails.
        `target`: the precondition's result when the caller has checked it already."""
        started = self._clock()
        if target is None or target.program.source != program.source:
            target = self.target(program, expect=expect)
        unbound = unbound_names(program.source)

        def worth_running(source: str) -> bool:
            return admissible(source, program) and compiles(source, program.name) \
                and not orphans_a_name(source, unbound)

        problem = ReductionProblem(
            program.source, lambda sources: self.interesting(sources, target),
            admissible=worth_running, batch=3 * self._workers,
            deadline=started + time_limit if time_limit else None, clock=self._clock, on_progress=on_progress,
            stop=stop)
        problem.run()
        if stop():
            raise ReductionStopped(program.name)
        reduced = Program.from_source(problem.current, program.name)
        check = self.confirm(reduced, target)
        confirmed = check is not None
        if check is None:  # it did not hold in fresh, repeated runs: keep the original
            reduced, check = program, target.first
        return Reduction(program, reduced, target.signature, check, confirmed, problem.stats,
                         self._clock() - started, target)

    def confirm(self, program: Program, target: Target) -> CheckResult | None:
        """The full check of `program` (fresh, repeated runs) when it is still the target's
        bug, with the eager run ending as the original's; None when it is not."""
        check = self._checker.check(program)
        return check if target.kept_by(check) and target.eager_as_original(check.eager) else None

    def interesting(self, sources: list[str], target: Target) -> list[bool | None]:
        """Whether each source still gets the target's signature; None for one left unjudged
        because an earlier one is interesting (the first interesting one wins).

        A candidate's eager run comes first: one that ends otherwise than the original's
        (most often a NameError: something it needs was deleted) is rejected without the
        dearer compiled run; a compiled run that ends otherwise is rejected unjudged. As
        many runs at a time as workers, a compiled run (of the earliest candidate whose eager
        run passed) before an eager one, so no worker waits while there is work; nothing
        is started for a candidate after one known to be interesting."""
        programs = [Program.from_source(source, target.program.name) for source in sources]
        config = target.candidate_config
        verdicts: list[bool | None] = [None] * len(programs)
        eager_runs: dict[int, ExecResult] = {}
        passed: deque[int] = deque()  # eager run as the original's, compiled run not started
        running: dict[Future[ExecResult], int] = {}
        upcoming = iter(range(len(programs)))
        bound = len(programs)  # the first candidate known to be interesting, or past the end
        while True:
            while len(running) < self._workers:
                if passed and passed[0] < bound:
                    i = passed.popleft()
                    running[self._runner.submit(programs[i], Mode.COMPILED, config)] = i
                elif (i := next(upcoming, bound)) < bound:
                    running[self._runner.submit(programs[i], Mode.EAGER, config)] = i
                else:
                    break
            if not running:
                return verdicts
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in sorted(done, key=running.__getitem__):
                i = running.pop(future)
                run = future.result()
                if run.mode is Mode.EAGER:
                    same = target.eager_as_original(run)
                    self.runs.count(run, rejected=not same)
                    if same:
                        eager_runs[i] = run
                        passed.append(i)
                    else:
                        verdicts[i] = False
                else:
                    verdicts[i] = self._judge(programs[i], eager_runs[i], run, target)
                    if verdicts[i]:
                        bound = min(bound, i)

    def _judge(self, program: Program, eager: ExecResult, compiled: ExecResult, target: Target) -> bool:
        self.runs.count(compiled, rejected=ends(compiled) != target.compiled_ends)
        if ends(compiled) != target.compiled_ends:
            return False
        judgement = self._oracle.judge(eager, compiled, mask=target.mask, program=program)
        return judgement.verdict.is_finding and target.kept_by(CheckResult(program, judgement, (eager, compiled)))


@dataclass
class CandidateRuns:
    """Where the candidates' checks went, per mode: runs, their seconds (summed over the
    workers), and how many ended otherwise than the original's run (rejected there)."""

    eager: int = 0
    compiled: int = 0
    eager_seconds: float = 0.0
    compiled_seconds: float = 0.0
    eager_rejected: int = 0
    compiled_rejected: int = 0

    def count(self, run: ExecResult, *, rejected: bool) -> None:
        if run.mode is Mode.EAGER:
            self.eager, self.eager_seconds = self.eager + 1, self.eager_seconds + run.seconds
            self.eager_rejected += rejected
        else:
            self.compiled, self.compiled_seconds = self.compiled + 1, self.compiled_seconds + run.seconds
            self.compiled_rejected += rejected


@dataclass(frozen=True, slots=True)
class Target:
    """What a reduction must keep: the finding's signature and the shape of its failure,
    under the masks of its run-specific values, with the eager run ending as it did."""

    program: Program
    first: CheckResult
    signature: Signature
    mask: frozenset[str]
    eager_ends: tuple[str, str]
    compiled_ends: tuple[str, str]
    candidate_config: RunConfig | None = None  # the runs of candidates: a shorter timeout
    shape: Shape = Shape()
    names: frozenset[str] = frozenset()  # the program's own, masked in every candidate's shape
    # what the eager run's calls raised (the program caught it, or it is the divergence): type, message
    eager_raised: frozenset[tuple[str, str]] = frozenset()

    def eager_as_original(self, run: ExecResult) -> bool:
        """Whether a candidate's eager run ends as the original's, and none of its calls raises
        what no call of the original's eager run raised (its type, and its message with names
        and numbers masked): a reduction that makes eager fail another way (a view of the
        wrong shape where the original's view was merely not contiguous) is another report."""
        return ends(run) == self.eager_ends and raised_in_calls(run) <= self.eager_raised

    def kept_by(self, result: CheckResult) -> bool:
        """Whether a candidate's judged runs show this bug: its signature and its shape."""
        return Signature.of(result) == self.signature and self.shape_of(result) == self.shape

    def shape_of(self, result: CheckResult) -> Shape:
        return Shape.of(result.judgement, self.names)


def ends(run: ExecResult) -> tuple[str, str]:
    """How a run ended: its outcome and the type of what escaped, if anything.

    A candidate's runs must end as the original's did. Eagerly, that is what keeps the
    report honest: a program whose eager run completed must not become one that raises
    eagerly (a `backward` returning the wrong number of gradients fails eagerly; that
    compiled code then goes on is another report than the one the finding is about).
    Compiled, it is necessary for the same signature anyway, and cheap to test first."""
    uncaught = run.uncaught
    return (run.outcome.value, uncaught.type_name if uncaught is not None else "")


def raised_in_calls(run: ExecResult) -> frozenset[tuple[str, str]]:
    """The exceptions the run's recorded calls raised: type, and first line of the message
    with quoted names, numbers and addresses masked."""
    return frozenset((call.exception.type_name, message_key(call.exception.message))
                     for call in run.observation.calls if call.exception is not None)


def admissible(source: str, original: Program) -> bool:
    """A candidate must stay a program of the original's form (harness: fn, and inputs()
    returning something: `def inputs(): pass` runs, but no one would write it)."""
    try:
        tree = parse_quietly(source)
        candidate = Program.from_source(source, original.name)
    except (ProgramError, SyntaxError):
        return False
    if candidate.form is not original.form:
        return False
    return candidate.form is not ProgramForm.HARNESS or _inputs_returns(tree)


def compiles(source: str, name: str) -> bool:
    """Whether Python compiles the candidate without a SyntaxWarning: it parses, but a
    lifted `break` outside its loop, a `return` moved to module level or a name used
    before its `global` fail only when compiled, and a constant called or subscripted
    (`None(x)`, "perhaps you missed a comma?") only raises; each would cost an eager run
    to find out."""
    try:
        return parsing.compiles(parse_quietly(source), name)
    except SyntaxError:
        return False


def orphans_a_name(source: str, unbound: set[str] | None) -> bool:
    """Whether some scope of the candidate reads a name as a global that the module binds
    nowhere, a name the original did bind (a deleted definition, or a deleted assignment to
    a function's local, still used): its eager run would end in a NameError if it got
    there, so it is rejected without one. `unbound`: the original's own (None: it
    star-imports, anything may be bound)."""
    if unbound is None:
        return False
    names = unbound_names(source)
    return names is not None and bool(names - unbound - _BUILTINS)


_BUILTINS = frozenset(dir(builtins))
_STAR_IMPORT = re.compile(r"\bimport\s*\*")


def unbound_names(source: str) -> set[str] | None:
    """Names some scope reads as globals (Python's own scoping, by `symtable`) that no
    statement of the module binds; None when it star-imports or does not compile."""
    if _STAR_IMPORT.search(source):
        return None
    try:
        module = symtable.symtable(source, "<candidate>", "exec")
    except (SyntaxError, ValueError):
        return None
    tables, bound, read = [module], set(), set()
    while tables:
        table = tables.pop()
        tables.extend(table.get_children())
        for symbol in table.get_symbols():
            if not symbol.is_global():
                continue
            if symbol.is_assigned() or symbol.is_imported() or (table is module and symbol.is_namespace()):
                if table is module or symbol.is_declared_global():
                    bound.add(symbol.get_name())
            if symbol.is_referenced():
                read.add(symbol.get_name())
    return read - bound


def _inputs_returns(tree: ast.Module) -> bool:
    inputs = next((node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "inputs"), None)
    return inputs is None or any(isinstance(node, ast.Return) and node.value is not None for node in ast.walk(inputs))
