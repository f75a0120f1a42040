"""Generators and builtin iterators a call returns, compared by what they yield.

Dynamo materialises a generator returned from a compiled function: the compiled call
returns a `tuple_iterator` over the items where eager returns a `generator`, and
PyTorch's own tests accept that (they compare `list(gen)`). So the type of such a
value is not compared; what it yields is. Right after a recorded call returns, each
lazy iterator in its result (the result itself, an item of a tuple or list result, a
value of a dict result) is consumed, at most `MAX_CONSUMED` items so that an endless
one cannot hang the run, and the program gets back a generator that yields the same
items, then ends as the original did: it returns the same value (`StopIteration.value`,
what `return "finished"` after the yields gives), raises what consuming raised, or goes
on with whatever was left. Every run (eager, compiled, float64 reference) does the same,
and what the iterator returned is part of what is compared: a compiled call that hands
back a `tuple_iterator` where eager returns a generator with a return value loses it.

This moves the generator's own work (its side effects, its prints, the state it
reads) to the end of the call in the eager run too. That is intended: the compiled
call runs all of it during the call anyway when Dynamo materialises the generator, so
consuming it at the same point in both runs compares like with like.

User-defined iterator classes are program objects, not lazy values: they are left
alone and snapshotted attribute by attribute. The replay is a generator in every run,
whatever the call returned (a returned generator stays one, and `close()` reaches the
original); like any generator it ends once it has raised, where a `map` whose function
raised could be asked for more.
"""

from __future__ import annotations

import types
from collections.abc import Generator, Iterator
from dataclasses import dataclass
from typing import Any

MAX_CONSUMED = 1000
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement, not by C


@dataclass(frozen=True, slots=True, eq=False)
class Consumed:
    """What one lazy iterator yielded when it was consumed: the snapshot's view of it."""

    items: tuple[Any, ...]
    error: Exception | None = None  # what the next item raised instead
    unfinished: bool = False  # stopped at the bound with items left
    returned: Any = None  # the value of the StopIteration that ended it (a generator's `return` value)

    @property
    def exhausted(self) -> bool:
        """It ended by returning (so `returned` is what it returned)."""
        return self.error is None and not self.unfinished


def is_lazy_iterator(value: Any) -> bool:
    """A generator or an iterator type of the builtins (map, zip, enumerate, list_iterator, ...)."""
    if isinstance(value, types.GeneratorType):
        return True
    cls = type(value)
    return cls.__module__ == "builtins" and not cls.__flags__ & _HEAPTYPE and hasattr(cls, "__next__")


def consume(iterator: Iterator[Any], *, limit: int = MAX_CONSUMED) -> tuple[Consumed, Iterator[Any]]:
    """Take up to `limit` items; (what was taken, a generator that yields the same as `iterator` would have)."""
    items: list[Any] = []
    error: Exception | None = None
    finished = False
    returned: Any = None
    while len(items) < limit:
        try:
            items.append(next(iterator))
        except StopIteration as stop:
            finished, returned = True, stop.value
            break
        except Exception as exc:  # the program's own error: raised again where the program reaches it
            error = exc
            break
    consumed = Consumed(tuple(items), error, unfinished=error is None and not finished, returned=returned)
    return consumed, _replay(consumed, iterator)


def materialise(result: Any) -> tuple[Any, Any]:
    """(the result to hand the program, the result to snapshot) with its lazy iterators consumed.

    A tuple result is rebuilt (a namedtuple with its own type); a list or dict result is
    changed in place, so that it stays the object the program may also hold elsewhere.
    The same iterator in two places is consumed once and replaced by one replay.
    """
    done: dict[int, tuple[Consumed, Iterator[Any]]] = {}

    def one(value: Any) -> tuple[Any, Any]:
        if not is_lazy_iterator(value):
            return value, value
        if id(value) not in done:
            done[id(value)] = consume(value)
        consumed, replay = done[id(value)]
        return replay, consumed

    if is_lazy_iterator(result):
        return one(result)
    if type(result) is tuple or isinstance(result, tuple) and hasattr(type(result), "_make"):
        pairs = [one(item) for item in result]
        if not done:
            return result, result
        rebuild = tuple if type(result) is tuple else type(result)._make
        return rebuild(p[0] for p in pairs), rebuild(p[1] for p in pairs)
    if type(result) is list:
        pairs = [one(item) for item in result]
        if not done:
            return result, result
        result[:] = [p[0] for p in pairs]
        return result, [p[1] for p in pairs]
    if type(result) is dict:
        pairs = {key: one(value) for key, value in result.items()}
        if not done:
            return result, result
        result.update((key, p[0]) for key, p in pairs.items())
        return result, {key: p[1] for key, p in pairs.items()}
    return result, result


def _replay(consumed: Consumed, rest: Iterator[Any]) -> Generator[Any, None, Any]:
    yield from consumed.items
    if consumed.error is not None:
        raise consumed.error
    if consumed.exhausted:
        return consumed.returned
    return (yield from rest)  # consuming stopped at the bound: the rest, and what it returns
