"""The verdicts: their order and which are findings and frontend bugs."""

from mutator.core.verdict import Verdict


def test_verdict_order_and_kinds():
    assert list(Verdict) == sorted(Verdict)
    assert not Verdict.UNSTABLE.is_finding and Verdict.MISMATCH.is_finding
    assert Verdict.RECOMPILE_STORM.is_frontend_bug and not Verdict.BACKEND_FAILURE.is_frontend_bug
    assert Verdict.SPECIALIZATION.is_finding and not Verdict.SPECIALIZATION.is_frontend_bug
