"""Snapshots are deterministic: the same state gives the same tree in every run.

A property over every shipped seed and every foreign-style program in tests/foreign:
two eager runs (on different workers, with different heap layouts) may differ only in
leaf values that differ by nature (an `id()`, a thread id, a clock), never in the shape
of what was observed: types, keys of the program's own structures, lengths, attribute
sets, aliasing, which object a second path refers to. The seeds, which are
deterministic by rule, must not differ at all.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mutator.judge.compare import compare_observations
from mutator.core.observation import Mode, Outcome
from mutator.core.program import load_programs

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
LEAF_ASPECTS = {"value", "text", "keys"}


def _ended(pool, program, future):
    """An eager run that ended as the program ends. A run the runtime lost, or one a signal
    or the clock stopped (a loaded machine), is not the program's observation: it runs once
    more, as the checker's confirmation would run it, and a second such end fails the test."""
    result = future.result()
    if result.outcome in (Outcome.LOST, Outcome.SIGNALLED, Outcome.TIMEOUT):
        result = pool.submit(program, Mode.EAGER).result()
    assert result.outcome not in (Outcome.LOST, Outcome.SIGNALLED, Outcome.TIMEOUT), \
        f"{program.name}: {result.outcome.value} twice: {result.detail}\n{result.stderr_tail[-2000:]}"
    return result


def _eager_twice(pool, program):
    first, second = pool.submit(program, Mode.EAGER), pool.submit(program, Mode.EAGER)
    return _ended(pool, program, first), _ended(pool, program, second)


def _differences(pool, paths):
    programs, errors = load_programs(paths)
    assert errors == []
    with ThreadPoolExecutor(max_workers=4) as executor:
        runs = list(executor.map(lambda p: _eager_twice(pool, p), programs))
    return {p.name: compare_observations(a.observation, b.observation, limit=4096)
            for p, (a, b) in zip(programs, runs)}


def test_two_eager_runs_of_every_seed_observe_the_same_trees(pool):
    differences = _differences(pool, [ROOT / "seeds"])
    assert {name: [str(d) for d in found] for name, found in differences.items() if found} == {}


def test_foreign_programs_differ_between_eager_runs_only_in_leaf_values(pool):
    differences = _differences(pool, [ROOT / "tests" / "foreign"])
    structural = {name: [f"{d.aspect}: {d}" for d in found if d.aspect not in LEAF_ASPECTS]
                  for name, found in differences.items()}
    assert {name: found for name, found in structural.items() if found} == {}
    assert any(differences.values()), "some foreign programs keep run-specific values; they must show"
