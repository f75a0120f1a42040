"""Check one program: run it eagerly and compiled, judge, and confirm any bug verdict.

A passing or invalid program costs two runs (eager and compiled). A bug verdict is
confirmed before it is believed: eager runs again (on another worker than the first),
compiled runs again (a divergence that does not reproduce is UNSTABLE), and, when only
float values differ, a float64 eager run decides whether the difference is numeric noise.

Where the two eager runs differ only in values that differ between any two runs by
nature (thread ids, `id()`s, addresses, clocks, in globals or in what is printed), those
paths are masked for this program: a third eager run must differ from the first nowhere
else, and then the judgement is made again without them. The second eager run reads
Dynamo's counters and the compiler's other state otherwise (`mutator.runtime.perturb`), so
that what the program derived from them is masked the same way, wherever it went. A
program is UNSTABLE only when its unperturbed eager runs differ in outcome, exceptions or
calls, or in what a compiled call returns or mutates.

The first pass of the fuzz loop's checks is a `CheckTask` that one worker does whole
(`first_pass`): it builds the mutant when the task carries a recipe, runs it eagerly and
compiled, judges, and for an invalid mutant tries the repair rules; the driver only
confirms bug verdicts. A program checked on its own, or on an executor that cannot take
tasks (`submit_check`), gets its two runs submitted side by side and the same first pass
done here. Nothing blocks a thread per check: `submit` returns a future completed by
callbacks.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from mutator.core import cpu
from mutator.core.configurations import DEFAULT
from mutator.judge import lru_cache
from mutator.judge.compare import compare_observations
from mutator.core.features import CoverageReport, WorkerCoverage, semantic_features
from mutator.core.observation import ExecResult, Mode, Observation, Outcome, RunConfig
from mutator.judge.oracle import Judgement, Oracle, program_stop
from mutator.core.program import Program
from mutator.core.verdict import Verdict

if TYPE_CHECKING:
    from mutator.mutation.mutator import MutantBuilder, Recipe
    from mutator.mutation.operator import Mutant, Step
    from mutator.repair.request import RepairRequest, RepairResult

NORMAL = 0  # `priority=` of a run or task: lower runs first


class Runner(Protocol):
    def submit(self, program: Program, mode: Mode, config: RunConfig | None = None, *,
               avoid: int | None = None) -> Future[ExecResult]: ...


class TaskRunner(Protocol):
    """A runner whose workers also do whole first passes (the executors of `mutator.exec`)."""

    def submit(self, program: Program, mode: Mode, config: RunConfig | None = None, *,
               avoid: int | None = None, priority: int = 0) -> Future[ExecResult]: ...

    def submit_check(self, task: CheckTask, config: RunConfig | None = None, *,
                     priority: int = 0) -> Future[CheckReply]: ...


@dataclass(frozen=True, slots=True)
class CheckResult:
    program: Program
    judgement: Judgement
    runs: tuple[ExecResult, ...]  # eager, compiled, then any confirmation runs
    precomputed: frozenset[int] | None = None  # `features`, where the runs' observations were dropped
    configuration: str = DEFAULT  # the Dynamo configuration the compiled runs took (`mutator.core.configurations`)
    # the verdict needs that configuration: the compiled run under Dynamo's defaults did not fail
    # this way (checked only where a bug not seen under it has the rest of its signature)
    needs_configuration: bool = False

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

    @property
    def features(self) -> frozenset[int]:
        """Everything the compiled run reached: arcs, and the semantic features of what it reported."""
        if self.precomputed is not None:
            return self.precomputed
        return self.compiled.features | semantic_features(self.compiled)

    def slim(self, *, features: frozenset[int] | None = None) -> CheckResult:
        """The same result without what its runs observed (calls, values, stdout): what the fuzz
        loop needs of a check that is no finding, at a fraction of the size. Kept: outcomes,
        details, times, the uncaught exceptions and compile statistics, and the features
        (or `features`: what the caller keeps of them)."""
        runs = tuple(dataclasses.replace(run, observation=_slim(run.observation), features=frozenset(),
                                         stderr_tail="") for run in self.runs)
        return CheckResult(self.program, self.judgement, runs, self.features if features is None else features,
                           self.configuration, self.needs_configuration)


def _slim(observation: Observation) -> Observation:
    return Observation(uncaught=observation.uncaught, uncaught_call=observation.uncaught_call,
                       exit_code=observation.exit_code, compile=observation.compile)


@dataclass(frozen=True, slots=True)
class CheckTask:
    """One first pass, for a worker to do whole. `program` is the program to check, or, with
    a `recipe`, the parent to build a mutant of (named `name`). `steps` and `parent` say how
    a given program was made (a repaired or LLM-written mutant), so that an invalid one gets
    a repair request. `repair`: try the repair rules on an invalid mutant. `slim`: the reply
    is for the fuzz loop: the runs' observations go from a result that is no finding.
    `coverage_key`: the coverage map the driver merges into (`CoverageMap.key`); with one, a
    worker that keeps count reports a passing result's features as a `CoverageReport`
    relative to what it told that map before. `configuration`: the Dynamo configuration its
    compiled runs take (`mutator.core.configurations`); empty: the checker's. `arcs`: its
    compiled run records arcs where the workers trace them (off: Dynamo's signals alone)."""

    program: Program
    recipe: Recipe | None = None
    name: str = ""
    steps: tuple[Step, ...] = ()
    parent: Program | None = None
    repair: bool = False
    slim: bool = False
    coverage_key: str = ""
    configuration: str = ""
    arcs: bool = True

    @property
    def is_mutant(self) -> bool:
        return self.recipe is not None or bool(self.steps)


@dataclass(frozen=True, slots=True)
class CheckReply:
    """What came of a task: the result (None when the recipe made no mutant, or the worker was
    lost), the mutant checked, the operators the recipe tried, and for an invalid mutant its
    repair request with what the rules made of it (None when they were not asked)."""

    result: CheckResult | None
    mutant: Mutant | None = None
    tried: tuple[str, ...] = ()
    request: RepairRequest | None = None
    repaired: RepairResult | None = None
    lost: str = ""  # why the worker could not answer (it died, it stopped answering)
    build_seconds: float = 0.0  # CPU time building the mutant took (and repair rules, for an invalid one)
    # a passing slim result's features, as a worker that keeps count tells them (its `features` is then empty)
    coverage: CoverageReport | None = None
    confirmed: bool = True  # False: a bug verdict the checker was told only to count (`Checker.count_only`)
    # CPU seconds of the first pass's own stages in the worker (`mutator.core.cpu`: build, judge,
    # repair, report); its runs carry theirs
    cpu: tuple[tuple[str, float], ...] = ()

    def cpu_lines(self) -> Iterator[tuple[str, float]]:
        """What this check cost, by the CPU ledger's lines (`mutator.core.cpu`): the first
        pass's stages and its two runs' (the compiled run's compilations apart, as Dynamo timed
        them), and the confirmation's runs as one line."""
        for stage, seconds in self.cpu:
            yield cpu.LINES.get(stage, f"check: {stage}"), seconds
        for i, run in enumerate(self.result.runs if self.result is not None else ()):
            for stage, seconds in run.cpu:
                if i >= 2:
                    yield cpu.CONFIRMATION, seconds
                elif stage != cpu.PROGRAM:
                    yield cpu.LINES.get(stage, f"check: {stage}"), seconds
                elif run.mode is Mode.COMPILED:
                    stats = run.observation.compile
                    compiling = min(seconds, stats.compile_seconds if stats is not None else 0.0)
                    yield cpu.COMPILE, compiling
                    yield cpu.COMPILED_RUN, seconds - compiling
                else:
                    yield cpu.EAGER_RUN, seconds


def made(task: CheckTask, builder: MutantBuilder | None) -> tuple[CheckTask | None, tuple[str, ...]]:
    """The task with its mutant built (the program to check, the steps that made it, its
    parent) and what the recipe tried; None for a recipe with which no operator applied. A
    task without a recipe is its own."""
    if task.recipe is None:
        return task, ()
    assert builder is not None, "a recipe needs a builder"
    built = builder.build(task.program, task.recipe)
    if built.mutant is None:
        return None, built.tried
    program = built.mutant.program
    program = Program(program.source, program.form, task.name or program.name)
    return dataclasses.replace(task, program=program, recipe=None, steps=built.mutant.steps,
                               parent=task.program), built.tried


def first_pass(task: CheckTask, runs: Callable[[Program], Sequence[ExecResult]], *, oracle: Oracle,
               builder: MutantBuilder | None = None, configuration: str = DEFAULT) -> CheckReply:
    """Build (from a recipe), run eager and compiled (`runs`, the compiled one under
    `configuration`), judge and, for an invalid mutant, ask the repair rules: the part of a
    check that needs no confirmation."""
    from mutator.mutation.operator import Mutant

    started = time.process_time()
    checked, tried = made(task, builder)
    if checked is None:
        built = time.process_time() - started
        return CheckReply(None, tried=tried, build_seconds=built, cpu=((cpu.BUILD, built),))
    program = checked.program
    mutant = Mutant(program, checked.steps) if checked.steps else None
    building = time.process_time() - started
    eager, compiled = runs(program)
    started = time.process_time()
    result = CheckResult(program, oracle.judge(eager, compiled, program=program), (eager, compiled),
                         configuration=configuration)
    judging = time.process_time() - started
    request = repaired = None
    repairing = 0.0
    if result.verdict is Verdict.INVALID and mutant is not None:
        from mutator.repair import repair_by_rules

        started = time.process_time()
        request = repair_request(result, mutant, checked.parent)
        if task.repair and not request.is_repair:
            repaired = repair_by_rules(request)
        repairing = time.process_time() - started
    if task.slim and not result.verdict.is_finding:
        result = result.slim()
    return CheckReply(result, mutant, tried, request, repaired, build_seconds=building + repairing,
                      cpu=((cpu.BUILD, building), (cpu.JUDGE, judging), (cpu.REPAIR, repairing)))


def repair_request(result: CheckResult, mutant: Mutant, parent: Program | None) -> RepairRequest:
    """What a repair of `mutant`, judged invalid in `result`, is given: how its eager run failed."""
    from mutator.repair import RepairRequest

    eager = result.eager
    return RepairRequest(result.program, mutant, parent, eager.observation.uncaught, eager.outcome.value,
                         result.reason)


def report_coverage(task: CheckTask, reply: CheckReply, coverage: WorkerCoverage) -> CheckReply:
    """A reply whose passing result's features go as a coverage report (what `coverage` has not
    reported before, and batched hit counts) instead of whole. A result that is no pass keeps
    its own features (a finding's: the driver confirms it) or none (invalid, unstable: the
    driver does not count them)."""
    result = reply.result
    if result is None:
        return reply
    if result.verdict is Verdict.PASS:
        started = time.process_time()
        report = coverage.report(result.features, keepable=not task.is_mutant)
        return dataclasses.replace(reply, result=result.slim(features=frozenset()), coverage=report,
                                   cpu=(*reply.cpu, (cpu.REPORT, time.process_time() - started)))
    if result.verdict in (Verdict.INVALID, Verdict.UNSTABLE):
        return dataclasses.replace(reply, result=result.slim(features=frozenset()))
    return reply


class Checker:
    """Checks programs on a runner: a first pass, then the confirmation of a bug verdict.

    `count_only`: a first-pass bug verdict for which it says True is not confirmed (the
    campaign only counts it, as a hit of a bug filed before: the confirmation's three or
    four runs would buy nothing); its reply's result is the first pass's, `confirmed` False.

    `taken`: for a first-pass bug verdict under a configuration other than Dynamo's defaults,
    whether its signature is a bug's that was not seen under that configuration (known, or
    filed first under another). Where it says True, one more compiled run under the defaults
    tells whether the verdict needs its configuration (`CheckResult.needs_configuration`): a
    bug of its own then, not a hit of the other one; `same_bug` says whether the run under the
    defaults failed the way the first pass did (the caller's notion of a bug: its signatures).
    Asked before `count_only`."""

    def __init__(self, runner: Runner | TaskRunner, oracle: Oracle | None = None, *,
                 config: RunConfig | None = None,
                 count_only: Callable[[CheckResult], bool] | None = None,
                 taken: Callable[[CheckResult], bool] | None = None,
                 same_bug: Callable[[CheckResult, CheckResult], bool] | None = None) -> None:
        self._runner = runner
        self._oracle = oracle or Oracle()
        self._config = config  # None: the runner's own
        self._count_only = count_only
        if (taken is None) != (same_bug is None):
            raise ValueError("taken and same_bug go together: the one asks for the run under the defaults, "
                             "the other judges it")
        self._taken = taken
        self._same_bug = same_bug
        self._builder: MutantBuilder | None = None  # for recipes where the runner takes no tasks

    def check(self, program: Program) -> CheckResult:
        reply = self.submit(CheckTask(program)).result()
        assert reply.result is not None
        return reply.result

    def submit(self, task: CheckTask, *, priority: int = NORMAL) -> Future[CheckReply]:
        """Start one check; the future's reply carries a confirmed result."""
        done: Future[CheckReply] = Future()
        submit_check = getattr(self._runner, "submit_check", None)
        # The loop's tasks (a recipe to build, coverage to report) go to one worker whole: the
        # driver then pays for a reply, not for two runs and a judgement. A program checked on
        # its own (mutate run, harvest, a reduction's checks) runs eager and compiled side by
        # side on two workers: the shortest wait for its verdict.
        config = self.config_of(task)
        if submit_check is not None and (task.recipe is not None or task.coverage_key):
            first = submit_check(task, config, priority=priority)
            first.add_done_callback(_guarded(done, lambda f: self._first_done(task, f.result(), done, config)))
        else:
            self._first_here(task, done, config)
        return done

    def config_of(self, task: CheckTask) -> RunConfig:
        """The runs' configuration for `task`: this checker's (or its runner's), under the task's
        Dynamo configuration when it names one, without arcs when the task asks for none."""
        base = self._config or getattr(self._runner, "config", None) or RunConfig()
        if task.configuration and task.configuration != base.configuration:
            base = dataclasses.replace(base, configuration=task.configuration)
        if not task.arcs:
            base = untraced(base)
        return base

    def _first_here(self, task: CheckTask, done: Future[CheckReply], config: RunConfig) -> None:
        """The first pass in this process, its two runs side by side in the runner (a recipe's
        mutant built here first)."""
        checked, tried = made(task, self.builder() if task.recipe is not None else None)
        if checked is None:
            done.set_result(CheckReply(None, tried=tried))
            return
        futures = [self._runner.submit(checked.program, mode, config) for mode in (Mode.EAGER, Mode.COMPILED)]

        def judged(runs: list[ExecResult]) -> None:
            reply = first_pass(checked, lambda _: runs, oracle=self._oracle, configuration=config.configuration)
            self._first_done(task, dataclasses.replace(reply, tried=tried), done, config)

        _when_all(futures, done, judged)

    def _first_done(self, task: CheckTask, reply: CheckReply, done: Future[CheckReply], config: RunConfig) -> None:
        if reply.lost:
            reply = self._lost(task, reply.lost, config)
        if reply.result is None or not reply.result.verdict.is_finding:
            done.set_result(reply)
            return
        if self._taken is not None and reply.result.configuration != DEFAULT and self._taken(reply.result):
            self._under_defaults(reply, done, config)
            return
        self._counted_or_confirmed(reply, done, config)

    def _under_defaults(self, reply: CheckReply, done: Future[CheckReply], config: RunConfig) -> None:
        """The compiled run again under Dynamo's defaults (judging only: no arcs): where it does
        not fail the way the first pass's did, the verdict needs its configuration."""
        first = reply.result
        assert first is not None
        plain = dataclasses.replace(untraced(config), configuration=DEFAULT)

        def judged(runs: list[ExecResult]) -> None:
            assert self._same_bug is not None  # set with _taken (__init__)
            judgement = self._oracle.judge(first.eager, runs[0], program=first.program)
            there = CheckResult(first.program, judgement, (first.eager, runs[0]), configuration=DEFAULT)
            result = first if there.verdict.is_finding and self._same_bug(there, first) \
                else dataclasses.replace(first, needs_configuration=True)
            spent = (cpu.DEFAULTS, sum(seconds for _, seconds in runs[0].cpu))
            self._counted_or_confirmed(dataclasses.replace(reply, result=result, cpu=(*reply.cpu, spent)), done, config)

        _when_all([self._runner.submit(first.program, Mode.COMPILED, plain)], done, judged)

    def _counted_or_confirmed(self, reply: CheckReply, done: Future[CheckReply], config: RunConfig) -> None:
        assert reply.result is not None
        if self._count_only is not None and self._count_only(reply.result):
            done.set_result(dataclasses.replace(reply, confirmed=False))
            return
        self._confirm(reply, done, config)

    def _lost(self, task: CheckTask, detail: str, config: RunConfig) -> CheckReply:
        """The worker died under the task: the program (rebuilt from its recipe, which makes it
        again) with both runs lost, for the caller to keep in `lost/`."""
        from mutator.mutation.operator import Mutant

        checked, tried = made(task, self.builder() if task.recipe is not None else None)
        checked = checked or task  # no mutant: the parent stands for what was lost
        program = checked.program
        eager, compiled = (ExecResult(program=program.name, mode=mode, outcome=Outcome.LOST, detail=detail)
                           for mode in (Mode.EAGER, Mode.COMPILED))
        result = CheckResult(program, self._oracle.judge(eager, compiled, program=program), (eager, compiled),
                             configuration=config.configuration)
        return CheckReply(result, Mutant(program, checked.steps) if checked.steps else None, tried)

    def builder(self) -> MutantBuilder:
        if self._builder is None:
            from mutator.mutation.mutator import MutantBuilder
            from mutator.mutation.registry import all_operators

            self._builder = MutantBuilder(all_operators())
        return self._builder

    # -- confirmation ------------------------------------------------------------------------
    def _confirm(self, reply: CheckReply, done: Future[CheckReply], config: RunConfig) -> None:
        """Run eager (on another worker, with compiler state perturbed) and compiled again, and
        a float64 reference when the difference is numeric; then the mask of run-specific
        values, maybe a third eager run.

        The second eager run reads Dynamo's counters and the compiler's other state otherwise
        (`RunConfig.perturb_compiler_state`), so that what the program derived from them
        differs between the two eager runs and is masked with the run-specific values. When
        that changes the program's course (its own checks of compiler state stop it, or let
        it go on), the paths it changed as far as both runs went are masked, and an
        unperturbed eager run on another worker stands in for the second.

        Where the compiled run shows Dynamo traced through a functools.lru_cache wrapper, one
        more eager run calls the program's cached functions through inside compiled calls, as
        Dynamo does (`judge.lru_cache`): a mismatch it explains is documented behaviour."""
        first = reply.result
        assert first is not None
        program, eager, compiled = first.program, first.eager, first.compiled
        # the confirmation's runs only judge: their arcs would be traced for nobody (the check's
        # features are its first compiled run's), at up to twice the compile
        config = untraced(config)
        modes = [Mode.EAGER, Mode.COMPILED] + ([Mode.REFERENCE] if first.judgement.numeric else [])
        perturbed = dataclasses.replace(config, perturb_compiler_state=True)
        futures = [self._runner.submit(program, mode, perturbed if i == 0 else config,
                                       avoid=eager.worker if i == 0 else None)
                   for i, mode in enumerate(modes)]
        calling_through: list[ExecResult] = []  # the eager run that calls lru_caches through, when there is one
        if lru_cache.needs_calling_through(first.judgement, compiled):
            futures.append(self._runner.submit(program, Mode.EAGER,
                                               dataclasses.replace(config, lru_cache_calls_through=True)))

        def again(runs: list[ExecResult]) -> None:
            calling_through.extend(runs[len(modes):])
            runs = runs[:len(modes)]
            perturbed, compiled2 = runs[0], runs[1]
            reference = runs[2] if len(runs) > 2 else None
            runs = [eager, compiled, *runs, *calling_through]
            mask, unstable = self._oracle.run_specific(eager, perturbed)
            if not unstable:
                masking(runs, mask, frozenset(), compiled2, reference)
                return
            derived = derived_paths(eager, perturbed)  # the perturbation changed the program's course

            def unperturbed(second: list[ExecResult]) -> None:
                mask, unstable = self._oracle.run_specific(eager, second[0])
                if unstable:
                    finish([*runs, *second], mask, unstable, compiled2, reference)
                else:
                    masking([*runs, *second], mask, derived, compiled2, reference)

            _when_all([self._runner.submit(program, Mode.EAGER, config, avoid=eager.worker)], done, unperturbed)

        def masking(runs: list[ExecResult], mask: frozenset[str], derived: frozenset[str], compiled2: ExecResult,
                    reference: ExecResult | None) -> None:
            """The `mask` of two eager runs, shown to hold by a third; then the judgement
            without it and without `derived` (paths a perturbed run that went otherwise changed).

            With no mask, a divergence where run-specific values may show (the program's globals,
            what it printed) still gets a third eager run: two runs can agree on such a value by
            chance (a set of four objects prints in the same order one time in 24), and the
            third then shows it differing, which makes it the mask."""
            divergence = first.judgement.divergence
            if not mask and (not self._oracle.maskable(divergence) or divergence.where in derived):
                finish(runs, derived, "", compiled2, reference)
                return
            third = self._runner.submit(program, Mode.EAGER, config)  # a third run shows the mask holds

            def masked(runs3: list[ExecResult]) -> None:
                beyond, unstable3 = self._oracle.run_specific(eager, runs3[0])
                if mask and not unstable3 and not beyond <= mask:
                    unstable3 = f"run-specific values beyond the first two eager runs' ({sorted(beyond - mask)[0]})"
                finish([*runs, *runs3], (mask or beyond) | derived, unstable3, compiled2, reference)

            _when_all([third], done, masked)

        def finish(runs: list[ExecResult], mask: frozenset[str], unstable: str, compiled2: ExecResult,
                   reference: ExecResult | None) -> None:
            if unstable:
                judgement = Judgement(Verdict.UNSTABLE, unstable)
            else:
                judgement = self._judge_again(program, first.judgement, eager, compiled, compiled2, reference, mask)
                if calling_through:
                    judgement = lru_cache.explained(self._oracle, judgement, calling_through[0], (compiled, compiled2),
                                                    reference=reference, mask=mask, program=program)
            done.set_result(dataclasses.replace(reply, result=CheckResult(
                program, judgement, tuple(runs), configuration=config.configuration,
                needs_configuration=first.needs_configuration)))

        _when_all(futures, done, again)

    def _judge_again(self, program: Program, first: Judgement, eager: ExecResult, compiled: ExecResult,
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


def untraced(config: RunConfig) -> RunConfig:
    """`config` without arcs: for runs that only judge (confirmation, reduction, known bugs
    judged again), whose coverage nobody reads."""
    return dataclasses.replace(config, arcs=False) if config.arcs else config


_MAX_DERIVED = 4096


def derived_paths(first: ExecResult, perturbed: ExecResult) -> frozenset[str]:
    """Where a perturbed eager run that went otherwise than the first (one of them stopped at a
    check of the program's own outside any call, the other went on: the program checks
    compiler state itself) holds other values, as far as both went: the program's globals
    after each call, its printed lines. Empty when they differ in anything else (calls, what
    calls returned or raised), when both stopped, and for a program running its own tests
    (a failing test shifts the calls after it)."""
    first_stop, perturbed_stop = program_stop(first), program_stop(perturbed)
    if first_stop is not None and perturbed_stop is not None or first.observation.tests or perturbed.observation.tests:
        return frozenset()
    if any(run.outcome.failed and stop is None for run, stop in ((first, first_stop), (perturbed, perturbed_stop))):
        return frozenset()  # a timeout, a signal, an exception out of a call: not a value of the program's
    stopped = "eager" if first_stop is not None else "compiled" if perturbed_stop is not None else None
    divergences = compare_observations(first.observation, perturbed.observation, names=("first eager run", "perturbed"),
                                       limit=_MAX_DERIVED, stopped=stopped)
    # a derived value shows where run-specific ones may (globals, printed lines, state), never in
    # a call's result, arguments or exception
    if len(divergences) >= _MAX_DERIVED or any(not Oracle.maskable(d) or d.where == "stdout" for d in divergences):
        return frozenset()
    return frozenset(d.where for d in divergences)


def _guarded(done: Future[Any], callback: Callable[[Future[Any]], None]) -> Callable[[Future[Any]], None]:
    """A done-callback whose failure (a bug of ours, an exception the executor raised) ends
    `done` with that exception instead of vanishing into a log."""
    def call(future: Future[Any]) -> None:
        try:
            callback(future)
        except BaseException as exc:  # noqa: BLE001 - handed to whoever waits on `done`
            if not done.done():
                done.set_exception(exc)

    return call


def _when_all(futures: list[Future[ExecResult]], done: Future[Any],
              then: Callable[[list[ExecResult]], None]) -> None:
    """Call `then` with every future's result once all are done (in the thread that finishes
    the last); an exception in any of them, or in `then`, ends `done` with it."""
    remaining = [len(futures)]
    lock = threading.Lock()

    def one(_: Future[ExecResult]) -> None:
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            then([f.result() for f in futures])

    for future in futures:
        future.add_done_callback(_guarded(done, one))
