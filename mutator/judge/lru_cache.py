"""A divergence Dynamo documents: it traces through `functools.lru_cache` wrappers.

Dynamo ignores the cache of a function wrapped by `functools.lru_cache` (or `functools.cache`)
that the code it traces calls: it traces the function itself and warns that it does ("Dynamo
ignores the cache wrapper and directly traces the wrapped function"). The compiled program
runs the body where eager hit the cache, and the cache's statistics (`cache_info()`) never
see those calls, so what the body touches (a counter, a list of calls) and the statistics
differ from eager by design.

Where the compiled run recorded that Dynamo did so (`CallRecord.lru_cache_traced`) and a
mismatch is being confirmed, the checker runs the program eagerly once more with the
program's cached functions called through, their cache untouched, inside every compiled
call, as Dynamo treats them (`RunConfig.lru_cache_calls_through`, `runtime.lru_caches`).
A compiled run that agrees with that run, both times it ran, differs from eager only as
documented: no bug. One that differs from it too (a value the cache has nothing to do with)
is still the mismatch it was.
"""

from __future__ import annotations

from mutator.core.observation import ExecResult, Outcome
from mutator.core.program import Program
from mutator.core.verdict import Verdict
from mutator.judge.oracle import Judgement, Oracle, program_stop


def traced_through(run: ExecResult) -> tuple[str, ...]:
    """Where Dynamo traced through an lru_cache wrapper in `run` ("prog.py:14"), in order."""
    return tuple(dict.fromkeys(site for call in run.observation.calls for site in call.lru_cache_traced))


def needs_calling_through(judgement: Judgement, compiled: ExecResult) -> bool:
    """Whether confirming `judgement` takes an eager run that calls lru_caches through."""
    return judgement.verdict is Verdict.MISMATCH and bool(traced_through(compiled))


def explained(oracle: Oracle, judgement: Judgement, through: ExecResult, compiled: tuple[ExecResult, ...], *,
              reference: ExecResult | None, mask: frozenset[str], program: Program) -> Judgement:
    """`judgement` (of eager against the `compiled` runs), or what it is when an eager run that
    calls the program's lru_caches through inside compiled calls (`through`) explains it."""
    if judgement.verdict is not Verdict.MISMATCH or through.outcome is Outcome.LOST:
        return judgement
    documented = (f"Dynamo traced through functools.lru_cache at {', '.join(traced_through(compiled[0]))}, "
                  "ignoring the cache as it documents, and")
    uncached = "an eager run whose cached functions run uncached inside compiled calls"
    verdict = Verdict.PASS
    for run in compiled:
        again = oracle.judge(through, run, reference, mask=mask, program=program)
        if again.verdict is Verdict.INVALID and _same_own_check(through, run, program):
            verdict = Verdict.INVALID  # its own check of what the cache does fails there too
        elif again.verdict is not Verdict.PASS:
            return judgement
    if verdict is Verdict.INVALID:
        stop = program_stop(compiled[0])
        assert stop is not None
        return Judgement(Verdict.INVALID, f"the program's own check expects otherwise than documented: {documented} "
                                          f"{uncached} fails the same check: {stop.describe(program.name)}",
                         exception=stop.exception, masked=judgement.masked)
    return Judgement(Verdict.PASS, f"documented: {documented} the compiled run matches {uncached} (against plain "
                                   f"eager: {judgement.reason})", masked=judgement.masked)


def _same_own_check(through: ExecResult, compiled: ExecResult, program: Program) -> bool:
    """Both runs stopped at the same check of the program's own, outside any compiled call."""
    mine, theirs = program_stop(through), program_stop(compiled)
    return mine is not None and theirs is not None and mine.same_as(theirs, program.name)
