"""LibCST-style operator tests: a program before, the program after, for a given RNG seed."""

from __future__ import annotations

import random
import textwrap

from mutator.mutation.context import MutationContext
from mutator.mutation.operator import Declined, Mutant, Operator, apply
from mutator.core.program import Program

DEFAULT_INPUTS = "\n\ndef inputs():\n    return ()\n"


def _program(source: str, name: str = "prog.py") -> Program:
    text = textwrap.dedent(source).strip() + "\n"
    if "def inputs" not in text and "torch.compile" not in text:
        text += DEFAULT_INPUTS
    return Program.from_source(text, name)


def rewrite(op: type[Operator], before: str, *, seed: int = 0, donor: str | None = None) -> Mutant | Declined:
    """`donor`: the second program a splice takes its part from (named donor.py)."""
    other = MutationContext.of(_program(donor, "donor.py")) if donor is not None else None
    return apply(op, MutationContext.of(_program(before)), random.Random(seed), donor=other)


def assert_rewrites(op: type[Operator], before: str, after: str, *, seed: int = 0, donor: str | None = None) -> Mutant:
    """`before` and `after` are dedented; a harness without inputs() gets `def inputs(): return ()`."""
    result = rewrite(op, before, seed=seed, donor=donor)
    assert isinstance(result, Mutant), f"{op.id} declined: {result.reason}"
    expected = _program(after).source
    assert result.program.source == expected, f"\n--- got ---\n{result.program.source}\n--- expected ---\n{expected}"
    assert [s.op for s in result.steps] == [op.id]
    return result


def assert_declines(op: type[Operator], before: str, reason: str, *, seed: int = 0, donor: str | None = None) -> None:
    result = rewrite(op, before, seed=seed, donor=donor)
    assert isinstance(result, Declined), f"{op.id} rewrote:\n{result.program.source}"
    assert reason in result.reason, result.reason
