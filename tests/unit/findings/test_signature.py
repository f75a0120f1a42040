"""Signatures: kinds, frames and observations kept apart."""

from __future__ import annotations

from dataclasses import replace

from mutator.core.observation import Outcome
from mutator.core.verdict import Verdict
from mutator.findings.signature import Signature
from mutator.judge.compare import Divergence

from tests.helpers import compiled_run, exc
from tests.unit.findings.helpers import judged


def test_signatures_separate_kinds_frames_and_observations():
    in_guards = exc("AssertionError", dynamo=True)
    crash = Signature.of(judged(Verdict.CRASH, exception=in_guards))
    assert crash == Signature("CRASH", "AssertionError", "torch/_dynamo/symbolic_convert.py:step")
    gb = exc("torch._dynamo.exc.Unsupported", gb_type="Call to `torch._dynamo.graph_break()`")
    assert Signature.of(judged(Verdict.FULLGRAPH_BREAK, exception=gb)).location.startswith("Call to")
    values = Divergence("result", "call 1", "value", "d", True, "Tensor")
    text = Divergence("result", "call 1", "value", "d", False, "str")
    assert Signature.of(judged(Verdict.MISMATCH, divergence=values)) != \
        Signature.of(judged(Verdict.MISMATCH, divergence=text))
    segv = compiled_run(outcome=Outcome.SIGNALLED)
    segv = replace(segv, signal=11)
    assert Signature.of(judged(Verdict.CRASH, compiled=segv)).exception == "signal 11"
    slug = crash.slug()
    assert slug.startswith("crash-AssertionError-symbolic_convert.py-step-") and "/" not in slug


def test_a_directory_name_is_what_it_was_before_signatures_said_what_configuration_they_need():
    # as a campaign of the release before `needs` named this signature's directory
    plain = Signature("CRASH", "IndexError", "torch/_dynamo/symbolic_convert.py:pop")
    assert plain.slug() == "crash-IndexError-symbolic_convert.py-pop-74c5d470"
    needing = replace(plain, needs="graph-dedup")
    assert needing.slug().startswith("crash-IndexError-symbolic_convert.py-pop-needs-graph-dedup-")
    assert needing.slug() != plain.slug()
    split = replace(needing, part="split1")
    assert split.as_run() == plain and split.base() == needing and split.plain().base() == plain


def test_a_signature_told_apart_from_known_bugs_is_filed_apart_but_runs_as_the_plain_one():
    plain = Signature("MISMATCH", observation="result:value:Tensor")
    apart = replace(plain, unlike="0a1b2c3d")
    assert apart.as_run() == plain and apart.base() == apart and "unlike" not in plain.as_json()
    assert Signature(**apart.as_json()) == apart
    assert apart.slug().startswith("mismatch-result-value-Tensor-unlike-known-") and apart.slug() != plain.slug()
    assert replace(plain, needs="graph-dedup").slug() == replace(plain, needs="graph-dedup", unlike="").slug()
