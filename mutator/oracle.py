"""The oracle: judge a compiled run against an eager run (TAXONOMY.md, "Symptoms").

Pure and torch-free: it reads two `ExecResult`s (and optionally a float64 reference run)
and returns a `Judgement`. Running, re-running and confirming is `mutator.check`'s job.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from mutator.compare import Divergence, compare_observations, exceptions_match
from mutator.observation import CallRecord, ExecResult, Observation, Outcome
from mutator.values import ExceptionInfo
from mutator.verdict import Verdict

BACKEND_FAILED = "BackendCompilerFailed"
UNSUPPORTED = "Unsupported"
STORM_META_REPEATS = 3  # recompiles on calls with already-seen input metadata before it is a storm


@dataclass(frozen=True, slots=True)
class Judgement:
    verdict: Verdict
    reason: str
    exception: ExceptionInfo | None = None  # the compiled run's exception behind a crash
    eager_exception: ExceptionInfo | None = None  # eager's, for INVALID and swallowed errors
    divergence: Divergence | None = None  # the first divergence behind a MISMATCH
    numeric: bool = False  # every divergence is a float difference a float64 run could explain


class Oracle:
    """Rules in order: eager failures, how the compiled run ended, call by call, storms."""

    def judge(self, eager: ExecResult, compiled: ExecResult, reference: ExecResult | None = None) -> Judgement:
        if eager.outcome.failed:
            return self._eager_failed(eager, compiled)
        ended = self._compiled_ended(compiled)
        if ended is not None:
            return ended
        for e, c in zip(eager.observation.calls, compiled.observation.calls):
            if not exceptions_match(e.exception, c.exception):
                return self._call_exception(e, c, compiled.observation)
        ref = reference.observation if reference is not None and reference.outcome is Outcome.COMPLETED else None
        divergences = compare_observations(eager.observation, compiled.observation, ref)
        if divergences:
            first = divergences[0]
            more = f" (and {len(divergences) - 1} more)" if len(divergences) > 1 else ""
            return Judgement(Verdict.MISMATCH, f"{first}{more}", divergence=first,
                             numeric=all(d.numeric for d in divergences))
        storm = recompile_storm(compiled.observation)
        if storm:
            return Judgement(Verdict.RECOMPILE_STORM, storm)
        return Judgement(Verdict.PASS, "compiled matches eager")

    def same_eager(self, first: ExecResult, second: ExecResult) -> Divergence | None:
        """None when two eager runs agree; otherwise where they differ."""
        if first.outcome is not second.outcome:
            return Divergence("outcome", "run", "outcome",
                              f"first {first.outcome.value} ({first.detail}), then {second.outcome.value} ({second.detail})")
        if not exceptions_match(first.uncaught, second.uncaught):
            return Divergence("exception", "run", "exception", "the two eager runs raised different exceptions")
        divergences = compare_observations(first.observation, second.observation,
                                           names=("first eager run", "second"))
        return divergences[0] if divergences else None

    def _eager_failed(self, eager: ExecResult, compiled: ExecResult) -> Judgement:
        eager_exc = eager.uncaught
        what = eager_exc.one_line() if eager_exc else eager.detail
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
        if outcome is Outcome.EXITED:
            return Judgement(Verdict.CRASH, f"compiled run {compiled.detail}; eager finished")
        if outcome is Outcome.RAISED and compiled.uncaught is not None:
            failing = _failing_call(compiled.observation)
            if failing is None or failing.exception is None:
                return classify_exception(compiled.uncaught, _fullgraph(compiled.observation, None),
                                          "the compiled run raised")
        return None

    def _call_exception(self, e: CallRecord, c: CallRecord, observation: Observation) -> Judgement:
        where = f"call {e.index + 1} ({e.label})"
        if c.exception is None:
            assert e.exception is not None
            return Judgement(Verdict.MISMATCH,
                             f"{where}: compiled returned normally where eager raised {e.exception.one_line()}",
                             eager_exception=e.exception,
                             divergence=Divergence("exception", where, "exception", "compiled swallowed an exception"))
        context = f"{where} raised" + (f" where eager raised {e.exception.short_type}" if e.exception else "")
        judgement = classify_exception(c.exception, _fullgraph(observation, c.label), context)
        return Judgement(judgement.verdict, judgement.reason, exception=c.exception, eager_exception=e.exception)


EXPLICIT_BREAK = "Call to `torch._dynamo.graph_break()`"  # the gb_type of a break the program asks for


def classify_exception(exc: ExceptionInfo, fullgraph: bool, context: str) -> Judgement:
    """An exception that only the compiled run raised: which kind of finding it is."""
    if exc.involves(BACKEND_FAILED):
        return Judgement(Verdict.BACKEND_FAILURE, f"{context} {exc.one_line()}", exception=exc)
    if fullgraph and exc.involves(UNSUPPORTED):
        if exc.gb_type == EXPLICIT_BREAK:
            # The program asks for a break and for no breaks: Dynamo is right to refuse.
            return Judgement(Verdict.INVALID, f"{context} Unsupported: fullgraph=True and the program calls "
                                              "torch._dynamo.graph_break() itself", exception=exc)
        gb = f" [{exc.gb_type}]" if exc.gb_type else ""
        return Judgement(Verdict.FULLGRAPH_BREAK, f"{context} Unsupported under fullgraph=True{gb}", exception=exc)
    where = f" (in {exc.dynamo_frame})" if exc.in_dynamo else ""
    return Judgement(Verdict.CRASH, f"{context} {exc.one_line()}{where}", exception=exc)


def recompile_storm(observation: Observation) -> str:
    """Why this compiled run recompiled more than its inputs warrant, or '' when it did not.

    A recompile on a call whose inputs, program globals and global torch state equal an
    earlier call's exactly (tensor values included) is never warranted. On calls equal in
    metadata only (tensor values differ), data-dependent specialisation warrants a couple
    per code object (automatic dynamic, 0/1 specialisation), so a storm takes
    STORM_META_REPEATS recompiles of one code object. Hitting the recompile limit is one.
    """
    stats = observation.compile
    if stats is not None and stats.recompile_limit_hit:
        last = stats.recompile_reasons[-1] if stats.recompile_reasons else "unknown"
        return f"hit Dynamo's recompile limit after {stats.compiles} compilations (last guard failure: {last})"
    exact_seen: dict[tuple[str, int], set[str]] = defaultdict(set)
    meta_seen: dict[tuple[str, int], set[str]] = defaultdict(set)
    meta_repeats: dict[str, list[str]] = defaultdict(list)
    for call in observation.calls:
        key = (call.label, call.resets)  # after torch._dynamo.reset(), compiling again is expected
        if call.recompiles and call.signature:
            if call.exact_signature in exact_seen[key]:
                return (f"{call.label} recompiled on a call with the same inputs and state as an earlier call "
                        f"(guard failure: {call.recompiles[0].reason})")
            if call.signature in meta_seen[key]:
                for recompile in call.recompiles:
                    meta_repeats[recompile.code].append(recompile.reason)
        exact_seen[key].add(call.exact_signature)
        meta_seen[key].add(call.signature)
    for code, reasons in meta_repeats.items():
        if len(reasons) >= STORM_META_REPEATS:
            return (f"{code} recompiled {len(reasons)} times on calls with the same input shapes and state "
                    f"(first guard failure: {reasons[0]})")
    return ""


def _failing_call(observation: Observation) -> CallRecord | None:
    return next((c for c in reversed(observation.calls) if c.exception is not None), None)


def _fullgraph(observation: Observation, label: str | None) -> bool:
    if label is None:
        return any(c.fullgraph for c in observation.compiled)
    return any(c.fullgraph for c in observation.compiled if c.label == label)
