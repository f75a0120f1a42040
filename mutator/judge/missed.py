"""Divergences a test's own checks pass over: the test ran to its end in both runs, every
check of its own passing, yet the comparison of the two runs found them different (the
order of a dict's keys, the type of a container, the identity of a result). PyTorch's own
suite passes such tests; they are findings all the same, and say which comparison saw them.
"""

from __future__ import annotations

from dataclasses import dataclass

from mutator.core.verdict import Verdict
from mutator.judge.check import CheckResult
from mutator.judge.compare import Divergence

_ASPECTS = {"value": "values", "type": "type", "alias": "identity (aliasing)", "length": "length", "keys": "keys",
            "missing": "presence", "text": "printed text", "requires_grad": "requires_grad", "grad": "gradient",
            "dtype": "dtype", "shape": "shape", "exception": "exception"}
_OBSERVATIONS = {"result": "a compiled call's result", "args": "a compiled call's arguments after the call",
                 "kwargs": "a compiled call's keyword arguments after the call", "globals": "the program's globals",
                 "returned": "what drive() returned", "state": "state()", "stdout": "what the program printed"}


@dataclass(frozen=True, slots=True)
class MissedDivergence:
    """The divergence, and the comparison that saw it in words ("order of keys of a compiled
    call's result")."""

    divergence: Divergence

    @property
    def comparison(self) -> str:
        d = self.divergence
        aspect = "order of keys" if d.aspect == "keys" and d.detail.startswith("same keys in a different order") \
            else _ASPECTS.get(d.aspect, d.aspect)
        return f"{aspect} of {_OBSERVATIONS.get(d.observation, d.observation)}"

    def as_json(self) -> dict[str, str]:
        return dict(comparison=self.comparison, where=self.divergence.where, detail=self.divergence.detail)


def missed_sentence(missed: dict[str, str]) -> str:
    """What a finding's README and report.md say of a divergence its program's tests pass
    over (`MissedDivergence.as_json()`): that the tests do not see it, and what does."""
    return (f"The program's own tests pass in both runs: their assertions do not see this divergence "
            f"(an `assertEqual` that ignores it); the comparison of the {missed['comparison']} does "
            f"({missed['where']}). Which side is right is CPython's: the eager run is the reference.")


def missed_by_tests(result: CheckResult) -> MissedDivergence | None:
    """`missed_by_own_checks` for a program that ran tests of its own (a harvested test, a
    unittest or pytest file): what its tests passed over. None for a program without tests,
    whose only "checks" are that it ran to its end."""
    if not (result.eager.observation.tests and result.compiled.observation.tests):
        return None
    return missed_by_own_checks(result)


def missed_by_own_checks(result: CheckResult) -> MissedDivergence | None:
    """The divergence behind a MISMATCH whose runs both ended without an exception, every test of
    the program's own passing: what the program's checks did not see."""
    divergence = result.judgement.divergence
    if result.verdict is not Verdict.MISMATCH or divergence is None:
        return None
    runs = (result.eager.observation, result.compiled.observation)
    if any(run.uncaught is not None or run.exit_code not in (None, 0) for run in runs):
        return None
    if any(test.status != "pass" for run in runs for test in run.tests):
        return None
    return MissedDivergence(divergence)
