"""Printed text as two runs' outputs are compared: autograd node names and set order left out."""

import pytest

from mutator.core.printed import comparable, with_sets_sorted


@pytest.mark.parametrize("text, expected", [
    ("{'two', 'one'}", "{'one', 'two'}"),
    ("frozenset({3, 1, 2})", "frozenset({1, 2, 3})"),
    ("MySet({'b', 'a'}) and {2, 1}", "MySet({'a', 'b'}) and {1, 2}"),
    ("{'k': {2, 1}, 'j': 0}", "{'k': {1, 2}, 'j': 0}"),  # a dict's order stays, a set in it is sorted
    ("{(2, 1), [4, 3]}", "{(2, 1), [4, 3]}"),  # a tuple's and a list's order stay
    ("{'a,}', 'b'}", "{'a,}', 'b'}"),  # a comma and a brace inside a string are text
    ("{'z', \"y'\"}", "{\"y'\", 'z'}"),
])
def test_the_elements_of_a_printed_set_are_sorted(text, expected):
    assert with_sets_sorted(text) == expected


@pytest.mark.parametrize("text", [
    "{1, 2",  # unbalanced
    "it's {2, 1}",  # an apostrophe that opens no string: left as it is, not guessed
    "tensor([[1, 2], [3, 4]])",
    "{1}",
    "{'a': 1, 'b': 2}",
    "",
])
def test_text_that_holds_no_set_or_cannot_be_read_is_left_as_it_is(text):
    assert with_sets_sorted(text) == text


def test_comparable_blanks_node_names_and_sorts_sets():
    assert comparable("{'b', 'a'} tensor([1.], grad_fn=<AddBackward0>)") == \
        comparable("{'a', 'b'} tensor([1.], grad_fn=<CompiledFunctionBackward>)")
