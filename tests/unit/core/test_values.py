"""Observed values: the structure digest."""

from mutator.core.values import SeqValue, structure_digest

from tests.helpers import tensor


def test_structure_digest_separates_metadata_from_values():
    a, b = tensor([1.0, 2.0]), tensor([3.0, 4.0])
    assert structure_digest(a, with_values=False) == structure_digest(b, with_values=False)
    assert structure_digest(a, with_values=True) != structure_digest(b, with_values=True)
    assert structure_digest(SeqValue("list", (1,)), with_values=False) != structure_digest(SeqValue("tuple", (1,)), with_values=False)
