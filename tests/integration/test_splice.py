"""Splices of two shipped seeds, built by a real worker from a recipe that carries the donor,
and run there eagerly and compiled: most of them must still be programs."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from mutator.core.observation import Mode, Outcome
from mutator.core.program import load_programs
from mutator.judge.check import CheckTask
from mutator.mutation.mutator import Mutator
from mutator.mutation.registry import all_operators

pytestmark = pytest.mark.integration

SEEDS = Path(__file__).resolve().parents[2] / "seeds"
SPLICES = 40
MAX_PAIRS = 400  # random pairs tried to make SPLICES splices (one in two or three pairs makes one)


def test_most_splices_of_random_seed_pairs_run_eagerly_in_a_real_worker(pool):
    programs, errors = load_programs([SEEDS])
    assert not errors
    mutator = Mutator([op for op in all_operators() if op.NEEDS_DONOR], max_stack=1)  # splices only
    rng = random.Random(24)
    replies, pairs = [], 0
    while len(replies) < SPLICES and pairs < MAX_PAIRS:
        batch = []
        for _ in range(2 * (SPLICES - len(replies))):
            recipient, donor = rng.sample(programs, 2)
            recipe = mutator.plan(rng, donor=donor)
            assert recipe.donor is donor  # the worker has only the task: the donor travels in it
            batch.append(pool.submit_check(CheckTask(recipient, recipe=recipe, name="spliced.py")))
        pairs += len(batch)
        replies += [r for r in (f.result() for f in batch) if r.mutant is not None]
    replies = replies[:SPLICES]
    assert len(replies) == SPLICES, f"only {len(replies)} splices from {pairs} seed pairs"
    kinds, valid = set(), 0
    for reply in replies:
        assert reply.result is not None and len(reply.mutant.steps) == 1
        kinds.add(reply.mutant.steps[0].op)
        assert "# spliced from " in reply.result.program.source
        eager, compiled = reply.result.runs
        assert (eager.mode, compiled.mode) == (Mode.EAGER, Mode.COMPILED)
        valid += eager.outcome is Outcome.COMPLETED
    print(f"{valid} of {SPLICES} splices from {pairs} seed pairs run eagerly; kinds: {sorted(kinds)}")
    assert len(kinds) >= 3, kinds
    assert valid > SPLICES // 2, f"{valid} of {SPLICES} splices run eagerly"
