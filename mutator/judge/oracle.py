"""The oracle: judge a compiled run against an eager run (mutator/llm/taxonomy.md, "Symptoms").

Pure and torch-free: it reads two `ExecResult`s (and optionally a float64 reference run)
and returns a `Judgement`. Running, re-running and confirming is `mutator.judge.check`'s job.

Other people's programs check themselves, so their own checks are evidence too. A
program-level failure of the eager run (outside any call through the compiled function:
a top-level `assert` on frame counts, `assertRaises(Unsupported)`) happens because the
eager run does not compile; when every call both runs made agrees, such a program is
judged by its own result under compilation. A check of the program's own that fails
only when compiled is a wrong result (`MISMATCH`), not a crash. A program that runs its
own unittest tests is judged test by test, the same way.
"""

from __future__ import annotations

import dataclasses
import hashlib
from dataclasses import dataclass

from mutator.judge.breaks import BreakMode, BreakRegions
from mutator.judge.compare import Divergence, compare_observations, exceptions_match, program_global
from mutator.core.observation import CallRecord, ExecResult, Observation, Outcome, Stdout, TestOutcome
from mutator.core.program import Program
from mutator.judge.storms import recompile_storm
from mutator.core.values import ExceptionInfo, FrameInfo
from mutator.core.verdict import Verdict

BACKEND_FAILED = "BackendCompilerFailed"
UNSUPPORTED = "Unsupported"
OBSERVED_ASSERTION = "ObservedAssertionErrorError"  # torch._dynamo.exc's name for an AssertionError met while tracing
CONSTRAINT_VIOLATED = "ConstraintViolationError"  # a mark_dynamic dimension the code specialises
# Dynamo raises it only when the program set torch._dynamo.config.error_on_recompile: its own
# check that nothing recompiles
RECOMPILED = "RecompileError"
# Dynamo declines a program it cannot run under the configuration of the check (export under
# forced graph breaks: "Cannot force graph break on export"), as torch's tests skip it
SKIPPED = "SkipTest"
# torch._dynamo.comptime's assert_static and friends: the program's own compile-time claim
# about the compiler (a value stays static), a check of compiler behaviour like frame_count
COMPTIME = "torch/_dynamo/comptime.py"
EXPLICIT_BREAK = "Call to `torch._dynamo.graph_break()`"  # the gb_type of a break the program asks for
# Dynamo's UserError for a branch on a data-dependent value (tensor.py: evaluate_expr): where the
# program asked for no graph breaks it is Dynamo's refusal, as Unsupported would be
DATA_DEPENDENT = ("UserError", "data-dependent expression")
# the gb_type of the break the forced-graph-breaks configuration makes at a leaf function's return
FORCED_BREAK = "Forced graph break on leaf function"
# a higher-order operator (torch.cond, checkpoint, ...) whose body broke the graph: refused by design
UNCAPTURED_HOP = "UncapturedHigherOrderOpError"
# breaks asked for where no breaks are asked for too: Dynamo is right to refuse them
_ASKED_BREAKS = {EXPLICIT_BREAK: "the program calls torch._dynamo.graph_break() itself",
                 FORCED_BREAK: "the configuration forces a graph break at a leaf function's return"}
CHECK, COMPILER_CHECK = "check", "compiler"  # ExceptionInfo.check (runtime.checks)
_FAILED_TESTS = ("fail", "error")


@dataclass(frozen=True, slots=True)
class Judgement:
    verdict: Verdict
    reason: str
    exception: ExceptionInfo | None = None  # the compiled run's exception behind a crash
    eager_exception: ExceptionInfo | None = None  # eager's, for INVALID and swallowed errors
    divergence: Divergence | None = None  # the first divergence behind a MISMATCH
    numeric: bool = False  # every divergence is a float difference a float64 run could explain
    key: str = ""  # for storms and specialisation: how it was found and the guard-failure kind
    masked: tuple[str, ...] = ()  # paths not compared: run-specific values (see check.Checker)


@dataclass(frozen=True, slots=True)
class Stop:
    """How a run stopped at program level: an exception raised outside any compiled call, or sys.exit."""

    exception: ExceptionInfo | None
    exit_code: int | None = None

    def describe(self, program: str) -> str:
        if self.exception is None:
            return f"sys.exit({self.exit_code})"
        return self.exception.one_line() + _where(self.exception, program)

    def same_as(self, other: Stop, program: str) -> bool:
        if (self.exception is None) != (other.exception is None):
            return False
        if self.exception is None or other.exception is None:
            return self.exit_code == other.exit_code
        return self.exception.type_name == other.exception.type_name and \
            _own_line(self.exception, program) == _own_line(other.exception, program)


class Oracle:
    """Rules in order: eager failures, how the compiled run ended, call by call, the program's
    own checks, storms."""

    def judge(self, eager: ExecResult, compiled: ExecResult, reference: ExecResult | None = None, *,
              mask: frozenset[str] = frozenset(), program: Program | None = None) -> Judgement:
        context = _Context(program, compiled.observation)
        mask = mask | compiler_made(compiled.observation)
        if eager.observation.tests or compiled.observation.tests:
            judgement = _judge_tests(self, eager, compiled, reference, mask, context)
        else:
            judgement = self._judge_run(eager, compiled, reference, mask, context)
        if judgement.verdict is Verdict.PASS:
            storm = recompile_storm(compiled.observation)
            if storm is not None:
                judgement = Judgement(storm.verdict, storm.reason, key=storm.key)
        return dataclasses.replace(judgement, masked=tuple(sorted(mask)))

    def run_specific(self, first: ExecResult, second: ExecResult) -> tuple[frozenset[str], str]:
        """Where two eager runs of one program differ: (the paths to mask, '') when only
        values that differ by nature differ, or (empty, why) when the program is unstable:
        its outcome, its exceptions, its calls, or what a compiled call returns or mutates."""
        if first.outcome is not second.outcome:
            return frozenset(), (f"two eager runs disagree: first {first.outcome.value} ({first.detail}), "
                                 f"then {second.outcome.value} ({second.detail})")
        if not exceptions_match(first.uncaught, second.uncaught):
            return frozenset(), "two eager runs raised different exceptions"
        if [(t.test, t.status) for t in first.observation.tests] != \
                [(t.test, t.status) for t in second.observation.tests]:
            return frozenset(), "two eager runs disagree on which tests pass"
        divergences = compare_observations(first.observation, second.observation,
                                           names=("first eager run", "second"), limit=4096)
        unstable = next((d for d in divergences if not self.maskable(d)), None)
        if unstable is not None:
            return frozenset(), f"two eager runs disagree: {unstable}"
        if len(divergences) >= 4096:
            return frozenset(), "two eager runs disagree in too many places"
        return frozenset(d.where for d in divergences), ""

    @staticmethod
    def maskable(divergence: Divergence | None) -> bool:
        """Whether a divergence is in what may hold run-specific values (globals, printed
        lines, state), which a mask may cover; never a call's result, arguments or exception."""
        return divergence is not None and divergence.observation not in _RUN_SPECIFIC_NEVER

    def _judge_run(self, eager: ExecResult, compiled: ExecResult, reference: ExecResult | None,
                   mask: frozenset[str], context: _Context) -> Judgement:
        eager_stop = program_stop(eager)
        if eager.outcome.failed and eager_stop is None:
            return self._eager_failed(eager, compiled, context)
        ended = self._compiled_ended(compiled)
        if ended is not None:
            return ended
        refusals: list[str] = []
        first_refused: int | None = None  # the first call refused as the program expects
        caught_refusal: CallRecord | None = None  # an Unsupported the program took for its own exception
        course_changed = len(eager.observation.calls) != len(compiled.observation.calls)
        for e, c in zip(eager.observation.calls, compiled.observation.calls):
            if first_refused is not None and course_changed:
                break  # the handler of the refusal went another way than the eager run: see below
            if exceptions_match(e.exception, c.exception):
                if caught_refusal is None and _refused_in_place_of(e.exception, c.exception, context.mode(c)):
                    caught_refusal = c
                continue
            mode = context.mode(c)
            if eager_stop is not None and e.exception is None and c.exception is not None \
                    and c.exception.involves(UNSUPPORTED) and mode.errors \
                    and compiled.observation.uncaught_call != c.index:  # caught: the refusal it checks for
                if not refusals:  # what the refused call would have printed eagerly has no counterpart
                    eager, compiled = _printed_before(eager, e.stdout_at), _printed_before(compiled, c.stdout_at)
                    first_refused = c.index
                refusals.append(f"call {c.index + 1}: Unsupported under {mode.why}")
                mask = mask | {f"call {c.index + 1} ({c.label})"}  # the refusal the program checks for itself
                continue
            return self._call_exception(e, c, context)
        compiled_stop = program_stop(compiled)
        stopped = "eager" if eager_stop is not None else "compiled" if compiled_stop is not None else None
        if eager_stop is not None and compiled_stop is not None \
                and len(compiled.observation.calls) < len(eager.observation.calls):
            # both stopped at a check of the program's own, the compiled run first (a frame
            # count that a configuration's graph breaks changed): the calls it made are compared,
            # and its check decides
            stopped = "compiled"
        ref = reference.observation if reference is not None and reference.outcome is Outcome.COMPLETED else None
        compared = eager.observation, compiled.observation
        if first_refused is not None and course_changed:
            # The program's handler took the refusal it checks for (`with assertRaises(Unsupported)`
            # around more calls) and the runs then made different numbers of calls: the calls the
            # eager run went on to make in the handler's scope, or the compiled run made past it,
            # have no counterpart. The calls up to the refusal are compared (and, as cut above,
            # what each run printed before it); later crashes still count (`_by_own_checks`).
            compared = tuple(dataclasses.replace(o, calls=o.calls[:first_refused + 1]) for o in compared)
        divergences = compare_observations(*compared, ref, mask=mask, stopped=stopped)
        if divergences and caught_refusal is not None:
            # Dynamo refused the call (Unsupported is a RuntimeError) where the eager call raised
            # an exception the program expects, so the program's own except/assertRaises took
            # the refusal; what differs afterwards (a side effect the refused trace never ran)
            # is the refusal's doing, documented under no-graph-break modes, not a silent bug.
            c, exc = caught_refusal, caught_refusal.exception
            gb = f" [{exc.gb_type}]" if exc.gb_type else ""
            return Judgement(Verdict.FULLGRAPH_BREAK,
                             f"call {c.index + 1} ({c.label}): Unsupported under {context.mode(c).why}{gb}, caught by "
                             f"the program's own handler of the exception eager raised; what followed differs: "
                             f"{divergences[0]}", exception=exc, divergence=divergences[0])
        if divergences:
            first = divergences[0]
            more = f" (and {len(divergences) - 1} more)" if len(divergences) > 1 else ""
            check = compiled_stop.exception if compiled_stop is not None and eager_stop is None else None
            also = f"; then the program's own check failed: {check.one_line()}{_where(check, context.name)}" \
                if check is not None and check.check == CHECK else ""
            return Judgement(Verdict.MISMATCH, f"{first}{more}{also}", divergence=first, exception=check,
                             numeric=all(d.numeric for d in divergences))
        if eager_stop is not None:
            return self._by_own_checks(eager_stop, compiled, context, refusals, eager.observation.calls)
        if compiled_stop is not None:
            return self._compiled_stopped(compiled_stop, context)
        return Judgement(Verdict.PASS, "compiled matches eager")

    def _by_own_checks(self, eager_stop: Stop, compiled: ExecResult, context: _Context,
                       refusals: list[str], eager_calls: tuple[CallRecord, ...]) -> Judgement:
        """The eager run stopped at program level and every call agrees: the program's own
        checks under compilation decide."""
        what = eager_stop.describe(context.name)
        if compiled.outcome is Outcome.COMPLETED:
            expects = f"; it expects Dynamo to refuse ({', '.join(refusals)})" if refusals else ""
            return Judgement(Verdict.PASS, f"the program's own checks decide: its eager run stopped at {what}, "
                                           f"outside any compiled call (nothing compiles there){expects}; under "
                                           "compilation every check passes", eager_exception=eager_stop.exception)
        compiled_stop = program_stop(compiled)
        if compiled_stop is not None and compiled_stop.same_as(eager_stop, context.name):
            return Judgement(Verdict.INVALID, f"the program's own check fails in both runs: {what}",
                             eager_exception=eager_stop.exception, exception=compiled_stop.exception)
        unmade = len(compiled.observation.calls) - len(eager_calls)
        if compiled_stop is not None and compiled_stop.exception is not None and \
                compiled_stop.exception.check == CHECK and (unmade > 0 or (
                    eager_stop.exception is not None and eager_stop.exception.check is None
                    and _stopped_earlier(eager_stop, compiled_stop, context.name))):
            # A check the eager run never reached has no reference: it came after compiled calls
            # the eager run never made (a harvested test's frame count stopped it first), or past
            # an error the eager run stopped at earlier in the same frame (its recording backend's
            # empty graphs); a mutant's check that fails in both runs alike looks the same. (A
            # check failing compiled after the same calls, past a check of compiler behaviour that
            # failed eagerly, is judged as before.)
            before = f"before {unmade} call(s) the compiled run made and " if unmade > 0 else ""
            return Judgement(Verdict.INVALID, f"its eager run stopped at {what}, outside any compiled call and "
                                              f"{before}before the check the compiled run failed "
                                              f"({compiled_stop.describe(context.name)}): that check has no eager "
                                              "reference", eager_exception=eager_stop.exception,
                             exception=compiled_stop.exception)
        if compiled_stop is not None:
            return self._compiled_stopped(compiled_stop, context, eager_stopped=what)
        failing = compiled.observation.uncaught_call
        calls = compiled.observation.calls
        if failing is not None and failing < len(calls) and calls[failing].exception is not None:
            return self._call_exception(None, calls[failing], context)
        return Judgement(Verdict.INVALID, f"eager stopped at {what}; compiled {compiled.detail or 'failed'}")

    def _compiled_stopped(self, stop: Stop, context: _Context, eager_stopped: str = "") -> Judgement:
        """The compiled run stopped at program level where the eager run did not stop (there)."""
        besides = f" (its eager run stopped elsewhere, at {eager_stopped})" if eager_stopped else ""
        if stop.exception is None:
            divergence = Divergence("exit", "sys.exit", "value", f"the compiled run called sys.exit({stop.exit_code})")
            return Judgement(Verdict.MISMATCH, f"the program's own check failed only when compiled: it called "
                                               f"sys.exit({stop.exit_code}){besides}", divergence=divergence)
        exc = stop.exception
        if exc.check == CHECK:
            return _own_check_failed(exc, "the program's own check failed only when compiled", context.name, besides)
        if exc.check == COMPILER_CHECK:
            return Judgement(Verdict.INVALID, f"the program's check of compiler behaviour does not hold under "
                                              f"compilation: {stop.describe(context.name)}{besides}", exception=exc)
        return classify_exception(exc, context.mode(None, exc), "the compiled run raised")

    def _eager_failed(self, eager: ExecResult, compiled: ExecResult, context: _Context) -> Judgement:
        """The eager run failed inside a call, or by timeout, signal or memory: the program is
        invalid, unless the compiled run went on as if nothing had been raised."""
        eager_exc = eager.uncaught
        what = eager_exc.one_line() if eager_exc else eager.detail
        failing = eager.observation.uncaught_call
        calls = compiled.observation.calls
        if failing is not None and failing < len(calls) and calls[failing].exception is None:
            return self._call_exception(eager.observation.calls[failing], calls[failing], context)
        if failing is not None and failing < len(calls) and compiled.outcome is Outcome.COMPLETED:
            refused = calls[failing].exception
            mode = context.mode(calls[failing])
            if refused is not None and refused.involves(UNSUPPORTED) and mode.errors:
                # Under no-graph-break modes an exception seen while tracing is an Unsupported
                # ("Observed exception"), as Dynamo documents; the program expected and caught it.
                return Judgement(Verdict.PASS, f"the program's own checks decide: call {failing + 1} raised "
                                               f"{eager_exc.short_type if eager_exc else 'an exception'} eagerly and "
                                               f"Unsupported under {mode.why}, which the program expects and "
                                               "catches", eager_exception=eager_exc)
        if compiled.outcome is Outcome.COMPLETED and eager.outcome in (Outcome.RAISED, Outcome.EXITED):
            return Judgement(Verdict.MISMATCH, f"eager {eager.detail or what}, but the compiled run completed",
                             eager_exception=eager_exc,
                             divergence=Divergence("exception", "program", "exception",
                                                   f"compiled returned normally where eager raised {what}"))
        compiled_what = compiled.uncaught.one_line() if compiled.uncaught else (compiled.detail or "completed")
        return Judgement(Verdict.INVALID, f"eager failed: {what}; compiled: {compiled_what}",
                         exception=compiled.uncaught, eager_exception=eager_exc)

    def _compiled_ended(self, compiled: ExecResult) -> Judgement | None:
        outcome = compiled.outcome
        if outcome is Outcome.TIMEOUT:
            return Judgement(Verdict.HANG, f"compiled run {compiled.detail}; eager finished")
        if outcome is Outcome.SIGNALLED:
            return Judgement(Verdict.CRASH, f"compiled run {compiled.detail}; eager finished")
        if outcome is Outcome.MEMORY:
            return Judgement(Verdict.CRASH, f"compiled run {compiled.detail}; eager finished",
                             exception=compiled.uncaught)
        if outcome is Outcome.LOST:
            return Judgement(Verdict.UNSTABLE, f"compiled run lost: {compiled.detail}")
        if outcome is Outcome.EXITED and program_stop(compiled) is None:
            return Judgement(Verdict.CRASH, f"compiled run {compiled.detail}; eager finished")
        return None

    def _call_exception(self, e: CallRecord | None, c: CallRecord, context: _Context) -> Judgement:
        where = f"call {c.index + 1} ({c.label})"
        eager_exc = e.exception if e is not None else None
        if c.exception is None:
            assert eager_exc is not None
            return Judgement(Verdict.MISMATCH,
                             f"{where}: compiled returned normally where eager raised {eager_exc.one_line()}",
                             eager_exception=eager_exc,
                             divergence=Divergence("exception", where, "exception", "compiled swallowed an exception"))
        if eager_exc is None and c.exception.check == CHECK:
            return _own_check_failed(c.exception, f"{where}: the program's own check failed only when compiled",
                                     context.name)
        if eager_exc is None and c.exception.involves(OBSERVED_ASSERTION):
            # Under a no-graph-break mode an assert of the traced code that fails while Dynamo
            # traces it becomes Unsupported("Observed exception"): a check of the program's
            # (or of the assertion helpers it calls) failed only when compiled
            return _own_check_failed(c.exception, f"{where}: the program's own check failed only when compiled "
                                                  "(an AssertionError Dynamo observed while tracing)", context.name)
        if eager_exc is None and c.exception.check == COMPILER_CHECK:
            return Judgement(Verdict.INVALID, f"{where}: the program's check of compiler behaviour does not hold "
                                              f"under compilation: {c.exception.one_line()}", exception=c.exception)
        context_text = f"{where} raised" + (f" where eager raised {eager_exc.short_type}" if eager_exc else "")
        judgement = classify_exception(c.exception, context.mode(c), context_text)
        return dataclasses.replace(judgement, exception=c.exception, eager_exception=eager_exc)


def _refused_in_place_of(eager: ExceptionInfo | None, compiled: ExceptionInfo | None, mode: BreakMode) -> bool:
    """The compiled call raised Dynamo's refusal where the eager call raised an exception of
    the program's, and an `except` of the eager one catches both (Unsupported is a RuntimeError)."""
    return (eager is not None and compiled is not None and mode.errors and compiled.involves(UNSUPPORTED)
            and not eager.involves(UNSUPPORTED))


def classify_exception(exc: ExceptionInfo, mode: BreakMode, context: str) -> Judgement:
    """An exception that only the compiled run raised: which kind of finding it is."""
    if exc.involves(BACKEND_FAILED):
        return Judgement(Verdict.BACKEND_FAILURE, f"{context} {exc.one_line()}", exception=exc)
    if exc.involves(RECOMPILED):
        return Judgement(Verdict.INVALID, f"{context} {exc.one_line()}: the program asked Dynamo to fail on a "
                                          "recompilation (error_on_recompile), a check of compiler behaviour, and it "
                                          "recompiled", exception=exc)
    if exc.involves(SKIPPED) and exc.in_dynamo:
        return Judgement(Verdict.INVALID, f"{context} {exc.one_line()}: Dynamo declines to run the program under "
                                          "this configuration, as torch's own tests are skipped", exception=exc)
    if exc.involves(UNCAPTURED_HOP) and FORCED_BREAK in exc.message:
        return Judgement(Verdict.INVALID, f"{context} {exc.one_line()}: the graph break the configuration forces at "
                                          "a leaf function's return fell inside a higher-order operator's body, which "
                                          "Dynamo refuses by design (as it would a torch._dynamo.graph_break() there)",
                         exception=exc)
    if exc.is_a("AssertionError") and exc.dynamo_frame is not None and exc.dynamo_frame.filename.endswith(COMPTIME):
        return Judgement(Verdict.INVALID, f"{context} {exc.one_line()}: the program's compile-time check of "
                                          "compiler behaviour (torch._dynamo.comptime) does not hold", exception=exc)
    if exc.involves(CONSTRAINT_VIOLATED):
        # The program asked for a dynamic dimension (mark_dynamic) that its code specialises:
        # Dynamo refuses, as documented (maybe_mark_dynamic would not).
        return Judgement(Verdict.SPECIALIZATION, f"{context} {exc.one_line()}: a dimension marked dynamic is "
                                                 "specialised by the code, which Dynamo refuses as documented",
                         exception=exc, key="constraint violated")
    if mode.errors and exc.involves(DATA_DEPENDENT[0]) and DATA_DEPENDENT[1] in exc.message:
        return Judgement(Verdict.FULLGRAPH_BREAK, f"{context} {exc.one_line()}: a branch on a data-dependent value "
                                                  f"under {mode.why}, which Dynamo refuses (UserError) where it would "
                                                  "otherwise break the graph", exception=exc)
    if exc.involves(UNSUPPORTED) and mode.errors:
        if exc.gb_type in _ASKED_BREAKS:
            return Judgement(Verdict.INVALID, f"{context} Unsupported: {mode.why} and {_ASKED_BREAKS[exc.gb_type]}",
                             exception=exc)
        gb = f" [{exc.gb_type}]" if exc.gb_type else ""
        return Judgement(Verdict.FULLGRAPH_BREAK, f"{context} Unsupported under {mode.why}{gb}", exception=exc)
    if exc.involves(UNSUPPORTED) and mode.allowed_again:
        return Judgement(Verdict.CRASH, f"{context} {exc.one_line()}: a graph break escaped from {mode.why}",
                         exception=exc)
    where = f" (in {exc.dynamo_frame})" if exc.in_dynamo else ""
    return Judgement(Verdict.CRASH, f"{context} {exc.one_line()}{where}", exception=exc)


def compiler_made(observation: Observation) -> frozenset[str]:
    """The paths of what a backend of the program's own wrote in its globals (the graph module,
    the example inputs, a count of graphs): the compiler's output, which the eager run, where
    no backend runs, cannot have; they are not compared."""
    return frozenset(program_global(call, name) for call in observation.calls for name in call.compiler_made)


def program_stop(run: ExecResult) -> Stop | None:
    """How the run stopped at program level, or None when it did not (it completed, a
    compiled call's exception escaped, or it ended by a signal, timeout or memory)."""
    observation = run.observation
    if run.outcome is Outcome.RAISED and observation.uncaught is not None and observation.uncaught_call is None:
        return Stop(observation.uncaught)
    if run.outcome is Outcome.EXITED and observation.exit_code not in (None, 0):
        return Stop(None, observation.exit_code)
    return None


class _Context:
    """What judging one program needs besides its runs: its name, break settings, compile options."""

    def __init__(self, program: Program | None, compiled: Observation) -> None:
        self.name = program.name if program is not None else ""
        self._regions = BreakRegions.of(program.name, program.source) if program is not None else None
        self._compiled = compiled.compiled

    def mode(self, call: CallRecord | None, exc: ExceptionInfo | None = None) -> BreakMode:
        """Whether graph breaks were errors where `call`'s exception (or `exc`) broke."""
        exc = exc if exc is not None else call.exception if call is not None else None
        label = call.label if call is not None else None
        fullgraph = any(c.fullgraph for c in self._compiled if label is None or c.label == label)
        at_call = call.error_on_graph_break if call is not None else False
        stack = exc.user_stack if exc is not None else ()
        dynamo_says = exc.error_on_graph_break if exc is not None else None
        if self._regions is None:
            return BreakRegions("", "").mode(fullgraph=fullgraph, at_call=at_call, user_stack=(),
                                             dynamo_says=dynamo_says)
        return self._regions.mode(fullgraph=fullgraph, at_call=at_call, user_stack=stack, dynamo_says=dynamo_says)


def _judge_tests(oracle: Oracle, eager: ExecResult, compiled: ExecResult, reference: ExecResult | None,
                 mask: frozenset[str], context: _Context) -> Judgement:
    """A program that runs its own unittest tests: each test (and the module around them)
    is judged like a program of its own; the most severe judgement stands."""
    e_tests = {t.test: t for t in eager.observation.tests}
    c_tests = {t.test: t for t in compiled.observation.tests}
    same_outcomes = [(t.test, t.status) for t in eager.observation.tests] == \
        [(t.test, t.status) for t in compiled.observation.tests]
    judgements: list[tuple[str, Judgement]] = []
    module = (_unit(eager, "", None, keep_output=same_outcomes), _unit(compiled, "", None, keep_output=same_outcomes))
    judgements.append(("", oracle._judge_run(*module, _unit(reference, "", None) if reference else None,
                                             mask, context)))
    for name in dict.fromkeys([*e_tests, *c_tests]):
        e, c = e_tests.get(name), c_tests.get(name)
        if e is None or c is None:
            judgements.append((name, Judgement(Verdict.MISMATCH, f"test {name} ran in one run only",
                                               divergence=Divergence("tests", name, "missing", "ran in one run only"))))
            continue
        if e.status not in (*_FAILED_TESTS, "pass") or c.status not in (*_FAILED_TESTS, "pass"):
            if e.status != c.status:
                judgements.append((name, Judgement(Verdict.MISMATCH, f"test {name}: eager {e.status}, compiled "
                                                   f"{c.status}", divergence=Divergence("tests", name, "status",
                                                                                       f"{e.status} vs {c.status}"))))
            continue
        ref_unit = _unit(reference, name, None) if reference is not None else None
        judgements.append((name, oracle._judge_run(_unit(eager, name, e), _unit(compiled, name, c), ref_unit,
                                                   mask, context)))
    # the most severe; among passes, one that the program's own checks decided says more
    name, worst = max(judgements, key=lambda item: (_severity(item[1].verdict), item[1].eager_exception is not None))
    if not name:
        return worst
    return dataclasses.replace(worst, reason=f"test {name}: {worst.reason}")


def _unit(run: ExecResult, test: str, outcome: TestOutcome | None, *, keep_output: bool = False) -> ExecResult:
    """One test of a unittest program (or, with test "", the module around them) as a run of its own."""
    observation = run.observation
    calls = tuple(c for c in observation.calls if c.test == test)
    if test:
        failed = outcome is not None and outcome.status in _FAILED_TESTS
        unit = Observation(calls=calls, compiled=observation.compiled, compile=observation.compile,
                           uncaught=outcome.exception if failed and outcome else None,
                           uncaught_call=outcome.from_call if failed and outcome else None)
        return dataclasses.replace(run, observation=unit, outcome=Outcome.RAISED if failed else Outcome.COMPLETED,
                                   detail="")
    unit = dataclasses.replace(observation, calls=calls, tests=(), exit_code=None,
                               stdout=observation.stdout if keep_output else None)
    outcome_ = Outcome.COMPLETED if run.outcome is Outcome.EXITED and observation.exit_code is not None else run.outcome
    return dataclasses.replace(run, observation=unit, outcome=outcome_)


def _printed_before(run: ExecResult, position: int) -> ExecResult:
    """`run` with only what it printed before `position` (characters) left in its stdout."""
    stdout = run.observation.stdout
    if stdout is None or stdout.truncated or position >= stdout.length:
        return run
    text = stdout.head[:position]
    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    cut = Stdout(text, len(text), digest, digest)
    return dataclasses.replace(run, observation=dataclasses.replace(run.observation, stdout=cut))


def _severity(verdict: Verdict) -> tuple[int, int]:
    """Bugs outrank low-severity findings, which outrank INVALID, UNSTABLE and PASS."""
    if verdict.is_frontend_bug:
        return (3, -int(verdict))
    if verdict.is_finding:
        return (2, -int(verdict))
    return (1, int(verdict))


def _own_check_failed(exc: ExceptionInfo, what: str, program: str, besides: str = "") -> Judgement:
    return Judgement(Verdict.MISMATCH, f"{what}: {exc.one_line()}{_where(exc, program)}{besides}", exception=exc,
                     divergence=Divergence("check", "the program's own check", "check", exc.one_line()))


def _stopped_earlier(eager: Stop, compiled: Stop, program: str) -> bool:
    """The eager run stopped before the compiled run's stop, in a frame of the program's own
    that the compiled run's stop is in too: the same calls on the way there, then the eager
    run's line earlier in that frame than the compiled run's (which may go deeper from there,
    into the helper its check calls)."""
    if eager.exception is None or compiled.exception is None:
        return False
    mine, theirs = _own_frames(eager.exception, program), _own_frames(compiled.exception, program)
    depth = len(mine) - 1
    if depth < 0 or len(theirs) <= depth or mine[:depth] != theirs[:depth]:
        return False
    return mine[depth].function == theirs[depth].function and mine[depth].lineno < theirs[depth].lineno


def _own_frames(exc: ExceptionInfo, program: str) -> list[FrameInfo]:
    """The frames of `exc` in the program's own file (all of them when it has no name), innermost last."""
    return [f for f in exc.frames if f.filename == program] if program else list(exc.frames)


def _own_line(exc: ExceptionInfo, program: str) -> int | None:
    own = _own_frames(exc, program)
    return own[-1].lineno if own else None


def _where(exc: ExceptionInfo, program: str) -> str:
    """ (prog.py:12): the innermost line of the program's own where `exc` was raised."""
    own = _own_frames(exc, program)
    return f" ({own[-1].filename}:{own[-1].lineno})" if own else ""


_RUN_SPECIFIC_NEVER = frozenset({"calls", "exception", "result", "args", "kwargs", "exit", "tests"})
