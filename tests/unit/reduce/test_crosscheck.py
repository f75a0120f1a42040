"""What the reduced program needs, checked in the original: did the reduction stay on its bug?"""

from __future__ import annotations

import textwrap

from mutator.reduce.crosscheck import ABSENT
from mutator.reduce.matters import PASSES, STILL_FAILS, Matters, Row


class MarkerRunner:
    """Compiled runs return 2 instead of 1 while the program holds one of `causes`."""

    def __init__(self, *causes: str) -> None:
        self.causes = causes

    def submit(self, program, mode, config=None, *, avoid=None):
        from concurrent.futures import Future

        from mutator.core.observation import Mode
        from tests.helpers import call, compiled_run, run

        future = Future()
        buggy = any(cause in program.source for cause in self.causes)
        future.set_result(compiled_run(calls=[call(result=2 if buggy else 1)]) if mode is Mode.COMPILED
                          else run(mode, calls=[call(result=1)]))
        return future


ORIGINAL = textwrap.dedent('''\
    import torch
    LOG = []
    def fn(x):
        LOG.append(len(LOG))
        torch._dynamo.graph_break()
        return x
    def inputs():
        return 1
    ''')


def _against(runner: MarkerRunner, needed: Row) -> list:
    from mutator.core.program import Program
    from mutator.reduce.crosscheck import against_original, describe
    from mutator.reduce.matters import Prober
    from mutator.reduce.reducer import Reducer

    original = Reducer(runner, workers=1).target(Program.from_source(ORIGINAL, "p.py"))
    matters = Matters(rows=[needed, Row("a generator expression", "with a list comprehension instead", STILL_FAILS)])
    agreements = matters.original = against_original(Prober(runner), original, matters)
    # an eager and a compiled run for each construct the original has, twice for a pass
    assert matters.checks == sum(2 + 2 * (a.outcome == PASSES) for a in agreements if a.outcome != ABSENT)
    return [(a.construct, a.outcome) for a in agreements], describe(agreements), matters.drifted


def test_a_construct_the_reduced_program_needs_is_needed_by_the_original_too():
    needed = Row("a graph break", "without the graph break", PASSES, removal=True)
    assert _against(MarkerRunner("graph_break"), needed) == ([("a graph break", PASSES)], "", [])


def test_a_reduction_whose_bug_the_original_does_not_need_says_it_slid_to_another():
    # the original fails without its graph break (LOG.append is its bug); the reduced program
    # lost LOG.append and fails only because of the break
    needed = Row("a graph break", "without the graph break", PASSES, removal=True)
    agreements, sentence, drifted = _against(MarkerRunner("graph_break", "LOG.append"), needed)
    assert agreements == [("a graph break", STILL_FAILS)] and drifted == ["a graph break"]
    assert "another bug" in sentence and "still fails without the graph break" in sentence


def test_a_construct_the_original_lacks_is_no_evidence():
    needed = Row("`@functools.wraps`", "without `@functools.wraps`", PASSES, removal=True)
    agreements, sentence, drifted = _against(MarkerRunner("graph_break"), needed)
    assert agreements == [("`@functools.wraps`", ABSENT)] and not drifted and not sentence
