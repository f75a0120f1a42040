"""The reduced program without what its analysis proved unneeded, and the analysis adjusted
to it; against a scripted judge: no processes, no torch."""

from __future__ import annotations

import textwrap

from mutator.reduce.constructs import constructs, probes
from mutator.reduce.matters import PASSES, STILL_FAILS, Matters, Row
from mutator.reduce.unneeded import merged, take_out, takeable

PADDED = textwrap.dedent('''\
    import functools
    import torch


    class Tags(set):
        pass


    def logged(g):
        @functools.wraps(g)
        def inner(*a):
            return g(*a)
        return inner


    @logged
    def fn(x):
        evens = Tags(i for i in range(6) if i % 2 == 0)
        torch._dynamo.graph_break()
        return x + len(evens) + len(getattr(x, "shape"))


    def inputs():
        return torch.ones(3)
    ''')

# what the analysis found, by change: the bug needs the subclass and the break, nothing else
OUTCOMES = {
    "without the graph break": PASSES,
    "as a plain `set` (`Tags = set`)": PASSES,
    "as a `frozenset` subclass": STILL_FAILS,
    "with a list comprehension instead": STILL_FAILS,
    "without the `if` filter": STILL_FAILS,
    "without `@logged`": STILL_FAILS,
    "without `@functools.wraps`": STILL_FAILS,
    "with `.shape` instead of `getattr`": STILL_FAILS,
}


def analysis(source: str = PADDED) -> Matters:
    rows = [Row(p.construct, p.change, OUTCOMES.get(p.change, PASSES), removal=p.removal, simplifies=p.simplifies,
                source=p.source) for p in probes(source)]
    return Matters(rows=rows, removed=["`torch.func.vmap`"])


class Judge:
    """Still fails unless the program lost something `needs` names; records what it was asked."""

    def __init__(self, *needs: str) -> None:
        self.needs = needs
        self.asked: list[str] = []

    def __call__(self, sources: list[str]) -> list[tuple[str, str]]:
        self.asked += sources
        return [(STILL_FAILS, "") if all(n in s for n in self.needs) else (PASSES, "") for s in sources]


def test_edits_of_one_program_compose_unless_they_change_the_same_characters():
    base = "a = f(x for x in y if x)\nb = g(1)\n"
    one, two = base.replace(" if x", ""), base.replace("g(1)", "g()")
    assert merged(base, [one, two]) == "a = f(x for x in y)\nb = g()\n"
    assert merged(base, [one]) == one and merged(base, []) == base
    assert merged(base, [one, base.replace("y if x", "z")]) is None  # both change " if x"


def test_what_still_fails_and_simplifies_is_taken_all_together_in_one_run():
    matters = analysis()
    assert {row.change for row in takeable(matters)} == {
        "without the `if` filter", "without `@logged`", "without `@functools.wraps`",
        "with `.shape` instead of `getattr`"}  # not a neighbour that is no simpler, nor what is needed
    judge = Judge("Tags(set)", "graph_break")
    taken = take_out(PADDED, matters, judge, admissible=lambda s: True)
    assert len(judge.asked) == 1  # the composed program, once
    assert " if " not in taken.source and "@" not in taken.source and "getattr" not in taken.source
    assert "class Tags(set)" in taken.source and "torch._dynamo.graph_break()" in taken.source
    compile(taken.source, "<taken>", "exec")
    assert len(taken.matters.taken) == 4


def test_when_together_they_no_longer_fail_each_is_taken_greedily():
    # the bug needs @logged after all: together they pass, then the first (`@functools.wraps`)
    # is taken (the analysis judged it alone), @logged refused, the other two taken
    judge = Judge("Tags(set)", "graph_break", "@logged")
    taken = take_out(PADDED, analysis(), judge, admissible=lambda s: True)
    assert len(judge.asked) == 1 + 3  # together, then each after the first
    assert " if " not in taken.source and "@logged" in taken.source and "@functools.wraps" not in taken.source
    refused = [row for row in taken.matters.rows if row.change == "without `@logged`"]
    assert [row.outcome for row in refused] == [PASSES] and "taken before it" in refused[0].detail
    assert "`@logged`" in taken.matters.needed


def test_the_analysis_then_describes_the_program_it_is_of():
    taken = take_out(PADDED, analysis(), Judge("Tags(set)", "graph_break"), admissible=lambda s: True)
    data = taken.matters.as_json()
    left = set(constructs(taken.source))
    assert not left & set(data["not_needed"] + data["removed"]), data  # nothing listed unneeded is left
    assert {"the generator's filter", "`@logged`", "`@functools.wraps`", "`getattr(..., 'shape')`",
            "`torch.func.vmap`"} <= set(data["removed"])
    assert data["needed"] == ["a graph break", "a `set` subclass"]
    assert all(row["construct"] in left for row in data["rows"])
    assert "the generator's filter: without the `if` filter" in data["taken"]


def test_nothing_to_take_costs_no_run_and_a_stop_takes_nothing():
    source = "import torch\ndef fn(x):\n    torch._dynamo.graph_break()\n    return x\n"
    judge = Judge()
    assert take_out(source, analysis(source), judge, admissible=lambda s: True).source == source
    assert judge.asked == []
    taken = take_out(PADDED, analysis(), Judge("nothing of the kind"), admissible=lambda s: True,
                     stop=lambda: True)
    assert taken.source == PADDED
