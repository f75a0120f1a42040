from mutator.mutation.operators.iteration import (
    BuiltinSibling,
    ItertoolsRoute,
    IteratorAcrossGraphBreak,
    PartialConsume,
    ThroughGenerator,
)

from tests.unit.mutation.operators.helpers import assert_declines, assert_rewrites

LOOP = """
    import torch

    def fn(xs):
        total = 0
        for x in xs:
            total = total + x
        return total
"""


def test_through_generator_routes_a_loop_through_a_user_generator():
    after = """
        import torch


        def relay(items):
            it = iter(items)
            while True:
                try:
                    item = next(it)
                except StopIteration:
                    return
                yield item


        def fn(xs):
            total = 0
            for x in relay(xs):
                total = total + x
            return total
    """
    assert_rewrites(ThroughGenerator, LOOP, after, seed=1)


def test_through_generator_wraps_the_argument_of_sum():
    before = """
        import torch

        def fn(xs):
            return sum(xs)
    """
    after = """
        import torch

        def fn(xs):
            return sum((item for item in xs))
    """
    assert_rewrites(ThroughGenerator, before, after, seed=0)


def test_through_generator_declines_without_iteration():
    before = """
        import torch

        def fn(a, b):
            return max(a, b) + len(a)
    """
    assert_declines(ThroughGenerator, before, "no site for through_generator in the region")


def test_itertools_route_widens_the_loop_target():
    after = """
        import torch
        import itertools

        def fn(xs):
            total = 0
            for (x,) in itertools.zip_longest(xs):
                total = total + x
            return total
    """
    assert_rewrites(ItertoolsRoute, LOOP, after, seed=2)


def test_itertools_route_keeps_items_with_filterfalse():
    after = """
        import torch
        import itertools

        def fn(xs):
            total = 0
            for x in itertools.filterfalse(lambda item: False, xs):
                total = total + x
            return total
    """
    assert_rewrites(ItertoolsRoute, LOOP, after, seed=0)


def test_itertools_route_declines_on_min_of_two_values():
    before = """
        import torch

        def fn(a, b):
            return min(a, b)
    """
    assert_declines(ItertoolsRoute, before, "no site for itertools_route in the region")


def test_builtin_sibling_sums_with_reduce():
    before = """
        import torch

        def fn(xs):
            return sum(xs)
    """
    after = """
        import torch
        import functools
        import operator

        def fn(xs):
            return functools.reduce(operator.add, xs, 0)
    """
    assert_rewrites(BuiltinSibling, before, after, seed=1)


def test_builtin_sibling_enumerates_with_count():
    before = """
        import torch

        def fn(xs):
            out = 0
            for i, x in enumerate(xs, start=1):
                out = out + x * i
            return out
    """
    after = """
        import torch
        import itertools

        def fn(xs):
            out = 0
            for i, x in map(lambda index, item: (index, item), itertools.count(1), xs):
                out = out + x * i
            return out
    """
    assert_rewrites(BuiltinSibling, before, after, seed=0)


def test_builtin_sibling_declines_on_starred_calls():
    before = """
        import torch

        def fn(rows):
            return next(zip(*rows))
    """
    assert_declines(BuiltinSibling, before, "no site for builtin_sibling in the region")


def test_partial_consume_takes_the_head_with_next_and_a_sentinel():
    after = """
        import torch

        def fn(xs):
            total = 0
            it = iter(xs)
            missing = object()
            head = next(it, missing)
            head = () if head is missing else (head,)
            for x in [*head, *it]:
                total = total + x
            return total
    """
    assert_rewrites(PartialConsume, LOOP, after, seed=0)


def test_partial_consume_takes_the_head_with_islice():
    after = """
        import torch
        import itertools

        def fn(xs):
            total = 0
            it = iter(xs)
            head = list(itertools.islice(it, 3))
            for x in [*head, *it]:
                total = total + x
            return total
    """
    assert_rewrites(PartialConsume, LOOP, after, seed=3)


def test_partial_consume_declines_without_loops():
    before = """
        import torch

        def fn(xs):
            return [x for x in xs]
    """
    assert_declines(PartialConsume, before, "no site for partial_consume in the region")


def test_iterator_across_graph_break_resumes_after_the_break():
    after = """
        import torch
        import itertools

        def fn(xs):
            total = 0
            it = iter(xs)
            head = [item_2 for _, item_2 in zip(range(1), it)]
            torch._dynamo.graph_break()
            for x in itertools.chain(head, it):
                total = total + x
            return total
    """
    assert_rewrites(IteratorAcrossGraphBreak, LOOP, after, seed=2)


def test_iterator_across_graph_break_only_in_the_region():
    before = """
        import torch

        def unused(xs):
            for x in xs:
                print(x)

        def fn(x):
            return x
    """
    assert_declines(IteratorAcrossGraphBreak, before, "no site for iterator_across_graph_break in the region")
