"""The prompts of `mutate generate`, built from the taxonomy (no torch)."""

from __future__ import annotations

import re

import pytest

from mutator.llm import taxonomy
from mutator.llm.prompts import SYSTEM, generate_messages

from tests.unit.llm.helpers import CODES


def test_the_system_message_defines_a_harness_program():
    [system, user] = generate_messages(taxonomy.get("E2"), index=0)
    assert system == {"role": "system", "content": SYSTEM}
    for must in ("`fn`", "`inputs()`", "drive(f)", "state()", "COMPILE_KWARGS", "Do not call torch.compile",
                 "CPU only", "no files, network", "seeds them", "```python"):
        assert must in SYSTEM, must
    example = re.search(r"```python\n(.*?)```", SYSTEM, re.S).group(1)
    compile(example, "example", "exec")  # the example is a complete module
    assert "def inputs():" in example and "torch.compile" not in example
    assert user["role"] == "user"


@pytest.mark.parametrize("code", CODES)
def test_the_request_carries_the_class_definition(code):
    cls = taxonomy.get(code)
    user = generate_messages(cls, index=3)[1]["content"]
    assert cls.text in user and f"{code}: {cls.title}" in user and cls.category in user
    assert "SIBLING" not in user and "already have" not in user
    assert "one ```python block" in user


def test_n_indexes_are_n_different_questions():
    cls = taxonomy.get("A3")
    asked = [generate_messages(cls, index=i)[1]["content"] for i in range(24)]
    assert len(set(asked)) == 24
    assert "request 4 of a series" in asked[3]
    assert generate_messages(cls, index=5) == generate_messages(cls, index=5)  # the same question is cacheable


def test_siblings_ask_for_the_next_construct_not_the_same_one():
    known = 'class V:\n    def __add__(self, other):\n        return 1\n'
    user = generate_messages(taxonomy.get("A3"), siblings_of=[known, "x = 2"], index=0)[1]["content"]
    assert f"```python\n{known}```" in user and "```python\nx = 2\n```" in user
    assert "SIBLING" in user and "Do not write their construct again" in user
    assert "`__add__` -> `__mul__`" in user and "next container type" in user and "next context manager" in user
    assert "third of the list" not in user  # the findings choose the trigger shape; the harness shape still varies
    assert "harness shape: a plain function" in user


def test_avoid_lists_what_we_already_have():
    user = generate_messages(taxonomy.get("E2"), avoid=["a try/finally in a loop", "raise from"], index=1)[1]["content"]
    assert "- a try/finally in a loop\n- raise from" in user and "different from the ones listed" in user
