"""Returned generators and builtin iterators (runtime.iterators): consumed at the call, bounded,
replayed to the program as they would have run, snapshotted by what they yield."""

import itertools
from collections import namedtuple

import pytest
import torch

from mutator.judge.compare import compare_observations
from mutator.core.observation import Observation
from mutator.runtime.iterators import MAX_CONSUMED, Consumed, consume, is_lazy_iterator, materialise
from mutator.runtime.snapshot import MAX_ITEMS, snapshot
from mutator.core.values import RefValue, SeqValue

from tests.helpers import call


def counting(log, n=None):
    for i in itertools.count() if n is None else range(n):
        log.append(i)
        yield i


def failing_after(k):
    yield from range(k)
    raise ValueError("boom")


def finishing(n, value="finished"):
    yield from range(n)
    return value


def drain(iterator):
    """The items and the StopIteration value, as a program that checks a generator's return does."""
    items = []
    while True:
        try:
            items.append(next(iterator))
        except StopIteration as stop:
            return items, stop.value


class Countdown:
    """A user-defined iterator: a program object, not a lazy value."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return self

    def __next__(self):
        if self.n == 0:
            raise StopIteration
        self.n -= 1
        return self.n


@pytest.mark.parametrize("value", [
    (i for i in range(2)), map(abs, [1]), filter(None, [1]), zip([1], [2]), enumerate([1]), reversed([1, 2]),
    iter([1]), iter((1,)), iter(range(2)), iter({1: 2}), iter("ab"), iter(lambda: 1, 1),
])
def test_generators_and_builtin_iterators_are_lazy(value):
    assert is_lazy_iterator(value)


@pytest.mark.parametrize("value", [[1], (1,), {1: 2}, range(2), "ab", Countdown(2), itertools.count(),
                                   type("MyMap", (map,), {})(abs, [1]), torch.ones(2)])
def test_containers_user_iterators_and_other_modules_iterators_are_not(value):
    assert not is_lazy_iterator(value)


def test_consuming_keeps_the_items_and_the_replay_yields_them_all():
    log = []
    consumed, replay = consume(counting(log, 5))
    assert consumed.items == (0, 1, 2, 3, 4) and consumed.error is None and not consumed.unfinished
    assert log == [0, 1, 2, 3, 4]  # the generator's work happened at the call
    assert list(replay) == [0, 1, 2, 3, 4] and list(replay) == []


def test_an_endless_generator_is_consumed_up_to_the_bound_and_the_replay_goes_on():
    log = []
    consumed, replay = consume(counting(log))
    assert len(consumed.items) == MAX_CONSUMED and consumed.unfinished and consumed.error is None
    assert len(log) == MAX_CONSUMED
    assert list(itertools.islice(replay, MAX_CONSUMED + 3)) == list(range(MAX_CONSUMED + 3))
    assert len(log) == MAX_CONSUMED + 3


def test_an_exception_while_consuming_is_recorded_and_raised_again_where_the_program_reaches_it():
    consumed, replay = consume(failing_after(2))
    assert consumed.items == (0, 1) and isinstance(consumed.error, ValueError) and not consumed.unfinished
    assert next(replay) == 0 and next(replay) == 1
    with pytest.raises(ValueError, match="boom") as raised:
        next(replay)
    assert raised.value is consumed.error
    assert list(replay) == []


def test_the_replay_returns_what_the_original_returned():
    consumed, replay = consume(finishing(2))
    assert consumed.items == (0, 1) and consumed.returned == "finished" and consumed.exhausted
    assert drain(replay) == ([0, 1], "finished")

    def delegating():
        return (yield from consume(finishing(1, value=[7]))[1])

    assert drain(delegating()) == ([0], [7])  # what `yield from` gives the program


def test_a_replay_cut_at_the_bound_returns_what_the_rest_returns():
    consumed, replay = consume(finishing(5, value="late"), limit=3)
    assert consumed.unfinished and not consumed.exhausted and consumed.returned is None
    assert drain(replay) == ([0, 1, 2, 3, 4], "late")


def test_an_iterator_that_raised_has_no_return_value_and_its_replay_raises_the_same():
    consumed, replay = consume(failing_after(1))
    assert not consumed.exhausted and consumed.returned is None
    assert next(replay) == 0
    with pytest.raises(ValueError) as raised:
        next(replay)
    assert raised.value is consumed.error


def test_the_replay_is_a_generator_that_closes_the_original():
    closed = []

    def endless():
        try:
            yield from itertools.count()
        finally:
            closed.append(True)

    _, replay = consume(endless(), limit=3)
    assert next(replay) == 0
    replay.close()
    assert closed == [True]


def test_a_returned_iterator_is_replaced_and_seen_as_consumed():
    result, seen = materialise(iter((1, 2)))
    assert list(result) == [1, 2] and isinstance(seen, Consumed) and seen.items == (1, 2)


def test_iterators_in_a_tuple_list_or_dict_result_are_replaced_containers_kept():
    t = torch.ones(2)
    result, seen = materialise(((i for i in range(2)), t))
    assert type(result) is tuple and result[1] is t and list(result[0]) == [0, 1]
    assert seen[0].items == (0, 1) and seen[1] is t

    listed = [iter([3]), 4]
    result, seen = materialise(listed)
    assert result is listed and list(listed[0]) == [3] and seen[0].items == (3,) and seen[1] == 4

    mapping = {"g": map(str, [5]), "n": 6}
    result, seen = materialise(mapping)
    assert result is mapping and list(mapping["g"]) == ["5"] and seen["g"].items == ("5",) and seen["n"] == 6


def test_a_namedtuple_result_keeps_its_type():
    Pair = namedtuple("Pair", "items total")
    result, seen = materialise(Pair(iter([1]), 1))
    assert type(result) is Pair and type(seen) is Pair and list(result.items) == [1] and seen.items.items == (1,)


def test_the_same_iterator_twice_is_consumed_once_and_replayed_as_one():
    g = (i for i in range(3))
    result, seen = materialise((g, g))
    assert result[0] is result[1] and seen[0] is seen[1]
    assert list(result[0]) == [0, 1, 2] and list(result[1]) == []


def test_results_without_lazy_iterators_are_left_as_they_are():
    for value in ((1, torch.ones(1)), [1], {"a": 1}, Countdown(2), [[iter([1])]]):
        result, seen = materialise(value)
        assert result is value and seen is value
    nested = [[iter([1])]]
    materialise(nested)
    assert list(nested[0][0]) == [1]  # deeper than one level: untouched


def _snap(value):
    return snapshot(materialise(value)[1])


def test_eager_generator_and_compiled_tuple_iterator_with_the_same_items_agree():
    def gen(x):
        for i in range(3):
            yield x + i

    x = torch.ones(2)
    eager = _snap((gen(x), x * 2))
    compiled = _snap((iter(tuple(gen(x))), x * 2))
    assert isinstance(eager.items[0], SeqValue) and eager.items[0].kind == "iterator" and len(eager.items[0].items) == 3 + 1  # and its end
    assert compare_observations(Observation(calls=(call(0, result=eager),)),
                                Observation(calls=(call(0, result=compiled),))) == []


def test_different_items_are_a_divergence_at_the_item():
    eager = _snap(iter([torch.ones(2), torch.ones(2)]))
    compiled = _snap(iter([torch.ones(2), torch.zeros(2)]))
    found = compare_observations(Observation(calls=(call(0, result=eager),)),
                                 Observation(calls=(call(0, result=compiled),)))
    assert [d.where for d in found] == ["call 1 (fn) result[1]"]


def test_how_an_iterator_ended_is_part_of_its_snapshot():
    raised = _snap(failing_after(1))
    assert raised.items[-1].kind == "raised" and raised.items[-1].text == "ValueError: boom"
    endless = _snap(counting([]))
    assert endless.items[-1].kind == "unfinished"
    assert len(endless.items) == MAX_ITEMS + 1 and endless.truncated == MAX_CONSUMED - MAX_ITEMS
    returned = _snap(finishing(1))
    assert returned.items[-1].kind == "returned" and returned.items[-1].fields == (("returned", "finished"),)
    found = compare_observations(Observation(calls=(call(0, result=raised),)),
                                 Observation(calls=(call(0, result=_snap(iter([0]))),)))
    assert [(d.where, d.aspect) for d in found] == [("call 1 (fn) result[1]", "type")]


def test_a_return_value_the_compiled_iterator_lost_is_a_divergence():
    def gen(x):
        yield x + 1
        return "finished"

    x = torch.ones(2)
    eager = _snap(gen(x))
    compiled = _snap(iter(tuple(gen(x))))  # Dynamo's tuple_iterator: StopIteration() carries nothing
    found = compare_observations(Observation(calls=(call(0, result=eager),)),
                                 Observation(calls=(call(0, result=compiled),)))
    assert [(d.where, d.aspect, d.detail) for d in found] == [
        ("call 1 (fn) result[1].returned", "type", "eager str, compiled NoneType")]
    same = compare_observations(Observation(calls=(call(0, result=_snap(finishing(1, None))),)),
                                Observation(calls=(call(0, result=_snap(iter((0,)))),)))
    assert same == []  # a generator that returns nothing ends as a tuple_iterator does


def test_the_same_iterator_twice_is_a_reference_in_the_snapshot():
    g = iter([1])
    taken = _snap((g, g))
    assert isinstance(taken.items[1], RefValue) and taken.items[1].kind == "iterator"


def test_an_iterator_not_consumed_is_seen_as_an_iterator_whatever_its_type():
    eager, compiled = snapshot((i for i in [1])), snapshot(iter((1,)))
    assert (eager.kind, eager.text) == (compiled.kind, compiled.text) == ("iterator", "")
