"""Canonical forms: renamed identifiers and other literals are one form, another structure is another."""

from __future__ import annotations

from mutator.findings.canonical import canonical_digest, canonical_form

from tests.unit.findings.helpers import ONE, TWO


def test_renamed_identifiers_and_other_literals_have_the_same_canonical_form():
    assert canonical_digest(ONE) == canonical_digest(TWO)
    assert "v0" in canonical_form(ONE) and "keys" in canonical_form(ONE) and "torch.ones" in canonical_form(ONE)


def test_another_method_or_structure_is_another_form():
    assert canonical_digest(ONE) != canonical_digest(ONE.replace("def keys", "def items"))
    assert canonical_digest(ONE) != canonical_digest(ONE.replace("x + len", "x * len"))
