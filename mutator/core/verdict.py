"""What the oracle concludes about one program: an ordered enum, never a string."""

from __future__ import annotations

from enum import IntEnum


class Verdict(IntEnum):
    """The outcome of judging a program's compiled run against its eager run.

    The order is the taxonomy's (see mutator/llm/taxonomy.md, "Symptoms"): first the outcomes that are
    not reported, then the bug kinds, then the low-severity and out-of-scope findings.
    """

    PASS = 0
    INVALID = 1  # eager itself fails: a candidate for repair, never reported
    UNSTABLE = 2  # eager runs disagree, or a divergence does not reproduce
    MISMATCH = 3  # values, dtypes, shapes, mutated arguments, side effects, stdout
    CRASH = 4  # an exception eager did not raise, an internal Dynamo error, a signal
    HANG = 5  # the compiled run timed out where eager finished
    RECOMPILE_STORM = 6  # recompiles on calls whose whole state repeats exactly
    FULLGRAPH_BREAK = 7  # Unsupported where the program asked for no graph breaks: low severity
    SPECIALIZATION = 8  # recompiles that documented specialisation explains: low severity
    BACKEND_FAILURE = 9  # BackendCompilerFailed: a backend bug, not the frontend's

    @property
    def is_finding(self) -> bool:
        """True for every verdict that is filed as a finding (MISMATCH and after)."""
        return self >= Verdict.MISMATCH

    @property
    def is_frontend_bug(self) -> bool:
        """True for the bug kinds the frontend is blamed for."""
        return Verdict.MISMATCH <= self <= Verdict.RECOMPILE_STORM
