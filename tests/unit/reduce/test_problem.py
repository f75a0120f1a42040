"""The reduction problem: candidates smaller in shortlex order, checked once, the first interesting
one of a batch winning, passes ordered by their yield."""

import libcst as cst

from mutator.reduce.passes import NamedPass
from mutator.reduce.problem import ReductionProblem, size_key, tidy, tree_digest


def test_candidates_must_be_smaller_in_shortlex_order_and_are_checked_once():
    asked: list[str] = []

    def interesting(sources):
        asked.extend(sources)
        return [False] * len(sources)

    def proposals(module):
        for text in ("y = 1\n", "x = 2\n", "x = 1\n", "x=1\n", "x = 1  # longer\n", "x = 10\n"):
            yield cst.parse_module(text)

    problem = ReductionProblem("x = 3\n", interesting, batch=2)
    assert problem.run([NamedPass("proposals", proposals)]) == "x = 3\n"
    assert asked == ["x = 2\n", "x = 1\n"]  # not larger, not the same tree again (x=1)
    assert size_key("x = 1\n") < size_key("x = 3\n") < size_key("x = 10\n")
    assert problem.stats.cache_hits == 1


def test_the_first_interesting_candidate_of_a_batch_wins():
    def interesting(sources):
        return ["b" in s or "c" in s for s in sources]

    def proposals(module):
        if module.code == "abcd = 1\n":
            yield from (cst.parse_module(t) for t in ("a = 1\n", "b = 1\n", "c = 1\n"))

    problem = ReductionProblem("abcd = 1\n", interesting, batch=3)
    assert problem.run([NamedPass("proposals", proposals)]) == "b = 1\n"


def test_tidy_never_changes_a_string_literal():
    source = 'x = """a\n\n\n\nb"""\n'
    problem = ReductionProblem(source, lambda sources: [False] * len(sources))
    assert problem.run([]) == source
    assert tidy("class A:\n\n    x = 1\n\n\n\n\ny = 2") == "class A:\n    x = 1\n\n\ny = 2\n"
    assert tree_digest("x = 1  # c\n") == tree_digest("x = 1\n")


def test_a_pass_that_fails_ends_without_ending_the_reduction():
    def broken(module):
        yield cst.parse_module("x = 1\n")
        raise RuntimeError("a bug of ours")

    def shorter(module):
        if module.code != "x=1\n":
            yield cst.parse_module("x=1\n")

    problem = ReductionProblem("x = 300\n", lambda sources: [True] * len(sources))
    assert problem.run([NamedPass("broken", broken), NamedPass("shorter", shorter)]) == "x=1\n"
    assert problem.stats.pass_errors and "a bug of ours" in problem.stats.pass_errors[0]


def test_rounds_after_the_first_run_the_passes_by_their_yield():
    order = []

    def barren(module):
        order.append((problem.stats.rounds, "barren"))
        yield from (cst.parse_module(f"x = {i}\n") for i in range(3))  # never interesting

    def fruitful(module):
        order.append((problem.stats.rounds, "fruitful"))
        if len(module.code) > len("x=1\n"):
            yield cst.parse_module(module.code.replace(" ", "", 1))

    problem = ReductionProblem("x = 12345\n", lambda sources: ["=" in s and " " not in s[3:] for s in sources])
    problem.run([NamedPass("barren", barren), NamedPass("fruitful", fruitful)])
    first = {}
    for number, name in order:
        first.setdefault(number, name)
    assert first[1] == "barren" and first[2] == "fruitful" and problem.current == "x=12345\n"


def test_a_candidate_left_unjudged_is_not_cached_nor_counted():
    asked: list[list[str]] = []

    def interesting(sources):
        asked.append(sources)
        return [True if s == "b = 1\n" else None if "b = 1\n" in sources else False for s in sources]

    def proposals(module):
        if module.code == "abcd = 1\n":
            yield from (cst.parse_module(t) for t in ("b = 1\n", "a = 1\n"))
        elif module.code == "b = 1\n":
            yield cst.parse_module("a = 1\n")

    problem = ReductionProblem("abcd = 1\n", interesting, batch=2)
    assert problem.run([NamedPass("proposals", proposals)]) == "b = 1\n"
    assert asked == [["b = 1\n", "a = 1\n"], ["a = 1\n"]]  # unjudged the first time, so checked again
    assert problem.stats.checks == 2
